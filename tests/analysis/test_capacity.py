"""Capacity under a power budget, against numbers worked out by hand."""

from __future__ import annotations

from typing import Any

import pytest

from scoville.analysis.capacity import Site, capacity
from scoville.analysis.power import PowerProfile
from scoville.errors import UserError


def row(x: float, total: float) -> dict[str, Any]:
    return {"median_intvty": x, "tput_per_gpu": total, "output_tput_per_gpu": total / 10}


ROWS = [row(20, 3000), row(50, 2000), row(100, 1000)]
# IT: 700 + 200 + 100 = 1000 W per accelerator; facility: x PUE 1.25 = 1250 W.
PROFILE = PowerProfile(tdp_w=700, host_w=200, network_w=100, pue=1.25)


def test_power_limited() -> None:
    c = capacity(ROWS, "A", PROFILE, Site(1.0, 8), 50)
    assert c.facility_w_per_accelerator == 1250 and c.accelerators == 800  # 1e6 W / 1250 W
    assert c.limit == "power" and c.racks == 100 and c.per_rack == 8
    assert c.tokens_per_s == pytest.approx(800 * 2000)
    assert c.users_at_tier == pytest.approx(800 * 200 / 50)  # 3,200 streams at 50 tok/s/user


def test_cooling_and_rack_space_limit() -> None:
    # 30 kW of cooling per rack holds floor(30000 / 1000) = 30 of the 72 slots; 20 racks hold
    # 600 accelerators, fewer than the 800 the power allows.
    site = Site(1.0, 72, rack_power_kw=50, rack_cooling_kw=30, racks=20)
    c = capacity(ROWS, "A", PROFILE, site, 50)
    assert c.per_rack == 30 and c.per_rack_limit == "cooling"
    assert c.accelerators == 600 and c.limit.startswith("rack space")


def test_no_extrapolation_and_bad_sites() -> None:
    c = capacity(ROWS, "A", PROFILE, Site(1.0, 8), 500)
    assert c.tier_status == "unreachable" and c.tokens_per_s is None
    with pytest.raises(UserError, match="exceeds the rack's rack power"):
        capacity(ROWS, "A", PROFILE, Site(1.0, 8, rack_power_kw=0.5), 50)
    with pytest.raises(UserError, match="budget-mw"):
        Site(0, 8)
    with pytest.raises(UserError, match="pue"):
        capacity(ROWS, "A", PowerProfile(tdp_w=700), Site(1.0, 8), 50)
