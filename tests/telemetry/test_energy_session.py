"""Per-point energy fields (hand-computed golden values), client-integrity rules, and the
TelemetrySession end to end against a loopback /metrics server."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from aiohttp import web

from scoville.client.selftest.integrity import (
    ClientMonitor,
    ClientSeries,
    client_fields,
    client_reason,
    cpu_share,
    saturation_flags,
)
from scoville.records.model import ErrorKind, PointWindow, RequestRecord
from scoville.telemetry.energy import point_energy_fields
from scoville.telemetry.series import DeviceInfo, DeviceSeries, PowerReading, PowerSeries
from scoville.telemetry.session import TelemetrySession
from scoville.telemetry.sources import DeclaredSource

S = 1_000_000_000


def constant(device: str, boundary: str, watts: float, seconds: int = 20) -> DeviceSeries:
    ds = DeviceSeries(DeviceInfo(device, "test", boundary))
    for k in range(seconds + 1):
        ds.append(k * S, PowerReading(device, power_w=watts))
    return ds


def rec(i: int, point: str = "c2", phase: str = "measure", **kw: object) -> RequestRecord:
    base: dict[str, object] = dict(
        request_id=f"r{i}",
        point_id=point,
        phase=phase,
        start_ns=3 * S,
        end_ns=4 * S,
        chunk_ns=(3 * S + 100_000_000, 3 * S + 120_000_000, 3 * S + 140_000_000),
        chunk_tokens=(1, 1, 1),
        input_tokens=100,
        output_tokens=50,
    )
    base.update(kw)
    return RequestRecord(**base)  # type: ignore[arg-type]


WINDOW = PointWindow("c2", 2 * S, 12 * S, "concurrency", 2.0, sent=5)


def test_point_energy_fields_golden() -> None:
    series = PowerSeries(
        devices=[
            constant("gpu0", "accelerator-board", 300.0),
            constant("gpu1", "accelerator-board", 500.0),
            constant("bmc", "node-wall", 1200.0),
        ]
    )
    records = [rec(i) for i in range(4)]
    records += [rec(9, error=ErrorKind.TIMEOUT), rec(10, phase="warmup")]
    f = point_energy_fields(series, [WINDOW], records, n_accelerators=2)["c2"]
    # 800 W on the boards for 10 s; 4 ok requests with 400 input and 200 output tokens.
    assert f["energy_j"] == pytest.approx(8000.0)
    assert f["energy_per_request_j"] == pytest.approx(2000.0)
    assert f["energy_per_input_token_j"] == pytest.approx(20.0)
    assert f["energy_per_output_token_j"] == pytest.approx(40.0)
    assert f["energy_per_total_token_j"] == pytest.approx(8000.0 / 600)
    assert f["measured_power_w_per_accelerator"] == pytest.approx(400.0)
    assert f["measured_power_boundary"] == "board-measured"
    assert f["output_tput_per_measured_kw"] == pytest.approx(25.0)  # 20 tok/s / 0.8 kW
    assert f["input_tput_per_measured_kw"] == pytest.approx(50.0)
    assert f["tput_per_measured_kw"] == pytest.approx(75.0)
    assert f["power_valid"] is True and f["power_flags"] == []
    assert f["energy_j_node_wall"] == pytest.approx(12000.0)
    assert f["power_valid_node_wall"] is True


def test_no_power_source_gives_empty_invalid_fields() -> None:
    f = point_energy_fields(None, [WINDOW], [rec(0)])["c2"]
    assert f["energy_j"] is None and f["power_valid"] is False
    assert f["power_flags"] == ["no_power_source"]


def test_scheduling_lag_and_saturation_rules() -> None:
    records = [rec(i, scheduled_ns=3 * S - (i + 1) * 1_000_000) for i in range(100)]
    series = ClientSeries(
        interval_s=0.02,
        lag_t_ns=[2 * S, 5 * S, 20 * S],
        lag_ns=[1_000_000, 3_000_000, 900_000_000],  # the last is outside the window
        cpu_t_ns=[0, 20 * S],
        cpu_s=[0.0, 19.0],
    )
    f = client_fields(WINDOW, records, series)
    assert f["sched_lag_p50_ms"] == pytest.approx(50.5)  # lags are 1..100 ms
    assert f["sched_lag_p99_ms"] == pytest.approx(99.01)
    assert f["sched_lag_max_ms"] == pytest.approx(100.0)
    assert f["loop_lag_max_ms"] == pytest.approx(3.0)
    assert f["client_cpu_share"] == pytest.approx(0.95)
    # a loop lag p99 of ~3 ms is under the absolute 10 ms limit (no rule relative to the ITL)
    assert f["client_flags"] == ["client_cpu_saturated", "sched_lag_high"]
    assert f["client_saturated"] is True


def test_clean_point_has_no_flags() -> None:
    fields = {"client_cpu_share": 0.3, "loop_lag_p99_ms": 0.5, "sched_lag_p99_ms": 2.0}
    assert saturation_flags(fields, median_itl=20.0) == []
    assert saturation_flags({"loop_lag_p99_ms": 11.0}, None) == ["loop_lag_high"]


def test_client_reason_names_each_flag_with_its_value() -> None:
    fields = {
        "client_cpu_share": 0.95,
        "loop_lag_p99_ms": 12.5,
        "client_flags": ["client_cpu_saturated", "loop_lag_high", "beyond_client_envelope"],
        "client_envelope": "4 streams, 390 chunks/s",
    }
    assert client_reason(fields) == (
        "client CPU 95% of a core (>= 90%); client loop lag p99 12.5 ms (> 10 ms); "
        "beyond the calibrated client envelope (4 streams, 390 chunks/s)"
    )
    assert client_reason({"client_flags": []}) is None


def test_cpu_share_needs_samples_spanning_the_window() -> None:
    series = ClientSeries(interval_s=0.02, cpu_t_ns=[5 * S, 6 * S], cpu_s=[0.0, 0.5])
    assert cpu_share(series, 0, 10 * S) is None
    assert cpu_share(series, 5 * S, 6 * S) == pytest.approx(0.5)


async def test_monitor_sees_a_blocked_event_loop() -> None:
    mon = ClientMonitor(interval_s=0.005, cpu_every=2)
    await mon.start()
    await asyncio.sleep(0.05)
    time.sleep(0.08)  # the loop is blocked: every client timestamp would be late now
    await asyncio.sleep(0.05)
    series = await mon.stop()
    assert max(series.lag_ns) >= 70_000_000
    assert len(series.cpu_s) >= 3 and series.cpu_s == sorted(series.cpu_s)


async def test_session_end_to_end_with_declared_power_and_loopback_metrics() -> None:
    body = "vllm:num_requests_running 3\nvllm:generation_tokens_total 10\n"

    async def handler(request: web.Request) -> web.Response:
        return web.Response(text=body)

    app = web.Application()
    app.router.add_get("/metrics", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}/metrics"
    try:
        session = TelemetrySession(
            [DeclaredSource(700.0, 2)], power_rate_hz=50, metrics_url=url, scrape_interval_s=0.05
        )
        await session.start()
        t0 = time.monotonic_ns()
        await asyncio.sleep(0.4)
        t1 = time.monotonic_ns()
        result = await session.stop()
    finally:
        await runner.cleanup()
    win = PointWindow("c1", t0, t1, "concurrency", 1.0, sent=1)
    f = result.point_fields([win], [rec(0, point="c1")], n_accelerators=2)["c1"]
    assert f["measured_power_w"] == pytest.approx(1400.0)
    assert f["energy_j"] == pytest.approx(1400.0 * (t1 - t0) / 1e9)
    assert f["measured_power_boundary"] == "declared"
    assert f["server_mean_running_requests"] == 3.0
    assert f["loop_lag_p99_ms"] is not None and f["client_cpu_share"] is not None
    doc = json.loads(json.dumps(result.to_json_dict()))
    assert doc["schema"] == "scoville.telemetry/1"
    assert len(doc["power"]["devices"]) == 2 and doc["server_metrics"]["url"] == url
