"""A metric's trend over stored runs: each run's frontier read at one interactivity (or one
point's value), in run order, with change points marked. Runs are split into series of like
runs (`comparable.unlike_runs`: ISL, OSL, range ratio, precision class, ...). Pure over ROWs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scoville.analysis.changepoint import change_points
from scoville.analysis.comparable import (
    Conditions,
    conditions_of_rows,
    precision_class,
    shape_label,
    unlike_runs,
)
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


@dataclass(frozen=True, slots=True)
class ShapeFilter:
    """The workload shape a user asks `history` for; None: any."""

    isl_tokens: int | None = None
    osl_tokens: int | None = None
    range_ratio: float | None = None
    precision: str | None = None

    def misses(self, c: Conditions) -> list[str]:
        """Why a run measured under `c` is not the shape asked for (empty: it is)."""
        out = []
        if self.isl_tokens is not None and c.isl_tokens != self.isl_tokens:
            out.append(f"ISL {c.isl_tokens}, not {self.isl_tokens}")
        if self.osl_tokens is not None and c.osl_tokens != self.osl_tokens:
            out.append(f"OSL {c.osl_tokens}, not {self.osl_tokens}")
        rr = self.range_ratio
        if rr is not None and (c.range_ratio is None or abs(c.range_ratio - rr) > 1e-9):
            out.append(f"range ratio {c.range_ratio}, not {rr:g}")
        want = self.precision
        if want is not None and precision_class(c.precision or "?") != precision_class(want):
            out.append(f"precision {c.precision}, not {want}")
        return out


@dataclass(frozen=True, slots=True)
class Series:
    """The trend of one shape. `apart`: why its runs are not like the first series' runs
    (empty for the first series)."""

    shape: str
    points: list[HistoryPoint]
    apart: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LeftOut:
    """A run of another shape than the one asked for, and why."""

    run_id: str
    shape: str
    reasons: tuple[str, ...]


def split_like(runs: Sequence[RunRows], per_kw: bool = False) -> list[list[RunRows]]:
    """Runs in series of like runs, in order of each series' first run: a run joins the
    first series whose first run it is like for like with, else starts its own."""
    groups: list[list[RunRows]] = []
    for run in runs:
        home = next((g for g in groups if not unlike_runs(run.rows, g[0].rows, per_kw)), None)
        if home is None:
            groups.append([run])
        else:
            home.append(run)
    return groups


def histories(
    runs: Sequence[RunRows],
    metric: str,
    at_x: float | None = None,
    point_id: str | None = None,
    shape: ShapeFilter | None = None,
    penalty: float | None = None,
) -> tuple[list[Series], list[LeftOut]]:
    """One trend (with its own change points) per shape among the runs of `shape`, and the
    runs left out for not being of `shape`. A per-kW metric also splits by power boundary."""
    shape = shape or ShapeFilter()
    kept: list[RunRows] = []
    left: list[LeftOut] = []
    for run in runs:
        cond = conditions_of_rows(run.rows)
        miss = shape.misses(cond)
        if miss:
            left.append(LeftOut(run.run_id, shape_label(cond), tuple(miss)))
        else:
            kept.append(run)
    groups = split_like(kept, per_kw=metric.endswith("_per_kw"))
    series = [
        Series(
            shape_label(conditions_of_rows(g[0].rows)),
            history(g, metric, at_x, point_id, penalty),
            tuple(unlike_runs(g[0].rows, groups[0][0].rows, metric.endswith("_per_kw"))),
        )
        for g in groups
    ]
    return series, left
