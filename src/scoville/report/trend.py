"""A metric's trend over stored runs as an SVG chart (run index on x: runs are events,
not a clock), one line per workload shape, change points drawn as their own series."""

from __future__ import annotations

from collections.abc import Sequence

from scoville.analysis.history import Series
from scoville.report.vega import to_svg
from scoville.report.views import line_chart


def history_svg(series: Sequence[Series], metric: str, model: str, system: str) -> str:
    """Runs numbered oldest first over every series, so the shapes interleave as they ran."""
    order = sorted((h.run_utc, h.run_id) for s in series for h in s.points)
    index = {run_id: float(i + 1) for i, (_, run_id) in enumerate(order)}
    lines: dict[str, list[tuple[float, float, str]]] = {}
    shifts: list[tuple[float, float, str]] = []
    for k, s in enumerate(series):
        name = f"{system} {model}" + (f" · {s.shape}" if len(series) > 1 else "")
        if name in lines:  # two series of one printed shape, apart by another condition
            name += f" (series {k + 1})"
        lines[name] = [(index[h.run_id], h.value, h.run_id[:15]) for h in s.points if h.value]
        shifts += [
            (index[h.run_id], h.value, "level shift") for h in s.points if h.value and h.change
        ]
    chart = line_chart(
        "trend",
        f"{metric} over runs",
        ("run (oldest first)", metric),
        {**lines, **({"change point": shifts} if shifts else {})},
        points_only=["change point"],
    )
    return to_svg(chart.spec)
