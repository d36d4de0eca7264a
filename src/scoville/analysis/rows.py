"""Point ROWs as analysis sees them: typed access, the grouping key and the label fields.

A ROW is the flat dict `scoville.metrics` writes per sweep point (times in seconds, throughputs
in tokens/s). Analysis never mutates a ROW; it reads numbers through `num()`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Row = Mapping[str, Any]

GROUP_FIELDS: tuple[str, ...] = (
    "system",
    "model",
    "framework",
    "precision",
    "spec_decode",
    "disagg",
)


def num(row: Row, key: str) -> float | None:
    """The finite float at `row[key]`, or None when absent, None, non-numeric or not finite."""
    value = row.get(key)
    if value is None or isinstance(value, bool):
        return None
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


@dataclass(frozen=True, slots=True, order=True)
class GroupKey:
    """What must be equal for points to sit on one frontier (one serving configuration)."""

    system: str
    model: str
    framework: str
    precision: str
    spec_decode: str
    disagg: str

    @classmethod
    def of(cls, row: Row) -> GroupKey:
        return cls(*(_label(row.get(f)) for f in GROUP_FIELDS))

    def label(self) -> str:
        """A short human label: the system, then every non-empty qualifier."""
        extras = [v for v in (self.framework, self.precision) if v not in ("", "unknown")]
        if self.spec_decode not in ("", "none", "unknown", "false"):
            extras.append(f"spec={self.spec_decode}")
        if self.disagg in ("true", "yes"):
            extras.append("disagg")
        return self.system + (f" ({', '.join(extras)})" if extras else "")

    def as_dict(self) -> dict[str, str]:
        return {f: getattr(self, f) for f in GROUP_FIELDS}


def _label(value: object) -> str:
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def group_rows(rows: Iterable[Row]) -> dict[GroupKey, list[Row]]:
    """Rows split by `GroupKey`, groups in first-seen order."""
    out: dict[GroupKey, list[Row]] = {}
    for row in rows:
        out.setdefault(GroupKey.of(row), []).append(row)
    return out


def select(rows: Sequence[Row], **labels: str) -> list[Row]:
    """Rows whose labels equal every given value (compared as strings, case-insensitive)."""
    want = {k: v.lower() for k, v in labels.items()}
    return [r for r in rows if all(_label(r.get(k)).lower() == v for k, v in want.items())]
