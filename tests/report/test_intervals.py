"""Bands and error bars from a run's records, on requests whose numbers are worked by hand:
identical requests resample to a zero-width interval at the point's own value."""

from __future__ import annotations

from pathlib import Path

import pytest

from scoville.records.model import PointWindow, RequestRecord
from scoville.records.sink import RecordSink
from scoville.report.intervals import repeats_band, run_intervals

MS = 1_000_000


def _records(run: Path, windows: dict[str, tuple[int, int]]) -> None:
    """Per point: 4 requests, 100 in / 11 out, first token at 50 ms, then one token every
    `gap` ms (TPOT = gap); the window lasts `window` ms."""
    with RecordSink(run / "records.jsonl") as sink:
        for pid, (gap, window) in windows.items():
            for i in range(4):
                chunks = tuple(50 * MS + k * gap * MS for k in range(11))
                sink.write(
                    RequestRecord(
                        f"{pid}-{i}", pid, "measure", 0, chunks[-1], chunks, (1,) * 11, 100, 11
                    )
                )
            sink.write_window(PointWindow(pid, 0, window * MS, "concurrency", 1.0, 4))


def test_band_and_error_bars_at_hand_worked_values(tmp_path: Path) -> None:
    # c1: TPOT 10 ms -> 100 tok/s/user; 4 x 111 tokens over 1 s -> 444 tok/s per accelerator
    # c4: TPOT 20 ms -> 50 tok/s/user; 444 tokens over 0.5 s -> 888 tok/s per accelerator
    _records(tmp_path, {"c1": (10, 1000), "c4": (20, 500)})
    rows = [
        {"point_id": "c1", "median_intvty": 100.0, "n_accelerators": 1},
        {"point_id": "c4", "median_intvty": 50.0, "n_accelerators": 1},
    ]
    ivs = run_intervals(tmp_path, rows, n_resamples=50)
    tput = ivs.points["c1"]["tput_per_gpu"]
    assert (tput.lo, tput.hi) == pytest.approx((444.0, 444.0))
    x = ivs.points["c4"]["median_intvty"]
    assert (x.lo, x.hi) == pytest.approx((50.0, 50.0))
    first, last = ivs.band[0], ivs.band[-1]
    assert (first["x"], first["lo"], first["hi"]) == pytest.approx((50.0, 888.0, 888.0))
    assert (last["x"], last["lo"], last["hi"]) == pytest.approx((100.0, 444.0, 444.0))
    assert "bootstrap" in ivs.note


def test_an_invalid_point_leaves_the_band(tmp_path: Path) -> None:
    _records(tmp_path, {"c1": (10, 1000), "c4": (20, 500)})
    rows = [
        {"point_id": "c1", "median_intvty": 100.0, "n_accelerators": 1},
        {"point_id": "c4", "median_intvty": 50.0, "n_accelerators": 1, "valid": False},
    ]
    ivs = run_intervals(tmp_path, rows, n_resamples=50)
    assert ivs.band == () and "c4" in ivs.points  # its error bars stay; it has no band


def test_no_records_no_intervals(tmp_path: Path) -> None:
    ivs = run_intervals(tmp_path, [{"point_id": "c1"}])
    assert ivs.band == () and ivs.points == {} and "no per-request records" in ivs.note


def test_repeats_band_over_runs() -> None:
    """Two runs of one configuration: the mean points sit halfway; resampling runs gives a
    band between the two runs' frontiers (all-first, all-second or mixed)."""
    run_1 = [
        {"point_id": "c1", "median_intvty": 100.0, "tput_per_gpu": 400.0, "n_ok": 10, "n_sent": 10},
        {"point_id": "c4", "median_intvty": 50.0, "tput_per_gpu": 800.0, "n_ok": 40, "n_sent": 40},
    ]
    run_2 = [{**r, "tput_per_gpu": r["tput_per_gpu"] + 100.0} for r in run_1]
    mean, band = repeats_band([run_1, run_2], n_resamples=200)
    assert [(r["point_id"], r["tput_per_gpu"], r["n_ok"]) for r in mean] == [
        ("c1", 450.0, 20),
        ("c4", 850.0, 80),
    ]
    assert (band[0]["x"], band[0]["lo"], band[0]["hi"]) == pytest.approx((50.0, 800.0, 900.0))
    assert (band[-1]["x"], band[-1]["lo"], band[-1]["hi"]) == pytest.approx((100.0, 400.0, 500.0))
