"""Power profiles and re-expressing ROWs at one boundary (watts worked out by hand)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from scoville.analysis.profile import at_boundary, load_profile
from scoville.errors import DataError, UserError

PROFILE: dict[str, Any] = {
    "schema": "scoville.power-profile/1",
    "pue": 1.3,
    "accelerators": {
        "H200": {"tdp_w": 700, "host_w": 200, "network_w": 40, "cooling_w": 60},
        "B": {"tdp_w": 1000, "host_w": 100, "network_w": 50},
    },
}


def write(tmp_path: Path, doc: dict[str, Any]) -> Path:
    p = tmp_path / "power.yaml"
    p.write_text(yaml.safe_dump(doc))
    return p


def row(system: str, **kw: Any) -> dict[str, Any]:
    return {"system": system, "tput_per_gpu": 1000.0, "framework": "vllm", **kw}


def test_rows_at_provisioned_all_in(tmp_path: Path) -> None:
    p = write(tmp_path, PROFILE)
    h200, b = at_boundary([row("H200"), row("B")], "provisioned-all-in", p)
    # H200: 700 + 200 + 40 + 60 (cooling share) = 1000 W -> 1000 tok/s/kW.
    assert h200["power_w_per_accelerator"] == 1000 and h200["tput_per_kw"] == pytest.approx(1000)
    # B: no cooling share, so (1000 + 100 + 50) x PUE 1.3 = 1495 W.
    assert b["power_w_per_accelerator"] == pytest.approx(1495)
    assert b["power_boundary"] == "provisioned-all-in"


def test_measured_and_facility_boundaries(tmp_path: Path) -> None:
    p = write(tmp_path, PROFILE)
    measured = row("H200", measured_power_w_per_accelerator=500.0,
                   measured_power_boundary="node-wall")  # fmt: skip
    (wall,) = at_boundary([measured], "node-wall", p)
    assert wall["tput_per_kw"] == pytest.approx(2000)  # 1000 tok/s / 0.5 kW
    (fac,) = at_boundary([measured], "facility", p)
    assert fac["power_w_per_accelerator"] == pytest.approx(650)  # 500 W x PUE 1.3


def test_rows_that_cannot_be_expressed_are_refused(tmp_path: Path) -> None:
    p = write(tmp_path, PROFILE)
    twin = row("H200", framework="scoville-twin")
    with pytest.raises(UserError, match="twin run"):
        at_boundary([twin], "board-measured", p)
    with pytest.raises(UserError, match="nothing states its power at the board-measured"):
        at_boundary([row("H200")], "board-measured", p)
    with pytest.raises(UserError, match="not one of"):
        at_boundary([row("H200")], "wall", p)


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d.update(pue=0.9), "pue"),
        (lambda d: d["accelerators"]["H200"].update(host_w=-1), r"accelerators\.H200\.host_w"),
        (lambda d: d.pop("accelerators"), "accelerators"),
    ],
)
def test_bad_profiles_name_the_field(tmp_path: Path, mutate: Any, field: str) -> None:
    doc = yaml.safe_load(yaml.safe_dump(PROFILE))
    mutate(doc)
    with pytest.raises(DataError, match=field):
        load_profile(write(tmp_path, doc))
