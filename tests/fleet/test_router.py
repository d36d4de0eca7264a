"""The router on loopback in front of the reference server (a real process): it names the
replica, retries a refused connect elsewhere, and applies its faults as stated."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from scoville.client.openai_sse import OpenAIStreamingServer
from scoville.client.ports import free_port
from scoville.client.seam import Exchange, GenerateRequest, MonotonicClock
from scoville.fleet.router import Router
from scoville.records.model import ErrorKind


def _req(rid: str, max_tokens: int = 8) -> GenerateRequest:
    return GenerateRequest(
        rid, "completions", 4, max_tokens, prompt="a b c d", extra_body={"user": rid}
    )


async def _through(router: Router, rids: list[str], max_tokens: int = 8) -> list[Exchange]:
    await router.start()
    server = OpenAIStreamingServer(router.url, "m", MonotonicClock())
    try:
        return [await server.generate(_req(r, max_tokens)) for r in rids]
    finally:
        await server.close()
        await router.stop()


def _log(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_refused_replica_is_skipped_and_the_request_retried(
    fast_url: str, tmp_path: Path
) -> None:
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    router = Router([dead, fast_url], tmp_path / "replicas.jsonl", retries=1)
    exs = asyncio.run(_through(router, ["a", "b", "c"]))
    assert all(ex.error is None for ex in exs)
    rows = _log(tmp_path / "replicas.jsonl")
    # "a" tried the dead replica first (round robin starts at 0), then replica 1: 2 attempts;
    # the dead one is then down, so "b" and "c" go straight to replica 1.
    assert [(r["request_id"], r["replica"], r["attempts"]) for r in rows] == [
        ("a", 1, 2),
        ("b", 1, 1),
        ("c", 1, 1),
    ]


def test_drop_cuts_the_stream_and_the_router_says_so(fast_url: str, tmp_path: Path) -> None:
    router = Router([fast_url], tmp_path / "replicas.jsonl")
    router.faults[0].drop_fraction = 1.0
    (ex,) = asyncio.run(_through(router, ["x"], max_tokens=32))
    assert ex.error == ErrorKind.STREAM_CUT
    assert _log(tmp_path / "replicas.jsonl")[0]["outcome"] == "dropped"


def test_latency_and_slow_stretch_what_the_client_sees(fast_url: str, tmp_path: Path) -> None:
    # The reference server: first token 5 ms after arrival, then 2 ms per token (32 tokens:
    # about 70 ms). +300 ms before the first byte must show in TTFT; x4 must stretch E2E to
    # well over twice the unslowed E2E.
    def e2e_ms(ex: Exchange) -> float:
        return (ex.end_ns - ex.start_ns) / 1e6

    plain = Router([fast_url], tmp_path / "a.jsonl")
    (base,) = asyncio.run(_through(plain, ["p"], max_tokens=32))
    late = Router([fast_url], tmp_path / "b.jsonl")
    late.faults[0].add_ms = 300.0
    (lat,) = asyncio.run(_through(late, ["l"], max_tokens=32))
    assert (lat.chunk_ns[0] - lat.start_ns) / 1e6 >= 300.0
    slow = Router([fast_url], tmp_path / "c.jsonl")
    slow.faults[0].slow_factor = 4.0
    (slo,) = asyncio.run(_through(slow, ["s"], max_tokens=32))
    assert slo.error is None and e2e_ms(slo) > 2 * e2e_ms(base)
