"""A metric's trend over stored runs as an SVG chart (run index on x: runs are events,
not a clock), change points drawn as their own series."""

from __future__ import annotations

from collections.abc import Sequence

from scoville.analysis.history import HistoryPoint
from scoville.report.vega import to_svg
from scoville.report.views import line_chart


def history_svg(trend: Sequence[HistoryPoint], metric: str, model: str, system: str) -> str:
    pts = [(float(i + 1), h.value, h.run_id[:15]) for i, h in enumerate(trend) if h.value]
    shifts = [
        (float(i + 1), h.value, "level shift") for i, h in enumerate(trend) if h.value and h.change
    ]
    series = {f"{system} {model}": pts, **({"change point": shifts} if shifts else {})}
    chart = line_chart(
        "trend",
        f"{metric} over runs",
        ("run (oldest first)", metric),
        series,
        points_only=["change point"],
    )
    return to_svg(chart.spec)
