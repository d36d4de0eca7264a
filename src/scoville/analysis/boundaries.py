"""Per-kW figures at every power boundary a run can be expressed at, each naming its boundary.

With a power profile, a run's ROWs gain for each boundary B that the profile, the run's own
telemetry or the twin's estimate determines: `power_w_B` (W per accelerator), `power_how_B`
(where the watts come from; it starts "estimate:" for the twin's), and `tput_per_kw_B`,
`output_tput_per_kw_B`, `input_tput_per_kw_B`; B is the boundary with '_' for '-'
(`tput_per_kw_facility`, `tput_per_kw_provisioned_all_in`).

The twin's estimate (a model, never a measurement): chip draw = idle + (TDP - idle) x active
fraction (`scoville.twin.power`); idle is the profile's `idle_w`, else 20 % of TDP (assumed).
Node = chip draw + host + network shares; facility = node x PUE. A twin run has no measured
board or node power: those boundaries are refused, never estimated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from scoville.analysis.power import BOUNDARIES, PACKAGE_TDP_W, PER_KW_OF, PowerBasis, PowerProfile
from scoville.analysis.rows import Row, num
from scoville.metrics.compute import per_kw as tok_per_kw
from scoville.metrics.row import SummaryRow
from scoville.spec.model import PowerBoundary
from scoville.spec.power import AcceleratorPower, PowerProfileFile

MEASURED: tuple[PowerBoundary, ...] = ("board-measured", "node-wall")
# Assumed: a serving accelerator with a model loaded idles near a fifth of its TDP (an H100
# SXM reads roughly 70-140 W of 700 W between requests with clocks held up by the engine).
IDLE_FRACTION_OF_TDP = 0.2
ALIASES: dict[str, PowerBoundary] = {
    "tdp": "package-tdp",
    "package": "package-tdp",
    "all-in": "provisioned-all-in",
    "provisioned": "provisioned-all-in",
    "board": "board-measured",
    "measured-board": "board-measured",
    "node": "node-wall",
    "measured-node": "node-wall",
}


@dataclass(frozen=True, slots=True)
class BoundaryWatts:
    """W per accelerator at one boundary, where they come from, and whether they are modelled."""

    boundary: PowerBoundary
    w_per_accelerator: float
    how: str
    estimate: bool = False

    def basis(self) -> PowerBasis:
        return PowerBasis(self.boundary, self.w_per_accelerator, self.how, self.estimate)


def boundary_name(text: str) -> PowerBoundary | None:
    """A boundary as a user may type it ('facility', 'measured_board', 'node'), or None."""
    key = text.strip().lower().replace("_", "-").replace(" ", "-")
    if key in BOUNDARIES:
        return key
    return ALIASES.get(key)


def column(name: str, boundary: str) -> str:
    """`tput_per_kw` at `facility` -> `tput_per_kw_facility`."""
    return f"{name}_{boundary.replace('-', '_')}"


def power_of(acc: AcceleratorPower, default_pue: float | None) -> PowerProfile:
    """A profile entry as the boundary arithmetic reads it (all-in from its parts when the
    cooling share is stated: TDP + host + network + cooling)."""
    pue = acc.pue if acc.pue is not None else default_pue
    all_in = acc.provisioned_all_in_w
    if all_in is None and acc.cooling_w is not None and acc.tdp_w is not None:
        all_in = acc.tdp_w + (acc.host_w or 0) + (acc.network_w or 0) + acc.cooling_w
    return PowerProfile(
        tdp_w=acc.tdp_w,
        measured_board_w=acc.measured_board_w,
        node_wall_w=acc.measured_node_w,
        host_w=acc.host_w,
        network_w=acc.network_w,
        pue=pue,
        provisioned_all_in_w=all_in,
        source=acc.source,
    )


def is_modelled(row: Row) -> bool:
    """A twin (modelled) ROW: no measured power exists for it."""
    return str(row.get("framework", "")).lower().startswith("scoville-twin") or bool(
        row.get("modelled")
    )


def twin_draw_w(tdp_w: float, active_fraction: float, idle_w: float | None) -> tuple[float, float]:
    """(estimated chip draw, idle floor) in W: idle + (TDP - idle) x active fraction."""
    idle = IDLE_FRACTION_OF_TDP * tdp_w if idle_w is None else min(idle_w, tdp_w)
    return idle + (tdp_w - idle) * active_fraction, idle


def _tdp_of(row: Row, prof: PowerProfile | None) -> tuple[float | None, str]:
    if prof is not None and prof.tdp_w is not None:
        return prof.tdp_w, "declared package TDP (power profile)"
    if (w := num(row, "twin_tdp_w")) is not None:
        return w, "package TDP from the twin's catalogue"
    if (
        row.get("power_boundary") == "package-tdp"
        and (w := num(row, "power_w_per_accelerator")) is not None
    ):
        return w, "declared package TDP (the run's spec)"
    system = str(row.get("system", "")).lower().split()
    for name, (w, src) in PACKAGE_TDP_W.items():
        if system and name.lower().split()[0] == system[0]:
            return w, src
    return None, ""


def _twin_facility(
    row: Row, prof: PowerProfile, tdp_w: float, idle_w: float | None
) -> BoundaryWatts | None:
    """Facility W of a twin ROW: (estimated chip draw + host + network) x PUE, or None."""
    active = num(row, "twin_active_fraction")
    if active is None or prof.pue is None or prof.host_w is None:
        return None
    draw, idle = twin_draw_w(tdp_w, active, idle_w)
    node = draw + prof.host_w + (prof.network_w or 0.0)
    how = (
        f"estimate: twin chip draw {draw:.0f} W (idle {idle:.0f} W + (TDP {tdp_w:g} - idle) x "
        f"active {active:.2f}) + host {prof.host_w:g} + network {prof.network_w or 0:g} W, "
        f"x PUE {prof.pue:g}"
    )
    return BoundaryWatts("facility", node * prof.pue, how, estimate=True)


def watts_at(
    row: Row, boundary: PowerBoundary, profile: PowerProfileFile | None
) -> BoundaryWatts | None:
    """W per accelerator of `row` at `boundary` from the profile, the row's own measurements
    and (for a twin row) the twin's estimate; None when they do not determine it."""
    entry = profile.entry(str(row.get("system", ""))) if profile is not None else None
    prof = power_of(entry, profile.pue if profile else None) if entry else PowerProfile()
    tdp_w, tdp_how = _tdp_of(row, prof)
    if boundary == "package-tdp":
        return BoundaryWatts(boundary, tdp_w, tdp_how) if tdp_w is not None else None
    if is_modelled(row):
        if boundary == "facility":
            idle = entry.idle_w if entry else None
            return _twin_facility(row, prof, tdp_w, idle) if tdp_w is not None else None
        if boundary in MEASURED:
            return None
    measured = num(row, "measured_power_w_per_accelerator")
    where = row.get("measured_power_boundary")
    if measured is not None and where == "board-measured":
        prof = replace(prof, measured_board_w=measured, source="measured in the run")
    elif measured is not None and where == "node-wall":
        prof = replace(prof, node_wall_w=measured, source="measured in the run")
    basis = prof.basis(boundary)
    if basis is None:
        return None
    how = basis.source
    derived = entry is not None and entry.provisioned_all_in_w is None and entry.cooling_w
    if boundary == "provisioned-all-in" and derived:  # power_of summed the parts
        how = "TDP + host + network + cooling shares" + (f"; {prof.source}" if prof.source else "")
    return BoundaryWatts(boundary, basis.w_per_accelerator, how)


def estimate_columns(row: Row, profile: PowerProfileFile | None) -> dict[str, Any]:
    """A twin ROW's estimated chip draw (`power_w_estimate`) and its idle floor
    (`power_idle_w_estimate`), W per accelerator; nothing for a measured ROW."""
    active = num(row, "twin_active_fraction")
    if not is_modelled(row) or active is None:
        return {}
    entry = profile.entry(str(row.get("system", ""))) if profile is not None else None
    tdp_w, _ = _tdp_of(row, power_of(entry, None) if entry else None)
    if tdp_w is None:
        return {}
    draw, idle = twin_draw_w(tdp_w, active, entry.idle_w if entry else None)
    return {"power_w_estimate": draw, "power_idle_w_estimate": idle}


def boundary_columns(row: Row, profile: PowerProfileFile | None) -> dict[str, Any]:
    """The power-boundary columns of one ROW (see the module docstring); without a profile,
    only a twin ROW's estimated draw."""
    out: dict[str, Any] = estimate_columns(row, profile)
    if profile is None:
        return out
    for b in BOUNDARIES:
        got = watts_at(row, b, profile)
        if got is None:
            continue
        out[column("power_w", b)] = got.w_per_accelerator
        out[column("power_how", b)] = got.how
        for acc, kw in PER_KW_OF:
            v = num(row, acc)
            out[column(kw, b)] = tok_per_kw(v, got.w_per_accelerator) if v is not None else None
    return out


def with_boundary_columns(
    rows: Sequence[SummaryRow], profile: PowerProfileFile | None, notes: list[str]
) -> list[SummaryRow]:
    """Each row with its power-boundary columns; a profile that does not name the run's
    accelerator is noted."""
    out = []
    for r in rows:
        d = r.to_dict()
        if profile is not None and profile.entry(str(d.get("system", ""))) is None:
            names = ", ".join(profile.accelerators)
            note = f"power profile: no entry for {d.get('system')!r} (it has {names})"
            if note not in notes:
                notes.append(note)
        out.append(r.with_columns(boundary_columns(d, profile)))
    return out


def recorded_at(row: Row, boundary: PowerBoundary) -> BoundaryWatts | None:
    """The watts a run recorded at `boundary` in its own columns (its power profile)."""
    w = num(row, column("power_w", boundary))
    if w is None or w <= 0:
        return None
    how = str(row.get(column("power_how", boundary)) or "recorded in the run")
    return BoundaryWatts(boundary, w, how, estimate=how.startswith("estimate"))
