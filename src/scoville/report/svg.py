"""Inline SVG scatter/line charts: no JavaScript, no network, readable in any browser."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

PALETTE = ("#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2")


@dataclass(frozen=True)
class Series:
    label: str
    points: Sequence[tuple[float, float, str]]  # (x, y, point label)
    frontier: Sequence[tuple[float, float]] = ()  # the line to draw (the Pareto frontier)
    dashed: bool = False  # a dashed line stays visible over a series it coincides with
    markers: bool = True  # a dot and a label per point (off for dense time series)


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """Round tick values from `lo` up to the first tick at or above `hi`."""
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step) * step
    count = math.ceil((hi - start) / step - 1e-9)
    while start + count * step < hi:  # floating-point steps can fall a hair short
        count += 1
    return [start + i * step for i in range(count + 1)]


def _fmt(v: float) -> str:
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    if abs(v) >= 10:
        return f"{v:.0f}"
    return f"{v:.3g}"


def chart(
    title: str,
    x_label: str,
    y_label: str,
    series: Sequence[Series],
    width: int = 640,
    height: int = 400,
) -> str:
    """An SVG chart of one or more series; empty data gives a labelled empty frame."""
    pts = [(x, y) for s in series for x, y, _ in s.points if math.isfinite(x) and math.isfinite(y)]
    xs, ys = [p[0] for p in pts] or [0.0, 1.0], [p[1] for p in pts] or [0.0, 1.0]
    x_ticks, y_ticks = _ticks(0.0, max(xs) * 1.05), _ticks(0.0, max(ys) * 1.05)
    x_hi, y_hi = x_ticks[-1], y_ticks[-1]
    left, right, top, bottom = 70, 20, 40, 50
    pw, ph = width - left - right, height - top - bottom

    def sx(x: float) -> float:
        return left + pw * x / x_hi

    def sy(y: float) -> float:
        return top + ph * (1 - y / y_hi)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="{escape(title)}" font-family="sans-serif" font-size="11">',
        f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14">{escape(title)}</text>',
    ]
    for t in x_ticks:
        out.append(
            f'<line x1="{sx(t):.1f}" y1="{top}" x2="{sx(t):.1f}" y2="{top + ph}" '
            f'stroke="#eee"/><text x="{sx(t):.1f}" y="{top + ph + 15}" '
            f'text-anchor="middle">{_fmt(t)}</text>'
        )
    for t in y_ticks:
        out.append(
            f'<line x1="{left}" y1="{sy(t):.1f}" x2="{left + pw}" y2="{sy(t):.1f}" '
            f'stroke="#eee"/><text x="{left - 5}" y="{sy(t) + 4:.1f}" '
            f'text-anchor="end">{_fmt(t)}</text>'
        )
    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>')
    out.append(
        f'<text x="{left + pw / 2}" y="{height - 10}" text-anchor="middle">{escape(x_label)}</text>'
    )
    out.append(
        f'<text transform="translate(15 {top + ph / 2}) rotate(-90)" '
        f'text-anchor="middle">{escape(y_label)}</text>'
    )
    for i, s in enumerate(series):
        color = PALETTE[i % len(PALETTE)]
        good = sorted(
            (x, y, lab) for x, y, lab in s.points if math.isfinite(x) and math.isfinite(y)
        )
        if len(s.frontier) > 1:
            path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in sorted(s.frontier))
            dash = ' stroke-dasharray="6 4"' if s.dashed else ""
            out.append(
                f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"{dash}/>'
            )
        for x, y, lab in good if s.markers else ():
            out.append(
                f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="4" fill="{color}">'
                f"<title>{escape(s.label)} {escape(lab)}: x={_fmt(x)}, y={_fmt(y)}</title>"
                f'</circle><text x="{sx(x) + 6:.1f}" y="{sy(y) - 6:.1f}" fill="{color}">'
                f"{escape(lab)}</text>"
            )
        out.append(
            f'<rect x="{left + 10}" y="{top + 10 + 16 * i}" width="10" height="10" '
            f'fill="{color}"/><text x="{left + 25}" y="{top + 19 + 16 * i}">'
            f"{escape(s.label)}</text>"
        )
    out.append("</svg>")
    return "\n".join(out)
