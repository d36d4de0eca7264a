"""Arrow tables of the results store: point ROWs, per-request records and catalogue rows.

Columns are typed once here. A ROW's nested values (error counts, lists) become sorted JSON
text; numbers become float64 (non-finite -> null), and so do columns null in every row
(DuckDB's `union_by_name` widens them to text where another run holds text). Records keep
their facts (integer ns, token counts, every frame's arrival); seconds are derived in the
store's SQL views.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from scoville.analysis.rows import GROUP_FIELDS, GroupKey, Row
from scoville.records.model import RequestRecord

REQUEST_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("request_id", pa.string()),
        ("point_id", pa.string()),
        ("phase", pa.string()),
        ("start_ns", pa.int64()),
        ("end_ns", pa.int64()),
        ("first_chunk_ns", pa.int64()),
        ("last_chunk_ns", pa.int64()),
        ("n_chunks", pa.int32()),
        ("input_tokens", pa.int64()),
        ("output_tokens", pa.int64()),
        ("expected_input_tokens", pa.int64()),
        ("expected_output_tokens", pa.int64()),
        ("cached_tokens", pa.int64()),
        ("token_source", pa.string()),
        ("scheduled_ns", pa.int64()),
        ("error", pa.string()),
        ("http_status", pa.int32()),
        ("finish_reason", pa.string()),
        ("worker", pa.string()),
        ("tags", pa.string()),
        ("chunk_ns", pa.list_(pa.int64())),
        ("chunk_tokens", pa.list_(pa.int32())),
    ]
)


def _cell(value: Any) -> Any:
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, sort_keys=True, default=str)
    return value


def _column(values: list[Any]) -> pa.Array:
    present = [v for v in values if v is not None]
    if not present:  # a number not measured here (a bound, a power figure): a null double
        return pa.nulls(len(values), pa.float64())
    if all(isinstance(v, bool) for v in present):
        return pa.array(values, type=pa.bool_())
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        floats = [None if v is None or not math.isfinite(float(v)) else float(v) for v in values]
        return pa.array(floats, type=pa.float64())
    return pa.array([None if v is None else str(_cell(v)) for v in values], type=pa.string())


def points_table(rows: Sequence[Row], run_id: str) -> pa.Table:
    """One row per point; grouping labels as text (the `GroupKey` spelling), run_id first."""
    flat: list[dict[str, Any]] = []
    for r in rows:
        d = {k: _cell(v) for k, v in r.items()}
        d.update(GroupKey.of(r).as_dict())
        d["run_id"] = run_id
        flat.append(d)
    keys = ["run_id", *GROUP_FIELDS]
    for d in flat:
        keys.extend(k for k in d if k not in keys)
    return pa.table({k: _column([d.get(k) for d in flat]) for k in keys})


def requests_table(records: Sequence[RequestRecord], run_id: str) -> pa.Table:
    """Every record (warmup and failures included, with their phase and error kind)."""
    cols: dict[str, list[Any]] = {name: [] for name in REQUEST_SCHEMA.names}
    for r in records:
        cols["run_id"].append(run_id)
        cols["request_id"].append(r.request_id)
        cols["point_id"].append(r.point_id)
        cols["phase"].append(r.phase)
        cols["start_ns"].append(r.start_ns)
        cols["end_ns"].append(r.end_ns)
        cols["first_chunk_ns"].append(r.chunk_ns[0] if r.chunk_ns else None)
        cols["last_chunk_ns"].append(r.chunk_ns[-1] if r.chunk_ns else None)
        cols["n_chunks"].append(len(r.chunk_ns))
        cols["input_tokens"].append(r.input_tokens)
        cols["output_tokens"].append(r.output_tokens)
        cols["expected_input_tokens"].append(r.expected_input_tokens)
        cols["expected_output_tokens"].append(r.expected_output_tokens)
        cols["cached_tokens"].append(r.cached_tokens)
        cols["token_source"].append(r.token_source)
        cols["scheduled_ns"].append(r.scheduled_ns)
        cols["error"].append(r.error.value if r.error is not None else None)
        cols["http_status"].append(r.http_status)
        cols["finish_reason"].append(r.finish_reason)
        cols["worker"].append(r.worker)
        cols["tags"].append(json.dumps(r.tags, sort_keys=True) if r.tags else None)
        cols["chunk_ns"].append(list(r.chunk_ns))
        cols["chunk_tokens"].append(list(r.chunk_tokens))
    return pa.table(cols, schema=REQUEST_SCHEMA)


def catalog_table(entry: Mapping[str, Any]) -> pa.Table:
    """The catalogue row of one run (all text except the counts)."""
    counts = ("n_points", "n_requests")
    arrays = {
        k: pa.array([v], type=pa.int64() if k in counts else pa.string()) for k, v in entry.items()
    }
    return pa.table(arrays)
