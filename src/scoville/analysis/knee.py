"""The knee of a load sweep: the last load level before throughput stops rising while latency
climbs, per serving configuration. Pure over point ROWs.

Between consecutive levels (sorted by offered load: concurrency or request rate) the scaling
efficiency is e = (y_i / y_{i-1} - 1) / (L_i / L_{i-1} - 1): 1 when throughput grows in
proportion to load, 0 when it is flat. The knee is the level before the first step with
e < `flat` (default 0.25) and a latency rise of at least `climb` (default 10 %): past it, more
load buys queueing, not tokens. No such step: the sweep never reached its knee.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scoville.analysis.rows import GroupKey, Row, group_rows, num


@dataclass(frozen=True, slots=True)
class Knee:
    group: GroupKey
    point_id: str | None  # the knee point; None when the sweep never reached one
    level: float | None
    throughput: float | None
    latency: float | None
    efficiency_after: float | None  # scaling efficiency of the step past the knee
    latency_rise_after: float | None  # relative latency rise of that step
    n_levels: int


def _load(row: Row) -> float | None:
    return num(row, "conc") or num(row, "level") or num(row, "request_rate")


def knee_of(
    rows: Sequence[Row],
    y_metric: str = "tput_per_gpu",
    latency_metric: str = "median_e2e",
    flat: float = 0.25,
    climb: float = 0.10,
) -> Knee:
    """The knee of one configuration's rows (invalid points and points without numbers left
    out; one point per load level, the first seen)."""
    group = GroupKey.of(rows[0]) if rows else GroupKey("", "", "", "", "", "")
    pts: dict[float, tuple[str, float, float]] = {}
    for r in rows:
        load, y, lat = _load(r), num(r, y_metric), num(r, latency_metric)
        if r.get("valid") is False or load is None or y is None or lat is None:
            continue
        pts.setdefault(load, (str(r.get("point_id")), y, lat))
    levels = sorted(pts)
    for prev, cur in itertools.pairwise(levels):
        (pid, y0, lat0), (_, y1, lat1) = pts[prev], pts[cur]
        if y0 <= 0 or lat0 <= 0:
            continue
        eff = (y1 / y0 - 1.0) / (cur / prev - 1.0)
        rise = lat1 / lat0 - 1.0
        if eff < flat and rise >= climb:
            return Knee(group, pid, prev, y0, lat0, eff, rise, len(levels))
    return Knee(group, None, None, None, None, None, None, len(levels))


def knees(rows: Iterable[Row], **kw: float | str) -> list[Knee]:
    """One knee per serving configuration (`GroupKey`), in first-seen order."""
    return [knee_of(g, **kw) for g in group_rows(rows).values()]  # type: ignore[arg-type]
