"""Per-kW at each power boundary: the columns a run's rows gain from its power profile, the
twin's facility estimate, and the refusals (watts worked out by hand in the comments)."""

from __future__ import annotations

from typing import Any

import pytest

from scoville.analysis.boundaries import boundary_columns, boundary_name
from scoville.analysis.profile import basis_for_row
from scoville.errors import UserError
from scoville.spec.power import PowerProfileFile

PROFILE = PowerProfileFile.model_validate(
    {
        "pue": 1.3,
        "accelerators": {
            "GB200": {"tdp_w": 1200, "host_w": 250, "network_w": 60, "pue": 1.15},
            "H200": {"tdp_w": 700, "host_w": 200, "network_w": 40, "cooling_w": 60},
        },
    }
)


def twin_row(**kw: Any) -> dict[str, Any]:
    return {"system": "GB200", "framework": "scoville-twin", "tput_per_gpu": 5000.0,
            "output_tput_per_gpu": 1000.0, "input_tput_per_gpu": 4000.0,
            "twin_active_fraction": 0.5, "twin_tdp_w": 1200.0, **kw}  # fmt: skip


def test_twin_facility_estimate_worked_by_hand() -> None:
    cols = boundary_columns(twin_row(), PROFILE)
    # chip draw = idle 240 (20 % of 1200) + (1200 - 240) x 0.5 = 720 W;
    # node = 720 + host 250 + network 60 = 1030 W; facility = 1030 x PUE 1.15 = 1184.5 W.
    assert cols["power_w_estimate"] == pytest.approx(720.0)
    assert cols["power_w_facility"] == pytest.approx(1184.5)
    assert cols["power_how_facility"].startswith("estimate:")
    # 5000 tok/s per accelerator / 1.1845 kW = 4221.19 tok/s/kW; output 1000 / 1.1845 = 844.24.
    assert cols["tput_per_kw_facility"] == pytest.approx(4221.19, abs=0.01)
    assert cols["output_tput_per_kw_facility"] == pytest.approx(844.24, abs=0.01)
    # Package TDP 1200 W: 5000 / 1.2 = 4166.67 tok/s/kW, declared (no estimate).
    assert cols["tput_per_kw_package_tdp"] == pytest.approx(4166.67, abs=0.01)
    assert not cols["power_how_package_tdp"].startswith("estimate")
    # No measured power for a twin: those boundaries are never written.
    assert "power_w_board_measured" not in cols and "power_w_node_wall" not in cols


def test_measured_board_power_converts_to_facility() -> None:
    row = {"system": "H200", "framework": "vllm", "tput_per_gpu": 1000.0,
           "measured_power_w_per_accelerator": 550.0,
           "measured_power_boundary": "board-measured"}  # fmt: skip
    cols = boundary_columns(row, PROFILE)
    # node = 550 measured + 200 host + 40 network = 790 W; facility = 790 x 1.3 = 1027 W.
    assert cols["power_w_node_wall"] == pytest.approx(790.0)
    assert cols["power_w_facility"] == pytest.approx(1027.0)
    assert cols["tput_per_kw_facility"] == pytest.approx(973.71, abs=0.01)  # 1000 / 1.027
    # all-in from the parts: 700 + 200 + 40 + 60 = 1000 W -> 1000 tok/s/kW.
    assert cols["tput_per_kw_provisioned_all_in"] == pytest.approx(1000.0)
    assert cols["power_how_provisioned_all_in"].startswith("TDP + host + network + cooling")


def test_a_twin_row_is_refused_at_measured_boundaries_by_any_spelling() -> None:
    for spelling in ("measured_board", "board-measured", "node", "measured node"):
        named = boundary_name(spelling)
        assert named is not None
        with pytest.raises(UserError, match="twin run"):
            basis_for_row(twin_row(), named, PROFILE)
    assert boundary_name("wall") is None


def test_compare_reads_the_boundary_a_run_recorded() -> None:
    """Without a profile on the command line, a run's own columns (from the profile its spec
    recorded) give the basis, still labelled an estimate."""
    row = {**twin_row(twin_active_fraction=None), **boundary_columns(twin_row(), PROFILE)}
    basis = basis_for_row(row, "facility", None)
    assert basis.w_per_accelerator == pytest.approx(1184.5) and basis.estimate
    assert basis.label() == "facility 1184.5 W (estimate)"
