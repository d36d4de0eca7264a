"""TCO files and tier economics against hand-worked numbers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from scoville.analysis.tco import economics, load_tco, tier_cost
from scoville.errors import DataError, UserError


def row(x: float, total: float) -> dict[str, Any]:
    return {
        "point_id": f"p{x:g}",
        "system": "A",
        "median_intvty": x,
        "tput_per_gpu": total,
        "output_tput_per_gpu": total / 2,
        "input_tput_per_gpu": total / 2,
    }


ROWS = [row(20, 3000), row(50, 2000), row(100, 1000)]

TCO: dict[str, Any] = {
    "schema": "scoville.tco/1",
    "tiers_tok_s_user": [50, 75, 200],
    "price_usd_per_m_output_tokens": 2.0,
    "systems": {
        "A": {
            # capex 26280 / (3 y x 8760 h) = $1.00/h; energy 1 kW x 1.25 x $0.08 = $0.10/h;
            # operations 876 / 8760 = $0.10/h; / utilisation 0.5 = $2.40/h.
            "accelerator_capex_usd": 20000,
            "system_capex_usd": 5000,
            "network_capex_usd": 1280,
            "amortisation_years": 3,
            "power_w": 1000,
            "power_price_usd_per_kwh": 0.08,
            "pue": 1.25,
            "utilisation": 0.5,
            "operations_usd_per_year": 876,
        }
    },
    "prices": {"A": [{"name": "rental", "usd_per_accelerator_hour": 3.6}]},
}


def write(tmp_path: Path, doc: dict[str, Any]) -> Path:
    p = tmp_path / "tco.yaml"
    p.write_text(yaml.safe_dump(doc))
    return p


def test_tier_cost_by_hand() -> None:
    t = tier_cost(ROWS, 50, 3.6, 1250.0, 2.0)
    assert t.status == "measured" and t.tput_per_acc == 2000
    assert t.usd_per_m_total == pytest.approx(0.5)  # 3.6 / (2000 x 3600 / 1e6 = 7.2)
    assert t.usd_per_m_output == pytest.approx(1.0)  # 3.6 / 3.6
    assert t.tokens_per_s_per_mw == pytest.approx(1.6e6)  # 2000 x 1e6 / 1250 W
    assert t.agents_per_mw == pytest.approx(16_000)  # 1000 x 1e6 / 1250 / 50 tok/s/user
    # 800,000 accelerators per GW x 1000 out tok/s x 3600 / 1e6 x $2 = $5.76 M per GW-hour;
    # cost 800,000 x $3.6 = $2.88 M; margin $2.88 M.
    assert t.revenue_usd_per_gw_hour == pytest.approx(5.76e6)
    assert t.margin_usd_per_gw_hour == pytest.approx(2.88e6)


def test_tiers_are_never_extrapolated() -> None:
    above = tier_cost(ROWS, 200, 3.6, 1250.0, None)
    assert above.status == "unreachable" and above.usd_per_m_total is None
    below = tier_cost(ROWS, 10, 3.6, 1250.0, None)
    assert below.status == "below_range" and below.bound_tput_per_acc == 3000
    mid = tier_cost(ROWS, 75, 3.6, None, None)
    assert mid.status == "interpolated" and 1000 < (mid.tput_per_acc or 0) < 2000
    assert mid.tokens_per_s_per_mw is None  # no power known for a bare price


def test_economics_from_a_tco_file(tmp_path: Path) -> None:
    tco = load_tco(write(tmp_path, TCO))
    own, rental = economics(ROWS, "a", tco)
    assert own.basis == "TCO" and own.usd_per_accelerator_hour == pytest.approx(2.4)
    assert own.tiers[0].usd_per_m_total == pytest.approx(2.4 / 7.2)
    assert rental.basis == "rental" and rental.tiers[0].usd_per_m_total == pytest.approx(0.5)
    with pytest.raises(UserError, match="states no costs for 'B'"):
        economics(ROWS, "B", tco)


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d["systems"]["A"].pop("power_w"), "systems.A.power_w"),
        (lambda d: d["systems"]["A"].update(network_capex_usd=-5), "systems.A.network_capex_usd"),
        (lambda d: d["systems"]["A"].update(pue=0.9), "systems.A.pue"),
        (lambda d: d.update(quality_pass_rate=1.5), "quality_pass_rate"),
    ],
)
def test_bad_tco_files_name_the_field(tmp_path: Path, mutate: Any, field: str) -> None:
    doc = yaml.safe_load(yaml.safe_dump(TCO))
    mutate(doc)
    with pytest.raises(DataError, match=field.replace(".", r"\.")):
        load_tco(write(tmp_path, doc))


def test_cost_takes_the_measured_pass_rate_over_a_declared_one() -> None:
    from scoville.analysis.tco import pass_rate_of

    assert pass_rate_of({"quality_pass_rate": 0.8}, 0.95) == (0.8, "measured (quality.json)")
    assert pass_rate_of({"quality_pass_rate": None}, 0.95) == (0.95, "declared (TCO file)")
    assert pass_rate_of({}, None) == (None, "not measured")
