"""How hard the twin's accelerators worked during a point: the active fraction its power
estimate is built on (`scoville.analysis.boundaries.twin_draw_w` turns it into watts).

Active fraction = sum over replicas of (compute-bound + memory-bound step seconds) x the
replica's accelerators / (span seconds x all accelerators). Communication, scheduling overhead
and the gaps between steps count as idle: the chip waits on a link, the host or a request.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from scoville.twin.engine import Replica


def active_fraction(busy: Iterable[tuple[float, int]], span_s: float) -> float:
    """`busy` holds (compute + memory seconds, accelerators) per replica; a replica steps one
    batch at a time, so the fraction lies in [0, 1] (clamped against rounding)."""
    pairs = list(busy)
    gpu_s = span_s * sum(g for _, g in pairs)
    if gpu_s <= 0:
        return 0.0
    return min(1.0, sum(s * g for s, g in pairs) / gpu_s)


def point_power_extras(
    replicas: Sequence[Replica], span_s: float, tdp_w: float | None
) -> dict[str, Any]:
    """The twin's power facts of a point from its replicas' whole-point step totals."""
    busy = ((r.stats.compute_s + r.stats.memory_s, r.model.par.gpus) for r in replicas)
    return {"twin_active_fraction": active_fraction(busy, span_s), "twin_tdp_w": tdp_w}


def window_power_extras(
    replicas: Sequence[Replica], start_ns: int, end_ns: int, tdp_w: float | None
) -> dict[str, Any]:
    """The same from the step log, counting steps that ended inside [start_ns, end_ns]."""
    busy = (
        (
            sum(c + m for t_end, c, m, *_ in r.step_log or () if start_ns <= t_end <= end_ns),
            r.model.par.gpus,
        )
        for r in replicas
    )
    fraction = active_fraction(busy, (end_ns - start_ns) / 1e9)
    return {"twin_active_fraction": fraction, "twin_tdp_w": tdp_w}
