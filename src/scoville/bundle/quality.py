"""quality.json in a run bundle: the run's quality pass (status, pass rate with its interval,
per-item outputs, answers, correctness, divergence and logprob scores), written by `run` and
read back by the report, `compare` and `cost`. A run without a quality pass has no file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scoville.bundle.files import read_json, write_json
from scoville.errors import DataError

QUALITY_FILE = "quality.json"
QUALITY_SCHEMA = "scoville.run-quality/1"


def write_quality(run_dir: Path, doc: dict[str, Any]) -> Path:
    """Write the run's quality document (atomically, non-finite floats as null)."""
    path = run_dir / QUALITY_FILE
    write_json(path, doc)
    return path


def read_quality(run_dir: Path) -> dict[str, Any] | None:
    """The run's quality document, None when the run had no quality pass; a DataError when
    the file is not one this version reads."""
    path = run_dir / QUALITY_FILE
    if not path.is_file():
        return None
    doc = read_json(path)
    if not isinstance(doc, dict) or doc.get("schema") != QUALITY_SCHEMA:
        got = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise DataError(
            f"{path} is not a run's quality document: schema {got!r}; this scoville reads "
            f"{QUALITY_SCHEMA!r}."
        )
    return doc
