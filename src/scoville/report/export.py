"""Each chart of a report as its own PNG or SVG file, for slides (vl-convert, offline)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from scoville.report import vega
from scoville.report.html import ReportRun, report_charts

ChartFormat = Literal["png", "svg"]


def export_charts(runs: Sequence[ReportRun], fmt: ChartFormat, out_dir: Path) -> list[Path]:
    """Write `<chart name>.<fmt>` per chart into `out_dir` (created); the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for chart in report_charts(runs):
        spec = {**chart.spec, "background": "white"}
        path = out_dir / f"{chart.name}.{fmt}"
        if fmt == "png":
            path.write_bytes(vega.to_png(spec))
        else:
            path.write_text(vega.to_svg(spec), encoding="utf-8")
        paths.append(path)
    return paths
