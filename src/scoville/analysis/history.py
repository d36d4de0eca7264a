"""A metric's trend over stored runs: each run's frontier read at one interactivity (or one
point's value), in run order, with change points marked. Pure over point ROWs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scoville.analysis.changepoint import change_points
from scoville.analysis.frontier import INTERACTIVITY, frontier_of, read_at
from scoville.analysis.rows import Row, num


@dataclass(frozen=True, slots=True)
class RunRows:
    run_id: str
    run_utc: str
    rows: Sequence[Row]


@dataclass(frozen=True, slots=True)
class HistoryPoint:
    """One run's value. `status` is the frontier reading's status (or "measured"/"missing"
    for a point read); `bound` is the nearest measured value when the target lies below the
    run's measured range; `change` marks the first run of a new level."""

    run_id: str
    run_utc: str
    value: float | None
    status: str
    bound: float | None = None
    change: bool = False


def value_of(
    rows: Sequence[Row], metric: str, at_x: float | None, point_id: str | None
) -> tuple[float | None, str, float | None]:
    """(value, status, bound) of one run: the frontier of `metric` over median interactivity
    read at `at_x` (monotone interpolation, never extrapolated) or the value at `point_id`."""
    if point_id is not None:
        row = next((r for r in rows if str(r.get("point_id")) == point_id), None)
        if row is None or row.get("valid") is False:
            return None, "missing" if row is None else "invalid", None
        v = num(row, metric)
        return v, "measured" if v is not None else "missing", None
    if at_x is None:
        raise ValueError("give an interactivity or a point id")
    reading = read_at(frontier_of(rows, INTERACTIVITY, metric), at_x)
    return reading.value, reading.status, reading.bound


def history(
    runs: Sequence[RunRows],
    metric: str,
    at_x: float | None = None,
    point_id: str | None = None,
    penalty: float | None = None,
) -> list[HistoryPoint]:
    """The trend in run order; change points found over the runs that have a value."""
    got = [(r, *value_of(r.rows, metric, at_x, point_id)) for r in runs]
    defined = [i for i, g in enumerate(got) if g[1] is not None]
    series = [float(got[i][1]) for i in defined]  # type: ignore[arg-type]
    starts = {defined[k] for k in change_points(series, penalty=penalty)}
    return [
        HistoryPoint(r.run_id, r.run_utc, v, status, bound, i in starts)
        for i, (r, v, status, bound) in enumerate(got)
    ]
