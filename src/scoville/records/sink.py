"""Append-only JSONL sink: each record is on disk (flushed) as soon as it completes.

A crash, a Ctrl-C or a dead server loses nothing already measured: `records.jsonl` holds one
JSON object per line, in completion order, and `scan_records` reads it back: a torn last line
(the only damage a crash or a full disk can do) is reported, never parsed as data; a bad line
anywhere else is a `DataError` naming it. A write that fails (disk full) is a `StorageError`.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from scoville.errors import DataError, StorageError
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
        self.failed: StorageError | None = None  # set by the first write that failed

    def write(self, record: RequestRecord) -> None:
        self._write_line({"type": "record", **record.to_json_dict()})
        self.count += 1

    def write_window(self, window: PointWindow) -> None:
        self._write_line({"type": "window", **window.to_json_dict()})

    def _write_line(self, obj: dict[str, object]) -> None:
        if self._fh is None:
            raise ValueError(f"record sink {self.path} is closed")
        if self.failed is not None:
            raise self.failed
        try:
            self._fh.write(json.dumps(obj, separators=(",", ":")) + "\n")
            self._fh.flush()
            if self._fsync:
                os.fsync(self._fh.fileno())
        except OSError as exc:
            self.failed = StorageError(
                f"Writing {self.path} failed after {self.count} records "
                f"({exc.strerror or exc}, errno {exc.errno})."
            )
            raise self.failed from None

    def close(self) -> None:
        if self._fh is not None:
            with contextlib.suppress(OSError):  # a failed write is already reported
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


@dataclass(frozen=True, slots=True)
class RecordsRead:
    """records.jsonl read back; `torn_line` is the 1-based number of a torn last line (a
    process killed or a disk filled mid-write), skipped and reported, never parsed."""

    path: Path
    records: tuple[RequestRecord, ...]
    windows: tuple[PointWindow, ...]
    torn_line: int | None = None

    def notes(self) -> list[str]:
        if self.torn_line is None:
            return []
        return [
            f"{self.path.name} line {self.torn_line} is torn (the process stopped mid-write); "
            "it was skipped"
        ]


def scan_records(path: Path) -> RecordsRead:
    """Read a records.jsonl back (see the module docstring for torn and bad lines)."""
    records: list[RequestRecord] = []
    windows: list[PointWindow] = []
    data = path.read_bytes()
    lines = data.split(b"\n")
    torn: int | None = None
    if lines and lines[-1].strip():  # no newline after the last line: it may be torn
        try:
            json.loads(lines[-1])
        except ValueError:
            torn = len(lines)
            lines = lines[:-1]
    for i, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
            kind = obj.pop("type", "record")
            if kind == "window":
                windows.append(PointWindow.from_json_dict(obj))
            else:
                records.append(RequestRecord.from_json_dict(obj))
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            raise DataError(
                f"{path} line {i} is not a record ({type(exc).__name__}: {str(exc)[:120]}); "
                "only the last line of a records file may be torn."
            ) from None
    return RecordsRead(path, tuple(records), tuple(windows), torn)


def read_records(path: Path) -> tuple[list[RequestRecord], list[PointWindow]]:
    """Read a records.jsonl back into records and windows (a torn last line skipped)."""
    read = scan_records(path)
    return list(read.records), list(read.windows)
