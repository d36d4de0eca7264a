"""CSV export of summary rows. (InferenceX rows come from
`scoville.analysis.importers.rows_to_inferencex`, beside the importer, so both directions
stay one definition.) Text cells that a spreadsheet would read as a formula (starting with
= + - @, a tab or a carriage return) are written with a leading quote."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any


def to_csv(rows: Sequence[dict[str, Any]]) -> str:
    """Flat rows as CSV (nested values such as error counts are written as their repr)."""
    if not rows:
        return ""
    keys: list[str] = []
    for r in rows:
        keys.extend(k for k in r if k not in keys)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=keys, extrasaction="ignore")
    writer.writeheader()
    for r in rows:
        writer.writerow({k: safe_cell(v) for k, v in r.items()})
    return buf.getvalue()


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> Any:
    """A CSV cell no spreadsheet evaluates: nested values as their repr, and text that starts
    like a formula prefixed with a single quote (numbers, including negative ones, stay)."""
    if isinstance(value, (dict, list, tuple)):
        value = repr(value)
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value
