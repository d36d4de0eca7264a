"""Monotone cubic interpolation (Steffen 1990) that never extrapolates.

Used by the frontier code to read a frontier at a chosen x (iso-interactivity) and to integrate
it. Steffen's slopes make the piecewise cubic Hermite interpolant monotone on every interval
where the data are monotone, never overshoot a knot's neighbours, and reproduce straight lines
exactly. Outside [x_0, x_n] there is no value: callers get an explicit out-of-range result.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass


def _sign(v: float) -> float:
    return (v > 0) - (v < 0)


@dataclass(frozen=True, slots=True)
class MonotoneCubic:
    """A piecewise cubic Hermite curve through knots (xs strictly increasing) with Steffen slopes.

    Formulas (h_i = x_{i+1} - x_i, s_i = (y_{i+1} - y_i) / h_i):
    interior slope d_i = (sign s_{i-1} + sign s_i) * min(|s_{i-1}|, |s_i|, |p_i| / 2) with
    p_i = (s_{i-1} h_i + s_i h_{i-1}) / (h_{i-1} + h_i); end slopes from the one-sided parabola,
    clipped to [0, 2 s] (zero when it has the wrong sign). Two knots give the straight line.
    """

    xs: tuple[float, ...]
    ys: tuple[float, ...]
    ds: tuple[float, ...]

    @classmethod
    def fit(cls, xs: Sequence[float], ys: Sequence[float]) -> MonotoneCubic:
        if len(xs) != len(ys) or len(xs) < 1:
            raise ValueError("need as many ys as xs, and at least one knot")
        if any(not math.isfinite(v) for v in (*xs, *ys)):
            raise ValueError("knots must be finite")
        if any(b <= a for a, b in itertools.pairwise(xs)):
            raise ValueError("xs must be strictly increasing")
        return cls(tuple(map(float, xs)), tuple(map(float, ys)), _steffen_slopes(xs, ys))

    @property
    def x_min(self) -> float:
        return self.xs[0]

    @property
    def x_max(self) -> float:
        return self.xs[-1]

    def covers(self, x: float) -> bool:
        return self.xs[0] <= x <= self.xs[-1]

    def __call__(self, x: float) -> float:
        """The curve at x; raises ValueError outside [x_min, x_max] (no extrapolation)."""
        if not self.covers(x):
            raise ValueError(f"x={x} is outside the measured range [{self.x_min}, {self.x_max}]")
        i = self._segment(x)
        if i < 0:
            return self.ys[0]
        return self._hermite(i, x)

    def integral(self, lo: float, hi: float) -> float:
        """Exact integral of the curve over [lo, hi] (inside the range; Simpson is exact for
        cubics, applied per segment)."""
        if lo > hi:
            return -self.integral(hi, lo)
        if not (self.covers(lo) and self.covers(hi)):
            raise ValueError(f"[{lo}, {hi}] is not inside [{self.x_min}, {self.x_max}]")
        cuts = [lo, *(x for x in self.xs if lo < x < hi), hi]
        total = 0.0
        for a, b in itertools.pairwise(cuts):
            total += (b - a) / 6.0 * (self(a) + 4.0 * self((a + b) / 2.0) + self(b))
        return total

    def _segment(self, x: float) -> int:
        n = len(self.xs)
        if n == 1:
            return -1
        lo, hi = 0, n - 2
        while lo < hi:  # last segment whose left knot is <= x
            mid = (lo + hi + 1) // 2
            if self.xs[mid] <= x:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def _hermite(self, i: int, x: float) -> float:
        x0, x1 = self.xs[i], self.xs[i + 1]
        h = x1 - x0
        t = (x - x0) / h
        h00 = (1 + 2 * t) * (1 - t) ** 2
        h10 = t * (1 - t) ** 2
        h01 = t * t * (3 - 2 * t)
        h11 = t * t * (t - 1)
        return (
            h00 * self.ys[i]
            + h10 * h * self.ds[i]
            + h01 * self.ys[i + 1]
            + h11 * h * self.ds[i + 1]
        )


def _steffen_slopes(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, ...]:
    n = len(xs)
    if n == 1:
        return (0.0,)
    h = [xs[i + 1] - xs[i] for i in range(n - 1)]
    s = [(ys[i + 1] - ys[i]) / h[i] for i in range(n - 1)]
    if n == 2:
        return (s[0], s[0])
    d = [0.0] * n
    for i in range(1, n - 1):
        p = (s[i - 1] * h[i] + s[i] * h[i - 1]) / (h[i - 1] + h[i])
        d[i] = (_sign(s[i - 1]) + _sign(s[i])) * min(abs(s[i - 1]), abs(s[i]), 0.5 * abs(p))
    d[0] = _end_slope(s[0], s[1], h[0], h[1])
    d[-1] = _end_slope(s[-1], s[-2], h[-1], h[-2])
    return tuple(d)


def _end_slope(s_end: float, s_next: float, h_end: float, h_next: float) -> float:
    p = s_end * (1 + h_end / (h_end + h_next)) - s_next * h_end / (h_end + h_next)
    if p * s_end <= 0:
        return 0.0
    if abs(p) > 2 * abs(s_end):
        return 2 * s_end
    return p
