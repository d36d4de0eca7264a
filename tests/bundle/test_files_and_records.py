"""What a bundle holds on disk: no NaN or Infinity in its JSON, a torn last records line
reported and skipped, a bad line elsewhere refused by its number, a failed write reported."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from scoville.bundle.files import write_json
from scoville.bundle.lifecycle import complete_lines
from scoville.errors import DataError, StorageError
from scoville.records.model import PointWindow, RequestRecord
from scoville.records.sink import RecordSink, scan_records


def _record(i: int) -> RequestRecord:
    return RequestRecord(f"c1-{i}", "c1", "measure", 10 * i, 10 * i + 5, (10 * i + 2,), (1,))


def test_non_finite_numbers_are_written_as_null(tmp_path: Path) -> None:
    write_json(tmp_path / "s.json", {"a": math.inf, "b": [1.5, -math.inf, math.nan], "c": 2})
    text = (tmp_path / "s.json").read_text()
    assert "Infinity" not in text and "NaN" not in text
    assert json.loads(text) == {"a": None, "b": [1.5, None, None], "c": 2}


def test_a_torn_last_line_is_reported_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    with RecordSink(path) as sink:
        sink.write(_record(0))
        sink.write(_record(1))
        sink.write_window(PointWindow("c1", 0, 15, "concurrency", 1, 2))
    with path.open("a") as fh:
        fh.write('{"type":"record","request_id":"c1-2","point_id":"c1","pha')
    read = scan_records(path)
    assert [r.request_id for r in read.records] == ["c1-0", "c1-1"]
    assert len(read.windows) == 1 and read.torn_line == 4
    assert read.notes() == [
        "records.jsonl line 4 is torn (the process stopped mid-write); it was skipped"
    ]
    assert complete_lines(path) == 3


def test_a_bad_line_before_the_last_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    good = json.dumps({"type": "record", **_record(0).to_json_dict()})
    path.write_text(good + "\n" + "{oops\n" + good + "\n")
    with pytest.raises(DataError, match="line 2 is not a record"):
        scan_records(path)


def test_a_write_to_a_full_device_is_a_storage_error(tmp_path: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    sink = RecordSink(Path("/dev/full"))
    with pytest.raises(StorageError, match="No space left on device"):
        sink.write(_record(0))
    with pytest.raises(StorageError):  # and every later write says the same
        sink.write(_record(1))
    sink.close()
