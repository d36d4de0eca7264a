"""Pareto frontiers over point ROWs, read at a chosen x by monotone interpolation.

The throughput/interactivity frontier (higher is better on both axes) and the
throughput/E2E-latency frontier (lower latency is better) are built per serving configuration
(`GroupKey`). Reading a frontier between its measured points uses `MonotoneCubic`; outside the
measured range the answer is explicit ("unreachable" above the best x reached, "below_range"
below the first point, with the first point as a bound), never an extrapolation.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from scoville.analysis.monotone import MonotoneCubic
from scoville.analysis.rows import GroupKey, Row, group_rows, num

Better = Literal["higher", "lower"]
ReadStatus = Literal["measured", "interpolated", "unreachable", "below_range", "empty"]

# Metric names a frontier is usually drawn on (ROW keys).
INTERACTIVITY = "median_intvty"
E2E = "median_e2e"
TPUT_PER_GPU = "tput_per_gpu"
TPUT_PER_KW = "tput_per_kw"


@dataclass(frozen=True, slots=True)
class FrontierPoint:
    x: float
    y: float
    point_id: str


@dataclass(frozen=True, slots=True)
class Frontier:
    """Non-dominated points sorted by x ascending (x strictly increasing along the frontier)."""

    group: GroupKey
    x_metric: str
    y_metric: str
    x_better: Better
    points: tuple[FrontierPoint, ...]

    @property
    def xs(self) -> tuple[float, ...]:
        return tuple(p.x for p in self.points)

    @property
    def ys(self) -> tuple[float, ...]:
        return tuple(p.y for p in self.points)

    def curve(self) -> MonotoneCubic:
        return MonotoneCubic.fit(self.xs, self.ys)

    def best_x(self) -> float | None:
        """The best x reached (max interactivity, or min latency)."""
        if not self.points:
            return None
        return self.points[-1].x if self.x_better == "higher" else self.points[0].x

    def best_y(self) -> float | None:
        return max(self.ys) if self.points else None


@dataclass(frozen=True, slots=True)
class Reading:
    """A frontier read at x. `value` is None unless status is measured/interpolated;
    `bound` carries the nearest measured y when x lies outside the measured range."""

    x: float
    status: ReadStatus
    value: float | None
    bound: float | None = None

    @property
    def ok(self) -> bool:
        return self.value is not None


def pareto(
    candidates: Iterable[FrontierPoint], x_better: Better = "higher"
) -> tuple[FrontierPoint, ...]:
    """The non-dominated subset (y: higher is better), sorted by x ascending.

    A point is dominated when another is at least as good on both axes and better on one.
    Exact duplicates keep the first seen.
    """
    sign = 1.0 if x_better == "higher" else -1.0
    # Best x first; among equal x the highest y first; then keep strictly rising y.
    ordered = sorted(candidates, key=lambda p: (-sign * p.x, -p.y))
    kept: list[FrontierPoint] = []
    best_y = float("-inf")
    for p in ordered:
        if p.y > best_y:
            kept.append(p)
            best_y = p.y
    return tuple(sorted(kept, key=lambda p: p.x))


def frontier_of(
    rows: Sequence[Row],
    x_metric: str = INTERACTIVITY,
    y_metric: str = TPUT_PER_GPU,
    x_better: Better = "higher",
    include_invalid: bool = False,
) -> Frontier:
    """The frontier of one group's rows (group taken from the first row)."""
    group = GroupKey.of(rows[0]) if rows else GroupKey("", "", "", "", "", "")
    cands = []
    for i, row in enumerate(rows):
        if not include_invalid and row.get("valid") is False:
            continue
        x, y = num(row, x_metric), num(row, y_metric)
        if x is None or y is None:
            continue
        cands.append(FrontierPoint(x, y, str(row.get("point_id", i))))
    return Frontier(group, x_metric, y_metric, x_better, pareto(cands, x_better))


def frontiers(
    rows: Iterable[Row],
    x_metric: str = INTERACTIVITY,
    y_metric: str = TPUT_PER_GPU,
    x_better: Better = "higher",
    include_invalid: bool = False,
) -> dict[GroupKey, Frontier]:
    """One frontier per serving configuration (`GroupKey`)."""
    return {
        key: frontier_of(group, x_metric, y_metric, x_better, include_invalid)
        for key, group in group_rows(rows).items()
    }


def read_at(frontier: Frontier, x: float) -> Reading:
    """The frontier's y at x by monotone interpolation between measured points.

    Past the best x reached: "unreachable" (the configuration never got there). On the other
    side of the measured range: "below_range" with `bound` = the y of the nearest measured
    point, a conservative bound, because a point that reached a better x also satisfies the
    looser target (for "higher is better" x: at least that throughput).
    """
    pts = frontier.points
    if not pts:
        return Reading(x, "empty", None)
    lo, hi = pts[0], pts[-1]
    if x < lo.x:
        if frontier.x_better == "higher":
            return Reading(x, "below_range", None, bound=lo.y)
        return Reading(x, "unreachable", None)
    if x > hi.x:
        if frontier.x_better == "higher":
            return Reading(x, "unreachable", None)
        return Reading(x, "below_range", None, bound=hi.y)
    for p in pts:
        if p.x == x:
            return Reading(x, "measured", p.y)
    return Reading(x, "interpolated", frontier.curve()(x))


@dataclass(frozen=True, slots=True)
class Area:
    """Area under a frontier over [x_lo, x_hi], in (y unit) x (x unit); None if not covered."""

    x_lo: float
    x_hi: float
    value: float | None
    covered: bool


def area_under(frontier: Frontier, x_lo: float, x_hi: float) -> Area:
    """Integral of the interpolated frontier over a stated x range.

    The range must lie inside the measured range (no extrapolation); otherwise `covered` is
    False and `value` None. Comparing areas over the same range compares whole curves, not one
    operating point.
    """
    if x_hi < x_lo:
        raise ValueError("x_hi must be >= x_lo")
    if not frontier.points:
        return Area(x_lo, x_hi, None, False)
    curve = frontier.curve()
    if not (curve.covers(x_lo) and curve.covers(x_hi)):
        return Area(x_lo, x_hi, None, False)
    return Area(x_lo, x_hi, curve.integral(x_lo, x_hi), True)


def frontier_payload(
    rows: Iterable[Row],
    x_metric: str = INTERACTIVITY,
    y_metric: str = TPUT_PER_GPU,
    x_better: Better = "higher",
    curve_samples: int = 64,
) -> list[dict[str, Any]]:
    """Plain, JSON-ready data for drawing frontiers (the report's charts): per configuration,
    every valid point, the frontier points and the interpolated curve between them (sampled
    inside the measured range only)."""
    all_rows = list(rows)
    out: list[dict[str, Any]] = []
    for key, f in frontiers(all_rows, x_metric, y_metric, x_better).items():
        pts = [
            {"x": x, "y": y, "point_id": str(r.get("point_id"))}
            for r in all_rows
            if GroupKey.of(r) == key
            and r.get("valid") is not False
            and (x := num(r, x_metric)) is not None
            and (y := num(r, y_metric)) is not None
        ]
        curve: list[dict[str, float]] = []
        if len(f.points) >= 2:
            c = f.curve()
            step = (c.x_max - c.x_min) / (curve_samples - 1)
            xs = [c.x_min + i * step for i in range(curve_samples - 1)] + [c.x_max]
            curve = [{"x": x, "y": c(x)} for x in xs]
        out.append(
            {
                "label": key.label(),
                "group": key.as_dict(),
                "x_metric": x_metric,
                "y_metric": y_metric,
                "x_better": x_better,
                "points": pts,
                "frontier": [{"x": p.x, "y": p.y, "point_id": p.point_id} for p in f.points],
                "curve": curve,
            }
        )
    return out
