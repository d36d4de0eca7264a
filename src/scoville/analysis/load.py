"""Loading point ROWs from disk: run bundles, summary.json files and imported result files.

The one module in analysis that reads files (besides the claim-file loader). A path may be a
run directory (holding summary.json), a directory of run directories (a group), a scoville
summary.json, an InferenceX agg_*.json (one
row or a list) or an AIPerf profile_export_aiperf.json; the format is detected from content.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scoville.analysis.bootstrap import RequestArrays
from scoville.analysis.rows import Row
from scoville.errors import DataError
from scoville.records.model import RequestRecord

SUMMARY_SCHEMA = "scoville.summary/1"


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise DataError(f"{path} does not exist; give a run directory or a result file.") from e
    except json.JSONDecodeError as e:
        raise DataError(f"{path} is not valid JSON ({e.msg} at line {e.lineno}).") from e


def rows_from_summary(doc: Any, source: str) -> list[Row]:
    """The point ROWs of a scoville summary document, labels filled from its labels block."""
    if not isinstance(doc, dict) or doc.get("schema") != SUMMARY_SCHEMA:
        raise DataError(f"{source} is not a scoville summary (schema {SUMMARY_SCHEMA!r}).")
    points = doc.get("points")
    if not isinstance(points, list):
        raise DataError(f"{source}: 'points' must be a list of ROWs.")
    labels = doc.get("labels") or {}
    out: list[Row] = []
    for p in points:
        if not isinstance(p, dict):
            raise DataError(f"{source}: every entry of 'points' must be an object.")
        row = {**labels, **{k: v for k, v in p.items() if v is not None or k not in labels}}
        row.setdefault("run_id", doc.get("run_id"))
        out.append(row)
    return out


def load_rows(path: str | Path) -> list[Row]:
    """ROWs from a run directory or a result file, whatever its format (see module doc)."""
    from scoville.analysis import importers  # the importers module also owns the detection

    p = Path(path)
    if p.is_dir() and not (p / "summary.json").exists():
        runs = sorted(p.glob("*/summary.json"))
        if not runs:
            raise DataError(f"{p} holds no summary.json and no run directories with one.")
        return [row for run in runs for row in load_rows(run)]
    if p.is_dir():
        p = p / "summary.json"
    doc = read_json(p)
    if isinstance(doc, dict) and doc.get("schema") == SUMMARY_SCHEMA:
        return rows_from_summary(doc, str(p))
    if importers.looks_like_inferencex(doc):
        return importers.rows_from_inferencex(doc, str(p))
    if importers.looks_like_aiperf(doc):
        return importers.rows_from_aiperf(doc, str(p))
    raise DataError(
        f"{p}: unknown result format. Expected a scoville summary.json (schema "
        f"{SUMMARY_SCHEMA!r}), an InferenceX agg_*.json row/list, or an AIPerf "
        "profile_export_aiperf.json."
    )


def load_point_arrays(run_dir: str | Path) -> dict[str, tuple[RequestArrays, float]]:
    """Per point of a run (records.jsonl): its measured requests as arrays and its window (s),
    the input of `bootstrap.bootstrap_requests` and `bootstrap_frontier_band_requests`."""
    from scoville.records.sink import read_records

    path = Path(run_dir) / "records.jsonl"
    if not path.exists():
        raise DataError(
            f"{path.parent} has no records.jsonl; confidence bands over requests "
            "need the run's per-request records."
        )
    records, windows = read_records(path)
    by_point: dict[str, list[RequestRecord]] = {}
    for r in records:
        if r.phase == "measure":
            by_point.setdefault(r.point_id, []).append(r)
    out: dict[str, tuple[RequestArrays, float]] = {}
    for w in windows:
        arrays = RequestArrays.of(by_point.get(w.point_id, []))
        if arrays.output_tokens.size and w.end_ns > w.start_ns:
            out[w.point_id] = (arrays, (w.end_ns - w.start_ns) / 1e9)
    return out
