"""CSV export of summary rows. (InferenceX rows come from
`scoville.analysis.importers.rows_to_inferencex`, beside the importer, so both directions
stay one definition.)"""

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
        writer.writerow(
            {k: v if not isinstance(v, (dict, list)) else repr(v) for k, v in r.items()}
        )
    return buf.getvalue()
