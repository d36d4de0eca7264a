"""The results store's one door to run bundles: read a run directory or an imported result file
into the plain pieces the store keeps (point ROWs, per-request records, provenance).

Every bundle read by the store and by `scoville check` goes through `read_source`, so moving
the bundle reader means changing the imports of this one function.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scoville.analysis.load import load_rows
from scoville.analysis.rows import Row
from scoville.bundle.run import load_run
from scoville.errors import DataError
from scoville.records.model import PointWindow, RequestRecord
from scoville.records.sink import read_records


@dataclass(frozen=True)
class RunSource:
    """One run as the store sees it. `records`/`windows` are empty for imported results."""

    run_id: str
    path: Path
    rows: list[Row]
    spec: dict[str, Any] = field(default_factory=dict)
    manifest: dict[str, Any] = field(default_factory=dict)
    records: list[RequestRecord] = field(default_factory=list)
    windows: list[PointWindow] = field(default_factory=list)


def read_source(path: Path) -> RunSource:
    """A run directory (summary.json, with records.jsonl when present), a `scoville import`
    directory, or an InferenceX / AIPerf result file."""
    if not path.exists():
        raise DataError(f"{path} does not exist; pass a run directory or a result file.")
    if path.is_dir() and not (path / "summary.json").exists():
        raise DataError(f"{path} holds no summary.json; pass a run directory.")
    rows = load_rows(path)
    if path.is_dir():
        bundle = load_run(path)
        records: list[RequestRecord] = []
        windows: list[PointWindow] = []
        if (path / "records.jsonl").exists():
            records, windows = read_records(path / "records.jsonl")
        run_id = str(bundle.summary.get("run_id") or path.name)
        return RunSource(run_id, path, rows, bundle.spec, bundle.manifest, records, windows)
    return RunSource(f"import-{path.stem}", path, rows)
