"""Append-only JSONL sink: each record is on disk (flushed) as soon as it completes.

A crash, a Ctrl-C or a dead server loses nothing already measured: `records.jsonl` holds one
JSON object per line, in completion order, and `read_records` reads it back (skipping a torn
last line, which is the only damage a crash can do).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Protocol

from scoville.records.model import PointWindow, RequestRecord


class Sink(Protocol):
    """What the drivers write to (`RecordSink`, `MemorySink`, or anything alike)."""

    def write(self, record: RequestRecord) -> None: ...  # pragma: no cover

    def write_window(self, window: PointWindow) -> None: ...  # pragma: no cover


class RecordSink:
    """Writes records and point windows to one JSONL file, flushing after every line.

    Lines are `{"type": "record", ...}` or `{"type": "window", ...}`.
    """

    def __init__(self, path: Path, fsync: bool = False) -> None:
        self.path = path
        self._fsync = fsync
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] | None = path.open("a", encoding="utf-8")
        self.count = 0

    def write(self, record: RequestRecord) -> None:
        self._write_line({"type": "record", **record.to_json_dict()})
        self.count += 1

    def write_window(self, window: PointWindow) -> None:
        self._write_line({"type": "window", **window.to_json_dict()})

    def _write_line(self, obj: dict[str, object]) -> None:
        if self._fh is None:
            raise ValueError(f"record sink {self.path} is closed")
        self._fh.write(json.dumps(obj, separators=(",", ":")) + "\n")
        self._fh.flush()
        if self._fsync:
            os.fsync(self._fh.fileno())

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> RecordSink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class MemorySink:
    """The same interface, kept in memory (the twin's fast path and tests)."""

    def __init__(self) -> None:
        self.records: list[RequestRecord] = []
        self.windows: list[PointWindow] = []

    @property
    def count(self) -> int:
        return len(self.records)

    def write(self, record: RequestRecord) -> None:
        self.records.append(record)

    def write_window(self, window: PointWindow) -> None:
        self.windows.append(window)

    def close(self) -> None:
        pass


def _lines(path: Path) -> Iterator[dict[str, object]]:
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn last line after a crash


def read_records(path: Path) -> tuple[list[RequestRecord], list[PointWindow]]:
    """Read a records.jsonl back into records and windows."""
    records: list[RequestRecord] = []
    windows: list[PointWindow] = []
    for obj in _lines(path):
        kind = obj.pop("type", "record")
        if kind == "window":
            windows.append(PointWindow.from_json_dict(obj))
        else:
            records.append(RequestRecord.from_json_dict(obj))
    return records, windows
