"""A run directory's lifecycle in its manifest: written before the first request (status
"running", the prompt salt, the process id) and rewritten at the end ("complete", "stopped by
SIGINT", "failed: ..."); a run whose probe failed leaves no directory behind."""

from __future__ import annotations

import contextlib
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scoville.bundle.files import machine_facts, write_json
from scoville.errors import StorageError

MANIFEST_FILE = "manifest.json"


class Lifecycle:
    """The manifest of one run directory across its life (see the module docstring)."""

    def __init__(self, run_dir: Path, target_info: dict[str, Any], extra: dict[str, Any]):
        self.run_dir = run_dir
        self.target_info = target_info
        self.facts: dict[str, Any] = dict(extra)
        self.started_utc = datetime.now(UTC).isoformat()

    def _write(self, status: str, ended_utc: str | None) -> None:
        manifest = {
            "started_utc": self.started_utc,
            "ended_utc": ended_utc,
            "status": status,
            "client": machine_facts(),
            "target": self.target_info,
            **self.facts,
        }
        write_json(self.run_dir / MANIFEST_FILE, manifest)

    def start(self, prompt_salt: str, **facts: Any) -> None:
        """Before the first request: what a resumed run needs to send the same prompts."""
        self.facts.update(prompt_salt=prompt_salt, pid=os.getpid(), **facts)
        self._write("running", None)

    def end(self, status: str, **facts: Any) -> None:
        self.facts.update({k: v for k, v in facts.items() if v is not None})
        self._write(status, datetime.now(UTC).isoformat())

    def abandon(self, n_records: int) -> None:
        """The run failed before measuring (the probe): remove its directory, which holds only
        the spec and the manifest; with records on disk, keep it and mark it failed."""
        if n_records == 0:
            shutil.rmtree(self.run_dir, ignore_errors=True)
        else:
            self.end("failed before the sweep finished")

    def storage_error(self, exc: StorageError) -> StorageError:
        """The error to show when a file could not be written: what happened, what is on disk
        (complete record lines), what to do. Marks the manifest failed when it still can."""
        with contextlib.suppress(StorageError):  # else the first manifest stays ("running")
            self.end("failed: a file could not be written")
        records = self.run_dir / "records.jsonl"
        n_lines = complete_lines(records)
        return StorageError(
            f"{exc} The run stopped. On disk in {self.run_dir}: {n_lines} complete lines "
            f"in records.jsonl, spec.json and manifest.json. Free some space, then "
            f"`scoville report {self.run_dir}` summarises what was measured and "
            f"`scoville resume {self.run_dir}` measures the rest."
        )


def complete_lines(path: Path) -> int:
    """How many newline-terminated lines `path` holds (0 when it does not exist)."""
    if not path.is_file():
        return 0
    with path.open("rb") as fh:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))
