"""Golden values computed by hand for small records."""

from __future__ import annotations

import pytest

from scoville.metrics.compute import Declared, request_latency, summarize_point
from scoville.records.model import ErrorKind, PointWindow, RequestRecord

MS = 1_000_000


def rec(
    rid: str,
    start_ms: float,
    chunks_ms: list[float],
    end_ms: float,
    out: int,
    tokens: list[int] | None = None,
    inp: int = 100,
    error: ErrorKind | None = None,
    phase: str = "measure",
) -> RequestRecord:
    return RequestRecord(
        request_id=rid,
        point_id="c2",
        phase=phase,  # type: ignore[arg-type]
        start_ns=int(start_ms * MS),
        end_ns=int(end_ms * MS),
        chunk_ns=tuple(int(c * MS) for c in chunks_ms),
        chunk_tokens=tuple(tokens or [1] * len(chunks_ms)),
        input_tokens=inp,
        output_tokens=out,
        expected_input_tokens=100,
        error=error,
    )


def test_single_request_latencies() -> None:
    # sent at 0, frames at 100, 110, 130, 160 ms, stream ends at 170 ms, 4 tokens.
    lat = request_latency(rec("a", 0, [100, 110, 130, 160], 170, 4))
    assert lat.ttft_s == pytest.approx(0.100)
    assert lat.e2e_s == pytest.approx(0.170)
    assert lat.tpot_s == pytest.approx(0.070 / 3)  # (170 - 100) / (4 - 1) ms
    assert lat.itl_chunk_s == pytest.approx((0.010, 0.020, 0.030))


def test_multi_token_frames_split_gaps_evenly() -> None:
    # frames carry 1, 2 and 3 tokens: 20 ms gap -> 2 x 10 ms, 30 ms gap -> 3 x 10 ms
    lat = request_latency(rec("b", 0, [50, 70, 100], 100, 6, tokens=[1, 2, 3]))
    assert lat.itl_token_s == pytest.approx((0.01,) * 5)
    assert lat.itl_chunk_s == pytest.approx((0.02, 0.03))
    assert lat.tpot_s == pytest.approx(0.010)  # (100 - 50) / 5


def test_single_token_has_no_tpot() -> None:
    assert request_latency(rec("c", 0, [40], 41, 1)).tpot_s is None


def test_point_summary_throughput_failures_and_goodput() -> None:
    records = [
        rec("w", -500, [-400, -300], -200, 2, phase="warmup"),  # excluded
        rec("a", 0, [100, 200], 200, 2, inp=100),  # ttft .1, tpot .1, e2e .2
        rec("b", 0, [300, 400], 1000, 2, inp=100),  # ttft .3, tpot .7, e2e 1.0
        rec("x", 0, [], 50, 0, error=ErrorKind.HTTP_5XX),
    ]
    window = PointWindow("c2", 0, 1000 * MS, "concurrency", 2, 3)
    row = summarize_point(
        records, window, Declared(n_accelerators=2, power_w_per_accelerator=500.0, slo_ttft_s=0.2)
    ).to_dict()
    assert (row["n_sent"], row["n_ok"], row["n_failed"]) == (3, 2, 1)
    assert row["failure_rate"] == pytest.approx(1 / 3) and row["valid"] is False
    assert row["errors"] == {"http_5xx": 1}
    assert row["window_s"] == pytest.approx(1.0)
    assert row["req_per_s"] == pytest.approx(2.0)
    assert row["output_tok_per_s"] == pytest.approx(4.0)
    assert row["total_tok_per_s"] == pytest.approx(204.0)
    assert row["tput_per_gpu"] == pytest.approx(102.0)
    assert row["tput_per_kw"] == pytest.approx(204.0)  # 102 tok/s per 0.5 kW
    assert row["median_ttft"] == pytest.approx(0.2) and row["mean_e2e"] == pytest.approx(0.6)
    assert row["median_tpot"] == pytest.approx(0.4)
    # tail-aligned interactivity: p90 = 1 / p90(tpot) = 1 / (0.1 + 0.9 * 0.6)
    assert row["p90_intvty"] == pytest.approx(1 / 0.64)
    assert row["mean_intvty"] == pytest.approx((10 + 1 / 0.7) / 2)
    assert row["goodput_req_per_s"] == pytest.approx(1.0)  # only "a" meets TTFT <= 200 ms


def test_no_power_declared_gives_no_per_kw() -> None:
    window = PointWindow("c2", 0, 1000 * MS, "concurrency", 2, 1)
    row = summarize_point([rec("a", 0, [100, 200], 200, 2)], window, Declared()).to_dict()
    assert row["tput_per_kw"] is None and row["power_boundary"] is None
    assert row["goodput_req_per_s"] is None and row["valid"] is True
