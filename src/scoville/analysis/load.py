"""Loading point ROWs from disk: run bundles, summary.json files and imported result files.

The one module in analysis that reads files (besides the claim-file loader); scoville's own
summaries are read through `scoville.bundle.summary`, the one schema. A path may be a
run directory (holding summary.json), a directory of run directories (a group), a scoville
summary.json, an InferenceX agg_*.json (one
row or a list) or an AIPerf profile_export_aiperf.json; the format is detected from content.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scoville.analysis.bootstrap import RequestArrays
from scoville.analysis.rows import Row
from scoville.bundle.files import read_json
from scoville.bundle.run import summary_dirs
from scoville.bundle.summary import SUMMARY_FILE, SUMMARY_SCHEMA, check_summary, labelled_rows
from scoville.errors import DataError
from scoville.records.model import RequestRecord


def rows_from_summary(doc: Any, source: str) -> list[Row]:
    """The point ROWs of a scoville summary document, labels filled from its labels block."""
    return list(labelled_rows(check_summary(doc, source)))


def load_rows(path: str | Path) -> list[Row]:
    """ROWs from a run directory or a result file, whatever its format (see module doc)."""
    from scoville.analysis import importers  # the importers module also owns the detection

    p = Path(path)
    if p.is_dir() and not (p / SUMMARY_FILE).exists():
        runs = summary_dirs(p)
        if not runs:
            raise DataError(f"{p} holds no summary.json and no run directories with one.")
        return [row for run in runs for row in load_rows(run)]
    if p.is_dir():
        p = p / SUMMARY_FILE
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
