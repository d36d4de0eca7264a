"""The terminal table of a run's per-kW figures at each power boundary its rows carry (a
power profile was given): `run` and `simulate` print it under the point table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich import box
from rich.table import Table

from scoville.figures import num

BOUNDARY_COLUMNS = (
    ("package_tdp", "TDP"),
    ("provisioned_all_in", "all-in"),
    ("board_measured", "board"),
    ("node_wall", "node"),
    ("facility", "facility"),
)


def power_table(points: Sequence[Mapping[str, Any]]) -> Table | None:
    """Per point: total tok/s per kW at each boundary present, '(est.)' on the twin's
    estimates; None when no row carries a boundary column."""
    have = [(b, h) for b, h in BOUNDARY_COLUMNS if any(f"tput_per_kw_{b}" in p for p in points)]
    if not have:
        return None
    table = Table(title="tok/s per kW at each power boundary", box=box.SIMPLE_HEAD)
    table.add_column("point\n\n", justify="right")
    for b, header in have:
        est = any(str(p.get(f"power_how_{b}", "")).startswith("estimate") for p in points)
        table.add_column(f"{header}\n{'(estimate)' if est else ''}\n{_watts(points, b)}",
                         justify="right")  # fmt: skip
    for p in points:
        cells = [num(p.get(f"tput_per_kw_{b}")) for b, _ in have]
        table.add_row(str(p.get("point_id", "")), *cells)
    return table


def _watts(points: Sequence[Mapping[str, Any]], boundary: str) -> str:
    """'1,200 W', or the range '919-1,656 W' when the watts differ by point (an estimate)."""
    ws = [w for p in points if isinstance(w := p.get(f"power_w_{boundary}"), (int, float))]
    if not ws:
        return "-"
    lo, hi = min(ws), max(ws)
    return f"{num(lo)} W" if round(lo) == round(hi) else f"{num(lo)}-{num(hi)} W"
