"""Bootstrap intervals over requests and over repeats, on data whose answers are known."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from scoville.analysis.bootstrap import (
    RequestArrays,
    bootstrap_frontier_band,
    bootstrap_frontier_band_requests,
    bootstrap_requests,
)
from scoville.records.model import ErrorKind, RequestRecord

S = 1_000_000_000


def rec(i: int, out: int, decode_s: float, ttft_s: float = 0.5, inp: int = 100) -> RequestRecord:
    first = int(ttft_s * S)
    step = int(decode_s * S / (out - 1)) if out > 1 else 0
    chunks = tuple(first + k * step for k in range(out))
    return RequestRecord(
        request_id=str(i),
        point_id="c1",
        phase="measure",
        start_ns=0,
        end_ns=chunks[-1],
        chunk_ns=chunks,
        chunk_tokens=(1,) * out,
        input_tokens=inp,
        output_tokens=out,
    )


def test_request_arrays_from_records() -> None:
    failed = RequestRecord("x", "c1", "measure", 0, 5, error=ErrorKind.TIMEOUT)
    a = RequestArrays.of([rec(0, 11, 1.0), rec(1, 1, 0.0), failed])
    assert a.output_tokens.tolist() == [11, 1]
    assert a.intvty_per_s[0] == pytest.approx(10.0)  # 10 gaps in 1 s
    assert np.isnan(a.intvty_per_s[1])  # one token: no decode rate
    assert a.ttft_s.tolist() == pytest.approx([0.5, 0.5])
    assert a.e2e_s[0] == pytest.approx(1.5)


def test_identical_requests_give_a_zero_width_interval() -> None:
    a = RequestArrays.of([rec(i, 11, 1.0) for i in range(10)])
    ci = bootstrap_requests(a, window_s=2.0, n_accelerators=1, n_resamples=200)
    # 10 requests x (100 in + 11 out) over 2 s on one accelerator = 555 tokens/s.
    t = ci["tput_per_gpu"]
    assert t.estimate == pytest.approx(555.0) and t.lo == pytest.approx(555.0)
    assert t.hi == pytest.approx(555.0)
    assert ci["median_intvty"].estimate == pytest.approx(10.0)


def test_varied_requests_interval_brackets_estimate_and_is_seeded() -> None:
    a = RequestArrays.of([rec(i, 11, 0.5 + i / 10) for i in range(40)])
    ci1 = bootstrap_requests(a, window_s=10.0, n_accelerators=2, n_resamples=400, seed=7)
    ci2 = bootstrap_requests(a, window_s=10.0, n_accelerators=2, n_resamples=400, seed=7)
    assert ci1 == ci2
    m = ci1["median_intvty"]
    assert m.lo is not None and m.hi is not None and m.estimate is not None
    assert m.lo < m.estimate < m.hi
    # Throughput: every request has the same tokens, so resampling cannot move it.
    assert ci1["tput_per_gpu"].lo == ci1["tput_per_gpu"].hi == pytest.approx(40 * 111 / 20)


def rows(shift: float) -> list[dict[str, Any]]:
    # On the line y = 5000 - 10x (+ shift): reading at x gives the line's value + shift.
    return [
        {"point_id": f"c{c}", "median_intvty": x, "tput_per_gpu": 5000 - 10 * x + shift}
        for c, x in ((1, 300.0), (2, 200.0), (4, 100.0))
    ]


def test_band_over_identical_repeats_collapses() -> None:
    band = bootstrap_frontier_band([rows(0), rows(0)], xs=[150.0, 350.0], n_resamples=50)
    at150, at350 = band.intervals
    assert at150.estimate == pytest.approx(3500.0)
    assert at150.lo == pytest.approx(3500.0) and at150.hi == pytest.approx(3500.0)
    assert at350.estimate is None and at350.n_defined == 0  # beyond the measured range


def test_band_over_repeats_spans_the_repeat_spread() -> None:
    reps = [rows(-100), rows(0), rows(100)]
    band = bootstrap_frontier_band(reps, xs=[250.0], n_resamples=400, seed=1)
    (iv,) = band.intervals
    assert iv.estimate == pytest.approx(2500.0)  # mean of the three curves
    assert iv.lo is not None and iv.hi is not None
    assert 2400.0 - 1e-9 <= iv.lo < 2500.0 < iv.hi <= 2600.0 + 1e-9


def test_band_over_requests_reads_recomputed_frontier() -> None:
    # Two points: fast (intvty 20, 11 tokens) and slow-but-busy (intvty 10, more requests).
    fast = RequestArrays.of([rec(i, 11, 0.5) for i in range(5)])
    busy = RequestArrays.of([rec(i, 11, 1.0) for i in range(20)])
    band = bootstrap_frontier_band_requests(
        {"c1": (fast, 1.0), "c8": (busy, 1.0)}, xs=[10.0, 15.0, 25.0], n_resamples=50
    )
    at10, at15, at25 = band.intervals
    assert at10.estimate == pytest.approx(20 * 111)
    assert at15.estimate == pytest.approx((20 * 111 + 5 * 111) / 2)  # two knots: a line
    assert at15.lo == pytest.approx(at15.estimate)  # identical requests per point
    assert at25.estimate is None


def test_point_arrays_from_a_run_directory(tmp_path: Path) -> None:
    from scoville.analysis.load import load_point_arrays
    from scoville.errors import DataError
    from scoville.records.model import PointWindow
    from scoville.records.sink import RecordSink

    with RecordSink(tmp_path / "records.jsonl") as sink:
        for i in range(4):
            sink.write(rec(i, 11, 1.0))
        sink.write(RequestRecord("w", "c1", "warmup", 0, 5, chunk_ns=(1,), chunk_tokens=(1,)))
        sink.write_window(PointWindow("c1", 0, 2 * S, "concurrency", 1.0, 4))
    points = load_point_arrays(tmp_path)
    arrays, window_s = points["c1"]
    assert window_s == 2.0 and arrays.output_tokens.size == 4  # warmup left out
    ci = bootstrap_requests(arrays, window_s, n_resamples=20)
    assert ci["tput_per_gpu"].estimate == pytest.approx(4 * 111 / 2)
    with pytest.raises(DataError, match="records"):
        load_point_arrays(tmp_path / "nowhere")
