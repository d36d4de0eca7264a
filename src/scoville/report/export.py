"""Each chart of a report as its own PNG or SVG file, for slides (vl-convert, offline)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from scoville.report import vega
from scoville.report.html import ReportRun, report_charts

ChartFormat = Literal["png", "svg"]


def export_charts(runs: Sequence[ReportRun], fmt: ChartFormat, out_dir: Path) -> list[Path]:
    """Write `<chart name>.<fmt>` per chart into `out_dir` (created); the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for chart in report_charts(runs):
        spec = _static(chart.spec)
        path = out_dir / f"{chart.name}.{fmt}"
        if fmt == "png":
            path.write_bytes(vega.to_png(spec))
        else:
            path.write_text(vega.to_svg(spec), encoding="utf-8")
        paths.append(path)
    return paths


def _static(spec: dict[str, Any]) -> dict[str, Any]:
    """A chart for a slide: white background; legends lose the "click to toggle" hint."""
    text = json.dumps(spec).replace(" (click to toggle)", "")
    return {**json.loads(text), "background": "white"}
