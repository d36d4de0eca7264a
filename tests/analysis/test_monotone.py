"""Known-answer and property tests for the Steffen monotone cubic."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoville.analysis.monotone import MonotoneCubic


def test_straight_line_is_reproduced_exactly() -> None:
    # y = 10 - 2x sampled unevenly: Steffen slopes equal the line's slope everywhere.
    c = MonotoneCubic.fit([0, 1, 3, 4], [10, 8, 4, 2])
    assert c(2.5) == pytest.approx(5.0)
    assert c(0.5) == pytest.approx(9.0)
    assert c.integral(0, 4) == pytest.approx(24.0)  # 40 - 16
    assert c.integral(0.5, 2.5) == pytest.approx((9.0 + 5.0) / 2 * 2.0)


def test_flat_then_rise_is_smoothstep_on_the_rising_segment() -> None:
    # Slopes at the corners are zero (the secants change sign/magnitude to 0), so on [1, 2]
    # the curve is 3t^2 - 2t^3: 0.5 at the midpoint, 3/16 - 2/64 = 0.15625 at t = 0.25.
    c = MonotoneCubic.fit([0, 1, 2, 3], [0, 0, 1, 1])
    assert c(0.5) == 0.0
    assert c(1.5) == pytest.approx(0.5)
    assert c(1.25) == pytest.approx(0.15625)
    assert c(2.7) == pytest.approx(1.0)
    assert c.integral(1, 2) == pytest.approx(0.5)
    assert c.integral(0, 3) == pytest.approx(1.5)


def test_point_symmetric_decreasing_data() -> None:
    # Knots (0,4),(1,3),(2,1),(3,0): slopes d = (-0.5, -1.5, -1.5, -0.5) by hand.
    c = MonotoneCubic.fit([0, 1, 2, 3], [4, 3, 1, 0])
    assert c.ds == pytest.approx((-0.5, -1.5, -1.5, -0.5))
    assert c(1.5) == pytest.approx(2.0)  # symmetry about (1.5, 2)
    assert c(1.25) == pytest.approx(2.546875)
    assert c(1.75) == pytest.approx(4.0 - 2.546875)
    # Hermite integral h(y0+y1)/2 + h^2(d0-d1)/12 on [0,1]: 3.5 + 1/12.
    assert c.integral(0, 1) == pytest.approx(3.5 + 1 / 12)
    assert c.integral(0, 3) == pytest.approx(6.0)  # (3.5 + 1/12) + 2 + (0.5 - 1/12)


def test_values_at_knots_are_the_data() -> None:
    xs, ys = [1.0, 2.0, 4.0, 8.0], [100.0, 70.0, 20.0, 5.0]
    c = MonotoneCubic.fit(xs, ys)
    for x, y in zip(xs, ys, strict=True):
        assert c(x) == y


def test_never_extrapolates() -> None:
    c = MonotoneCubic.fit([1, 2], [5, 3])
    with pytest.raises(ValueError, match="outside"):
        c(2.0001)
    with pytest.raises(ValueError, match="outside"):
        c(0.5)
    with pytest.raises(ValueError):
        c.integral(1, 3)


def test_rejects_unsorted_or_non_finite_knots() -> None:
    with pytest.raises(ValueError):
        MonotoneCubic.fit([1, 1], [2, 3])
    with pytest.raises(ValueError):
        MonotoneCubic.fit([1, 2], [float("nan"), 3])


_knot_ys = st.lists(st.floats(0.0, 1e6, allow_nan=False), min_size=2, max_size=12)


@settings(max_examples=200, deadline=None)
@given(
    ys=_knot_ys,
    gaps=st.lists(st.floats(0.01, 100.0), min_size=11, max_size=11),
    ts=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=20),
)
def test_monotone_data_give_a_monotone_curve_inside_neighbour_bounds(
    ys: list[float], gaps: list[float], ts: list[float]
) -> None:
    ys = sorted(ys, reverse=True)  # a frontier: throughput falls as interactivity rises
    xs = [0.0]
    for g in gaps[: len(ys) - 1]:
        xs.append(xs[-1] + g)
    c = MonotoneCubic.fit(xs, ys)
    grid = sorted(xs[0] + t * (xs[-1] - xs[0]) for t in ts)
    vals = [c(x) for x in grid]
    tol = 1e-9 * max(1.0, max(ys))
    for a, b in itertools.pairwise(vals):
        assert b <= a + tol
    for x, v in zip(grid, vals, strict=True):
        i = max(0, min(c._segment(x), len(xs) - 2))
        lo, hi = sorted((ys[i], ys[i + 1]))
        assert lo - tol <= v <= hi + tol
