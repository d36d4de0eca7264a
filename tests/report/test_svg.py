"""Charts keep every point inside the plot frame."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from scoville.report.svg import Series, _ticks, chart


@given(st.floats(min_value=1e-6, max_value=1e9))
def test_ticks_cover_the_maximum(hi: float) -> None:
    ticks = _ticks(0.0, hi)
    assert ticks[0] <= 0.0 and ticks[-1] >= hi and len(ticks) <= 12


def test_points_inside_frame() -> None:
    pts = [(0.037, 1229.0, "c1"), (0.042, 4508.0, "c4"), (0.040, 9401.0, "c8")]
    svg = chart("t", "x", "y", [Series("a", pts)], width=640, height=400)
    for cx, cy in re.findall(r'<circle cx="([\d.]+)" cy="([\d.]+)"', svg):
        assert 70 <= float(cx) <= 620 and 40 <= float(cy) <= 350
