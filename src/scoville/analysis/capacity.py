"""Capacity under a power budget: how many accelerators and racks a facility budget holds,
the tokens per second they deliver at an interactivity tier, and what limits it.

  IT W per accelerator       = measured node wall, else TDP + host + network shares
  facility W per accelerator = IT W x PUE, else the provisioned all-in figure
  by power    = floor(budget W / facility W)
  per rack    = min(accelerators per rack, floor(rack power kW / IT kW), floor(cooling kW / IT kW))
  by racks    = racks x per rack (when the site's rack count is given)
  accelerators = min(by power, by racks); tok/s = accelerators x tok/s/acc at the tier
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from scoville.analysis.frontier import frontier_of, read_at
from scoville.analysis.power import PowerProfile
from scoville.analysis.rows import Row
from scoville.errors import UserError


@dataclass(frozen=True, slots=True)
class Site:
    budget_mw: float
    accelerators_per_rack: int
    rack_power_kw: float | None = None  # power delivery per rack
    rack_cooling_kw: float | None = None  # heat a rack's cooling removes
    racks: int | None = None  # floor space: racks available (None = not a limit)

    def __post_init__(self) -> None:
        if self.budget_mw <= 0 or self.accelerators_per_rack < 1:
            raise UserError("--budget-mw must be > 0 and accelerators per rack >= 1.")
        for name in ("rack_power_kw", "rack_cooling_kw", "racks"):
            v = getattr(self, name)
            if v is not None and v <= 0:
                raise UserError(f"{name} must be > 0 when given, got {v}.")


@dataclass(frozen=True, slots=True)
class Capacity:
    system: str
    it_w_per_accelerator: float
    facility_w_per_accelerator: float
    facility_how: str
    accelerators: int
    per_rack: int
    racks: int
    limit: str  # "power", "rack space", with the per-rack cause
    per_rack_limit: str  # "rack slots", "rack power", "cooling"
    tier_tok_s_user: float
    tier_status: str
    tput_per_acc: float | None
    tokens_per_s: float | None
    users_at_tier: float | None


def it_and_facility_w(profile: PowerProfile) -> tuple[float, float, str]:
    """(IT W, facility W, how facility W was found) per accelerator from a profile."""
    extra = (profile.host_w or 0.0) + (profile.network_w or 0.0)
    if profile.node_wall_w is not None:
        it, how = profile.node_wall_w, "measured node wall"
    elif profile.tdp_w is not None:
        it, how = profile.tdp_w + extra, "TDP + host + network shares"
    else:
        raise UserError("The power profile gives neither tdp_w nor a measured node wall.")
    if profile.pue is not None:
        return it, it * profile.pue, f"{how} x PUE {profile.pue:g}"
    if profile.provisioned_all_in_w is not None:
        return it, profile.provisioned_all_in_w, "provisioned all-in (declared)"
    raise UserError("The power profile needs a pue (or provisioned_all_in_w) for facility power.")


def _per_rack(site: Site, it_w: float) -> tuple[int, str]:
    limits = [(site.accelerators_per_rack, "rack slots")]
    if site.rack_power_kw is not None:
        limits.append((math.floor(site.rack_power_kw * 1000 / it_w), "rack power"))
    if site.rack_cooling_kw is not None:
        limits.append((math.floor(site.rack_cooling_kw * 1000 / it_w), "cooling"))
    n, why = min(limits, key=lambda t: t[0])
    if n < 1:
        raise UserError(
            f"One accelerator ({it_w:,.0f} W IT) exceeds the rack's {why} limit: no rack holds it."
        )
    return n, why


def capacity(
    rows: Sequence[Row], system: str, profile: PowerProfile, site: Site, tier: float
) -> Capacity:
    """Accelerators and racks that fit the site, and tok/s at `tier` (frontier, no
    extrapolation: outside the measured range there is no throughput)."""
    it_w, fac_w, how = it_and_facility_w(profile)
    by_power = math.floor(site.budget_mw * 1e6 / fac_w)
    per_rack, rack_why = _per_rack(site, it_w)
    by_racks = site.racks * per_rack if site.racks is not None else None
    if by_racks is not None and by_racks < by_power:
        n, limit = by_racks, f"rack space ({site.racks} racks x {per_rack}, per rack: {rack_why})"
    else:
        n, limit = by_power, "power"
    reading = read_at(frontier_of(rows, "median_intvty", "tput_per_gpu"), tier)
    out = read_at(frontier_of(rows, "median_intvty", "output_tput_per_gpu"), tier).value
    tput = reading.value
    return Capacity(
        system, it_w, fac_w, how, n, per_rack, math.ceil(n / per_rack), limit, rack_why,
        tier, reading.status, tput, tput * n if tput else None,
        out * n / tier if out else None,
    )  # fmt: skip
