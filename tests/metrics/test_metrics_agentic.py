"""Agentic metrics on two hand-built records (every expected value computed by hand)."""

from __future__ import annotations

import pytest

from scoville.metrics.agentic import agentic_point, throughput_vs_interactivity
from scoville.records.model import ErrorKind, PointWindow, RequestRecord

MS = 1_000_000


def _rec(
    rid: str,
    start_ms: int,
    chunks_ms: list[int],
    cached: int | None,
    play: int,
    think_s: float,
    expected: int,
    phase: str = "measure",
) -> RequestRecord:
    return RequestRecord(
        request_id=rid,
        point_id="lanes1",
        phase=phase,  # type: ignore[arg-type]
        start_ns=start_ms * MS,
        end_ns=chunks_ms[-1] * MS,
        chunk_ns=tuple(c * MS for c in chunks_ms),
        chunk_tokens=(1,) * len(chunks_ms),
        input_tokens=100,
        output_tokens=len(chunks_ms),
        expected_input_tokens=100,
        expected_output_tokens=len(chunks_ms),
        cached_tokens=cached,
        scheduled_ns=start_ms * MS,
        tags={"play": play, "think_s": think_s, "expected_cached_tokens": expected},
    )


A = _rec("a", 0, [100, 110, 130], cached=80, play=0, think_s=0.5, expected=64)
B = _rec("b", 1000, [1400, 1420], cached=0, play=1, think_s=0.0, expected=0)
PRIMER = _rec("p", 0, [50], cached=0, play=0, think_s=0.0, expected=0, phase="primer")
FAILED = RequestRecord(
    request_id="f",
    point_id="lanes1",
    phase="measure",
    start_ns=5 * MS,
    end_ns=6 * MS,
    error=ErrorKind.CONTEXT_OVERFLOW,
    tags={"play": 2},
)
WINDOW = PointWindow("lanes1", 0, 2000 * MS, "lanes", 1.0, 3)


def test_golden_point() -> None:
    row = agentic_point([A, B, PRIMER, FAILED], WINDOW, n_accelerators=2, slo_ttft_s=0.2)
    assert (row["n_sent"], row["n_ok"], row["n_failed"], row["n_primers"]) == (3, 2, 1, 1)
    assert row["overflow_share"] == pytest.approx(1 / 3)
    assert row["median_ttft_hit"] == pytest.approx(0.1)
    assert row["median_ttft_miss"] == pytest.approx(0.4)
    assert row["intvty_agentx"] == pytest.approx(50.0)  # ITLs 10, 20, 20 ms; p90 = 20 ms
    assert row["intvty_inferencex"] == pytest.approx(1 / 0.0175)  # TPOTs 15 and 20 ms
    assert row["median_e2e_intvty"] == pytest.approx((3 / 0.13 + 2 / 0.42) / 2)
    assert row["median_e2e"] == pytest.approx((0.13 + 0.42) / 2)
    assert row["cache_hit_rate_measured"] == pytest.approx(0.4)
    assert row["cache_hit_rate_theoretical"] == pytest.approx(0.32)
    assert row["output_tok_per_s"] == pytest.approx(2.5)
    assert row["output_tput_per_accelerator"] == pytest.approx(1.25)
    # plays: 0 (A, 0.13 s), 1 (B, 0.42 s), 2 (the failed request, 1 ms)
    assert row["n_plays"] == 3
    assert row["median_session_makespan"] == pytest.approx(0.13)
    assert row["request_time_share"] == pytest.approx(0.551 / (0.551 + 0.5))
    assert row["goodput_ttft_req_per_s"] == pytest.approx(0.5)
    series = row["cache_series"]
    assert len(series) == 10
    assert series[0][1:] == pytest.approx([0.8, 0.64])  # A starts in the first tenth
    assert series[5][1:] == pytest.approx([0.0, 0.0])  # B starts at 1.0 s of 2.0 s


def test_hit_split_falls_back_to_expectation_without_server_counts() -> None:
    a = _rec("a", 0, [100, 110], cached=None, play=0, think_s=0.0, expected=60)
    b = _rec("b", 0, [300, 310], cached=None, play=0, think_s=0.0, expected=10)
    row = agentic_point([a, b], WINDOW)
    assert row["median_ttft_hit"] == pytest.approx(0.1)
    assert row["median_ttft_miss"] == pytest.approx(0.3)
    assert row["cache_hit_rate_measured"] is None


def test_curve_sorted_by_lanes() -> None:
    rows = [
        {"lanes": 4.0, "intvty_agentx": 20.0, "output_tput_per_accelerator": 300.0},
        {"lanes": 1.0, "intvty_agentx": 50.0, "output_tput_per_accelerator": 90.0},
        {"lanes": 2.0, "intvty_agentx": None, "output_tput_per_accelerator": 1.0},
    ]
    assert throughput_vs_interactivity(rows) == [(1.0, 50.0, 90.0), (4.0, 20.0, 300.0)]
