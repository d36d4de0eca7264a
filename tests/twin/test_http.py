"""The HTTP twin on 127.0.0.1: OpenAI-compatible streaming, usage, metrics, faults, timing."""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

import aiohttp
import pytest

from scoville.client.plan import length_requests
from scoville.twin.fast import run_point
from scoville.twin.http import TwinHttpServer
from scoville.twin.sse import Faults
from scoville.twin.target import parse_twin_url

CFG = parse_twin_url("twin:H200/Llama-3.1-8B")


async def _stream(
    url: str, body: dict[str, Any], headers: dict[str, str] | None = None, path: str = "completions"
) -> tuple[int, list[tuple[float, str]]]:
    """(status, [(arrival_s, data line)]) of one request; arrival relative to the send."""
    frames: list[tuple[float, str]] = []
    async with aiohttp.ClientSession() as s:
        t0 = time.monotonic()
        async with s.post(f"{url}/v1/{path}", json=body, headers=headers or {}) as r:
            if r.status != 200:
                return r.status, [(0.0, await r.text())]
            try:
                async for raw in r.content:
                    line = raw.decode().strip()
                    if line.startswith("data: "):
                        frames.append((time.monotonic() - t0, line[6:]))
            except aiohttp.ClientPayloadError:
                frames.append((time.monotonic() - t0, "<cut>"))
    return 200, frames


def _body(n_prompt: int = 100, max_tokens: int = 5, first: int = 0, **kw: Any) -> dict[str, Any]:
    return {
        "model": "m",
        "prompt": list(range(first, first + n_prompt)),
        "max_tokens": max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
        **kw,
    }


async def test_completions_stream_tokens_usage_and_done() -> None:
    async with TwinHttpServer(CFG, speedup=100.0) as url:
        status, frames = await _stream(url, _body(max_tokens=5))
    assert status == 200
    datas = [f for _, f in frames]
    assert datas[-1] == "[DONE]"
    chunks = [json.loads(d) for d in datas[:-1]]
    text_chunks = [c for c in chunks if c["choices"]]
    assert [c["choices"][0]["text"] for c in text_chunks] == [" tok"] * 5
    assert text_chunks[-1]["choices"][0]["finish_reason"] == "length"
    assert chunks[-1]["usage"] == {
        "prompt_tokens": 100,
        "completion_tokens": 5,
        "total_tokens": 105,
        "prompt_tokens_details": {"cached_tokens": 0},
    }


async def test_chat_stream_starts_with_the_role() -> None:
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "hi there"}],
        "max_tokens": 3,
        "stream": True,
    }
    async with TwinHttpServer(CFG, speedup=100.0) as url:
        _, frames = await _stream(url, body, path="chat/completions")
    chunks = [json.loads(d) for _, d in frames[:-1]]
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert [c["choices"][0]["delta"]["content"] for c in chunks[1:]] == [" tok"] * 3


async def test_repeated_prompt_hits_the_prefix_cache_and_metrics_show_it() -> None:
    async with TwinHttpServer(CFG, speedup=100.0) as url:
        await _stream(url, _body(n_prompt=640))
        _, frames = await _stream(url, _body(n_prompt=640))
        async with aiohttp.ClientSession() as s, s.get(f"{url}/metrics") as r:
            metrics = await r.text()
        async with aiohttp.ClientSession() as s, s.get(f"{url}/v1/models") as r:
            models = await r.json()
    usage = json.loads(frames[-2][1])["usage"]
    assert usage["prompt_tokens_details"]["cached_tokens"] == 639
    for name in (
        "vllm:num_requests_running",
        "vllm:num_requests_waiting",
        "vllm:gpu_cache_usage_perc",
        "vllm:kv_cache_usage_perc",
        "vllm:generation_tokens_total",
        "vllm:prefix_cache_queries_total",
    ):
        assert f'{name}{{model_name="Llama-3.1-8B"}}' in metrics
    assert 'vllm:prefix_cache_hits_total{model_name="Llama-3.1-8B"} 639' in metrics
    assert 'vllm:generation_tokens_total{model_name="Llama-3.1-8B"} 10' in metrics
    assert models["data"][0]["id"] == "Llama-3.1-8B"


async def test_context_overflow_is_a_400() -> None:
    async with TwinHttpServer(CFG, speedup=100.0) as url:
        status, frames = await _stream(url, _body(n_prompt=131000, max_tokens=1000))
    assert status == 400 and "maximum context length" in frames[0][1]


async def test_a_prompt_over_max_num_tokens_gets_tensorrt_llm_s_400() -> None:
    trt = parse_twin_url("twin:H200/Llama-3.1-8B?framework=trt&max_batched_tokens=2048")
    async with TwinHttpServer(trt, speedup=100.0) as url:
        status, frames = await _stream(url, _body(n_prompt=3000, max_tokens=5))
    assert status == 400
    assert "The sum of prompt length (3000), query length (0) should not exceed " in frames[0][1]
    assert "max_num_tokens (2048)" in frames[0][1]


async def test_token_times_follow_the_simulation() -> None:
    # slowed 40x so that a late wake-up stays below half a step gap: on a 2-core VM a token
    # due after an idle wait arrived up to 85 ms late (the first, after 1.2 s idle; later
    # tokens 15-30 ms), over the 68 ms half gap of a 20x slowdown
    speed = 0.025
    fast = run_point(CFG, length_requests(2, 2000, 6), "c1", concurrency=1).records
    async with TwinHttpServer(CFG, speedup=speed) as url:
        # distinct prompts: the second must not hit the prefix cache
        got = [
            await _stream(url, _body(n_prompt=2000, max_tokens=6, first=i * 9999)) for i in range(2)
        ]
    for rec, (_, frames) in zip(fast, got, strict=True):
        arrivals = [t for t, d in frames if d != "[DONE]" and json.loads(d)["choices"]]
        predicted = [(t - rec.start_ns) / 1e9 / speed for t in rec.chunk_ns]
        assert len(arrivals) == 6
        # a busy machine only delays a token, never sends it early: each arrives no more than
        # 10 ms before its simulated time and less than half a step gap after it, so every
        # token lands on its own step
        half_gap = min(b - a for a, b in itertools.pairwise(predicted)) / 2
        for a, p in zip(arrivals, predicted, strict=True):
            assert -0.01 <= a - p < half_gap, (a, p)


@pytest.mark.parametrize(("mode", "status"), [("5xx", 500), ("429", 429)])
async def test_status_faults_by_header(mode: str, status: int) -> None:
    async with TwinHttpServer(CFG, speedup=100.0) as url:
        got, _ = await _stream(url, _body(), headers={"X-Scoville-Fault": mode})
        ok, _ = await _stream(url, _body())
    assert (got, ok) == (status, 200)


async def test_reset_cuts_the_stream_after_n_tokens() -> None:
    async with TwinHttpServer(CFG, speedup=100.0) as url:
        _, frames = await _stream(
            url,
            _body(max_tokens=10),
            headers={"X-Scoville-Fault": "reset", "X-Scoville-Fault-After": "3"},
        )
    assert len([f for _, f in frames if f.startswith("{")]) == 3
    assert frames[-1][1] == "<cut>" or "[DONE]" not in [f for _, f in frames]


async def test_malformed_frame_and_stall_set_via_admin_endpoint() -> None:
    async with TwinHttpServer(CFG, speedup=100.0) as url:
        async with aiohttp.ClientSession() as s:
            r = await s.post(f"{url}/admin/faults", json={"mode": "malformed", "after_tokens": 2})
            assert r.status == 200
            bad = await s.post(f"{url}/admin/faults", json={"mode": "explode"})
            assert bad.status == 400
        _, frames = await _stream(url, _body(max_tokens=4))
        bad_frames = []
        for _, d in frames:
            try:
                json.loads(d)
            except json.JSONDecodeError:
                bad_frames.append(d)
        assert bad_frames and bad_frames[0] != "[DONE]"
        async with aiohttp.ClientSession() as s:
            await s.post(
                f"{url}/admin/faults", json={"mode": "stall", "after_tokens": 1, "stall_s": 0.3}
            )
        _, frames = await _stream(url, _body(max_tokens=3))
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(frames)]
    assert max(gaps) >= 0.3


async def test_every_nth_request_and_slow_node() -> None:
    async with TwinHttpServer(CFG, speedup=1.0, faults=Faults(mode="5xx", every_n=2)) as url:
        statuses = [(await _stream(url, _body()))[0] for _ in range(4)]
    assert statuses == [200, 500, 200, 500]
    async with TwinHttpServer(CFG, speedup=0.5) as url:
        # a busy machine only delays a stream: the faster of two normal ones is the normal time
        # (one CI run read 0.28 s against the 0.12-0.14 s of a quiet machine)
        runs = [(await _stream(url, _body(n_prompt=500, max_tokens=8)))[1] for _ in range(2)]
        normal = min(runs, key=lambda frames: frames[-1][0])
        _, slow = await _stream(
            url, _body(n_prompt=500, max_tokens=8), headers={"X-Scoville-Fault": "slow"}
        )
    assert slow[-1][0] > 2.0 * normal[-1][0]


def test_fault_validation() -> None:
    with pytest.raises(ValueError, match="modes"):
        Faults.from_json({"mode": "nope"})
    with pytest.raises(ValueError, match="every_n"):
        Faults.from_json({"mode": "5xx", "every_n": 0})


async def test_tokenize_round_trip() -> None:
    async with TwinHttpServer(CFG, speedup=100.0) as url, aiohttp.ClientSession() as s:
        r = await s.post(f"{url}/tokenize", json={"model": "m", "prompt": "hello world"})
        ids = (await r.json())["tokens"]
        r = await s.post(f"{url}/detokenize", json={"model": "m", "tokens": ids})
        assert (await r.json())["prompt"] == "hello world"
