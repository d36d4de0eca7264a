"""summary.json, the one schema: written by `scoville run`, `import` and the twin, read back
by analysis and report. One document per run: labels that group its points, notes, and one
flat row per sweep point (`points`), plus optional run-level sections (the server timeline).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NotRequired, TypedDict, cast

from scoville.bundle.files import read_json, write_json
from scoville.errors import DataError

SUMMARY_SCHEMA = "scoville.summary/1"
SUMMARY_FILE = "summary.json"


class SummaryDoc(TypedDict):
    """summary.json: the run's labels and notes, and one flat row per point (`points`)."""

    schema: str
    run_id: str
    spec_hash: str | None
    labels: dict[str, Any]
    range_ratio: float | None
    notes: list[str]
    points: list[dict[str, Any]]
    server_timeline: NotRequired[dict[str, Any]]  # scraped server metrics, when there were any


def summary_doc(
    run_id: str,
    rows: Sequence[Mapping[str, Any]],
    *,
    spec_hash: str | None,
    labels: Mapping[str, Any],
    notes: Sequence[str] = (),
    range_ratio: float | None = None,
    server_timeline: dict[str, Any] | None = None,
) -> SummaryDoc:
    """The summary document (the server timeline only when there is one)."""
    doc = SummaryDoc(
        schema=SUMMARY_SCHEMA,
        run_id=run_id,
        spec_hash=spec_hash,
        labels=dict(labels),
        range_ratio=range_ratio,
        notes=list(notes),
        points=[dict(r) for r in rows],
    )
    if server_timeline is not None:
        doc["server_timeline"] = server_timeline
    return doc


def write_summary(run_dir: Path, doc: SummaryDoc) -> Path:
    """Write `doc` (from `summary_doc`) as `run_dir/summary.json`; returns the path."""
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / SUMMARY_FILE
    write_json(path, doc)
    return path


def is_summary(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("schema") == SUMMARY_SCHEMA


def check_summary(doc: Any, source: str) -> SummaryDoc:
    """`doc` if it is a summary document this version reads, else a DataError naming `source`."""
    if not isinstance(doc, dict) or doc.get("schema") != SUMMARY_SCHEMA:
        got = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise DataError(
            f"{source} is not a scoville summary: schema {got!r}; this scoville reads "
            f"{SUMMARY_SCHEMA!r}."
        )
    if not isinstance(doc.get("points"), list):
        raise DataError(f"{source}: 'points' must be a list of rows.")
    if not all(isinstance(p, dict) for p in doc["points"]):
        raise DataError(f"{source}: every entry of 'points' must be an object.")
    return cast(SummaryDoc, doc)


def read_summary(path: Path) -> SummaryDoc:
    """A summary.json (or the one in a run directory), checked."""
    if path.is_dir():
        path = path / SUMMARY_FILE
    return check_summary(read_json(path), str(path))


def labelled_rows(doc: SummaryDoc) -> list[dict[str, Any]]:
    """The point rows of a checked summary, labels filled in from its labels block (a row's own
    non-null value wins) and `run_id` from the document when the row has none."""
    labels = doc.get("labels") or {}
    out: list[dict[str, Any]] = []
    for p in doc["points"]:
        row = {**labels, **{k: v for k, v in p.items() if v is not None or k not in labels}}
        row.setdefault("run_id", doc.get("run_id"))
        out.append(row)
    return out
