"""The silicon cost model against examples worked by hand (values written out, not re-derived)."""

from __future__ import annotations

import pytest

from scoville.analysis.silicon import (
    SiliconInputs,
    cost_of,
    die_yield,
    gross_dies_per_wafer,
    load_silicon_catalogue,
    tornado,
)
from scoville.errors import UserError


def test_dies_per_wafer_by_hand() -> None:
    # 300 mm, no edge, 100 mm2: pi 90000 / 400 = 706.858; pi 300 / sqrt(200) = 66.643 -> 640.
    assert gross_dies_per_wafer(100, 300) == 640
    # 3 mm edge (294 mm usable), 814 mm2 (GH100): 83.398 - 22.891 = 60.507 -> 60.
    assert gross_dies_per_wafer(814, 300, 3) == 60
    # A 800 mm2 die on 300 mm, no edge: 88.357 - 23.562 = 64.795 -> 64.
    assert gross_dies_per_wafer(800, 300) == 64


def test_yield_models_at_d0_a_one_half() -> None:
    # D0 = 0.1 /cm2 on 500 mm2 = 5 cm2: D0 x A = 0.5.
    # Poisson e^-0.5 = 0.6065307; Murphy ((1 - 0.6065307) / 0.5)^2 = 0.7869387^2 = 0.6192725;
    # negative binomial, alpha 3: (1 + 0.5/3)^-3 = (7/6)^-3 = 216/343 = 0.6297376.
    assert die_yield("poisson", 0.1, 500) == pytest.approx(0.6065307, abs=1e-7)
    assert die_yield("murphy", 0.1, 500) == pytest.approx(0.6192725, abs=1e-7)
    assert die_yield("negative-binomial", 0.1, 500, alpha=3) == pytest.approx(216 / 343)
    assert die_yield("murphy", 0.0, 500) == 1.0


HAND = SiliconInputs(
    wafer_usd=10_000, die_area_mm2=100, dies=2, wafer_diameter_mm=300, edge_exclusion_mm=0,
    defect_density_per_cm2=0.0, hbm_gb=10, hbm_usd_per_gb=10, packaging_usd=50,
    packaging_yield=0.5, test_usd=10, board_usd=20, system_share_usd=7.5,
    accelerators_per_system=4, nre_usd=1000, volume=10,
)  # fmt: skip


def test_cost_chain_by_hand() -> None:
    c = cost_of("hand", HAND)
    assert c.usd_per_good_die == pytest.approx(15.625)  # 10000 / 640 good dies
    assert c.usd_per_packaged == pytest.approx(362.5)  # (2 x 15.625 + 100 + 50) / 0.5
    assert c.usd_nre_per_unit == pytest.approx(100.0)  # 1000 / 10
    assert c.usd_per_good_accelerator == pytest.approx(492.5)  # 362.5 + 10 + 20 + 100
    assert c.usd_per_system == pytest.approx(2000.0)  # 4 x (492.5 + 7.5)


def test_tornado_ranks_the_inputs_that_move_cost_most() -> None:
    # +-20 %: packaging yield 0.4..0.6 -> 181.25/0.4 - 181.25/0.6 = 151.04; HBM $8..12/GB ->
    # 80; volume 8..12 -> 1000/8 - 1000/12 = 41.67; NRE and packaging $ move 40 each.
    bars = tornado("hand", HAND, 0.2)
    assert [b.field for b in bars] == ["packaging_yield", "hbm_usd_per_gb", "volume"]
    assert bars[0].swing_usd == pytest.approx(151.0417, abs=1e-3)
    assert bars[2].swing_usd == pytest.approx(41.6667, abs=1e-3)


def test_catalogue_chips_carry_sources_and_assumptions() -> None:
    cat = load_silicon_catalogue()
    assert {"H100", "H200", "B200", "GB200", "Jalapeno-B0"} <= set(cat.chips())
    x, notes = cat.inputs("h200")
    assert x.die_area_mm2 == 814 and x.hbm_gb == 141 and x.wafer_usd == 18_000
    assert any(n.startswith("assumed defect_density_per_cm2") for n in notes)
    more = cat.inputs("H200", {"defect_density_per_cm2": "0.2"})[0]
    assert cost_of("H200", more).usd_per_good_die > cost_of("H200", x).usd_per_good_die
    with pytest.raises(UserError, match="not an input"):
        cat.inputs("H200", {"colour": "red"})
    with pytest.raises(UserError, match="must be >= 0"):
        cat.inputs("H200", {"wafer_usd": "-1"})
    with pytest.raises(UserError, match="No chip"):
        cat.inputs("Z9000")
