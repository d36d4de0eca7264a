"""Calibration: the judging rules on golden levels, timing errors on a recorded truth, the
envelope file, and (where the foundation's client and driver are present) a real level
against the emitter on loopback."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from aiohttp import web

import scoville.client.selftest.calibrate as calibrate
from scoville.client.selftest.emitter import make_app
from scoville.records.model import PointWindow, RequestRecord

Criteria, Envelope, LevelResult = calibrate.Criteria, calibrate.Envelope, calibrate.LevelResult
MS = 1_000_000


def level(**kw: object) -> LevelResult:
    base = dict(
        streams=16,
        requests=32,
        failed=0,
        chunks=3200,
        offered_chunks_per_s=1600.0,
        achieved_chunks_per_s=1590.0,
        ts_err_p50_ms=0.2,
        ts_err_p99_ms=0.8,
        ts_err_max_ms=2.0,
        server_lag_p99_ms=0.5,
        loop_lag_p99_ms=0.6,
        client_cpu_share=0.3,
        flags=(),
    )
    base.update(kw)
    return LevelResult(**base)


def test_judge_rules() -> None:
    c = Criteria()
    assert calibrate.judge(level(), c) == ()
    assert calibrate.judge(level(ts_err_p99_ms=1.5), c) == ("timestamp_error", "machine_contended")
    assert calibrate.judge(level(ts_err_p99_ms=1.5), c, floor_p99_ms=0.9) == ()  # 2 x floor
    assert calibrate.judge(level(client_cpu_share=0.95), c) == ("client_cpu_saturated",)
    assert calibrate.judge(level(achieved_chunks_per_s=1000.0), c) == ("rate_shortfall",)
    late = level(achieved_chunks_per_s=1000.0, server_lag_p99_ms=9.0)
    flags = calibrate.judge(late, c)
    assert flags == ("reference_server_late",)
    assert dataclasses.replace(late, flags=flags).passed  # a note, not a failure
    assert calibrate.judge(level(failed=1), c) == ("failures",)


def test_timing_errors_against_recorded_truth() -> None:
    rec = RequestRecord(
        request_id="a",
        point_id="s1",
        phase="measure",
        start_ns=0,
        end_ns=100 * MS,
        chunk_ns=(21 * MS, 31 * MS + 500_000, 42 * MS),
        chunk_tokens=(1, 1, 1),
    )
    truth = {"a": {"arrived_ns": 0, "emit_ns": [20 * MS, 31 * MS, 40 * MS]}}
    ts_err, lag = calibrate.timing_errors([rec], truth, ttft_s=0.020, itl_s=0.010)
    assert ts_err == pytest.approx([1.0, 0.5, 2.0])
    assert lag == pytest.approx([0.0, 1.0, 0.0])  # intended 20, 30, 40 ms
    truth["a"]["intended_ns"] = [19 * MS, 29 * MS, 39 * MS]
    _, lag = calibrate.timing_errors([rec], truth, ttft_s=0.020, itl_s=0.010)
    assert lag == pytest.approx([1.0, 2.0, 1.0])


def test_envelope_file_round_trip_and_flags(tmp_path: Path) -> None:
    env = Envelope(
        max_streams=16,
        max_chunks_per_s=1554.0,
        limited_by="client",
        floor_ts_err_p99_ms=0.3,
        itl_s=0.01,
        ttft_s=0.02,
        criteria=Criteria(),
        levels=(level(flags=("timestamp_error",)),),
    )
    calibrate.save_envelope(env, tmp_path / "cal.json")
    assert calibrate.load_envelope(tmp_path / "cal.json") == env
    assert calibrate.envelope_flags(8, 800.0, env) == []
    assert calibrate.envelope_flags(32, 800.0, env) == ["beyond_client_envelope"]
    assert calibrate.envelope_flags(8, 2000.0, env) == ["beyond_client_envelope"]


def test_point_chunk_rate_counts_frames_inside_the_window() -> None:
    w = PointWindow("c2", 0, 2_000 * MS, "concurrency", 2, sent=1)
    r = RequestRecord("a", "c2", "measure", 0, 3_000 * MS, chunk_ns=(1, 2, 3, 2_500 * MS))
    other = RequestRecord("b", "c4", "measure", 0, 1, chunk_ns=(1, 2))
    assert calibrate.point_chunk_rate_per_s([r, other], w) == pytest.approx(1.5)


async def test_one_level_against_the_emitter_on_loopback() -> None:
    runner = web.AppRunner(make_app(ttft_s=0.010, itl_s=0.005))
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}"
    try:
        lv = await calibrate.measure_level(
            url,
            streams=2,
            tokens_per_request=20,
            requests_per_stream=2,
            ttft_s=0.010,
            itl_s=0.005,
            criteria=Criteria(ts_err_p99_ms=50.0),
        )
    finally:
        await runner.cleanup()
    assert (lv.requests, lv.failed, lv.chunks) == (4, 0, 80)
    assert lv.ts_err_p50_ms is not None and 0.0 <= lv.ts_err_p50_ms < 50.0
    assert lv.achieved_chunks_per_s > 0.5 * lv.offered_chunks_per_s
