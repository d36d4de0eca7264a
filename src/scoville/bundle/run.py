"""A run bundle read back: its summary (checked against the one schema), spec, manifest and
records, and the search for run directories below a results folder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scoville.bundle.files import read_json
from scoville.bundle.quality import read_quality
from scoville.bundle.summary import SUMMARY_FILE, SummaryDoc, read_summary
from scoville.errors import DataError
from scoville.records.model import PointWindow, RequestRecord
from scoville.records.sink import read_records


@dataclass
class RunBundle:
    path: Path
    spec: dict[str, Any]
    manifest: dict[str, Any]
    summary: SummaryDoc
    quality: dict[str, Any] | None = None  # quality.json, when the run had a quality pass

    @property
    def run_id(self) -> str:
        return self.path.name

    def records(self) -> tuple[list[RequestRecord], list[PointWindow]]:
        return read_records(self.path / "records.jsonl")


def load_run(path: Path) -> RunBundle:
    """Read a run directory (the summary must exist; spec and manifest are optional)."""
    if not path.is_dir():
        raise DataError(
            f"{path} is not a directory. Pass a run directory such as "
            "runs/20261129T150000Z-1a2b3c4d."
        )
    if not (path / SUMMARY_FILE).exists():
        raise DataError(
            f"{path} is not a complete scoville run: {SUMMARY_FILE} is missing. "
            "Pass a directory written by `scoville run --out`."
        )
    summary = read_summary(path)
    spec = read_json(path / "spec.json") if (path / "spec.json").exists() else {}
    manifest = read_json(path / "manifest.json") if (path / "manifest.json").exists() else {}
    return RunBundle(path, spec, manifest, summary, read_quality(path))


def find_runs(paths: list[Path]) -> list[RunBundle]:
    """Run directories named directly, or found one level below a results directory."""
    runs: list[RunBundle] = []
    for p in paths:
        if (p / SUMMARY_FILE).exists():
            runs.append(load_run(p))
        elif p.is_dir():
            runs.extend(load_run(c) for c in sorted(p.iterdir()) if (c / SUMMARY_FILE).exists())
        else:
            raise DataError(f"{p} is neither a run directory nor a folder of runs.")
    if not runs:
        raise DataError("No run found in " + ", ".join(map(str, paths)) + ".")
    return runs


def summary_dirs(path: Path) -> list[Path]:
    """Run directories one level below `path` that hold a summary (sorted)."""
    return sorted(c.parent for c in path.glob(f"*/{SUMMARY_FILE}"))
