"""A server's mistakes become typed, flagged records, never a crash: each fault is served for
real by the reference server on loopback (see its `x_fault` switches)."""

from __future__ import annotations

import time
from typing import Any

from scoville.client.driver import PointPlan, count_chunk_tokens, run_point
from scoville.client.openai_sse import OpenAIStreamingServer
from scoville.client.seam import Exchange, GenerateRequest, MonotonicClock
from scoville.metrics.compute import Declared, summarize
from scoville.records.model import ErrorKind, PointWindow, RequestRecord
from scoville.records.sink import MemorySink
from scoville.targets.http import ServerTokenizer
from scoville.targets.reference_server import ReferenceServer, Schedule

FAST = Schedule(ttft_s=0.003, itl_s=0.001)


def _req(i: int, fault: str | None = None, max_tokens: int = 6) -> GenerateRequest:
    return GenerateRequest(
        request_id=f"m{i}",
        api="completions",
        input_tokens=2,
        max_tokens=max_tokens,
        prompt="hello there",
        extra_body={"x_fault": fault} if fault else {},
    )


async def _run(
    schedule: Schedule,
    reqs: list[GenerateRequest],
    tokenizer: Any = None,
    concurrency: int = 2,
    **server_kw: Any,
) -> dict[str, RequestRecord]:
    sink = MemorySink()
    async with ReferenceServer(schedule) as url:
        clock = MonotonicClock()
        server = OpenAIStreamingServer(url, "reference", clock, **server_kw)
        tok = tokenizer(url) if callable(tokenizer) else tokenizer
        plan = PointPlan("c", "concurrency", concurrency, [], reqs, concurrency)
        try:
            await run_point(server, clock, plan, sink, tok)
        finally:
            await server.close()
    assert len(sink.records) == len(reqs)  # every request sent is one record
    return {r.request_id: r for r in sink.records}


async def test_cut_streams_recounted_by_a_dead_servers_tokenizer_do_not_crash() -> None:
    """The server's /tokenize drops every connection (the server died): the cut streams stay
    `stream_cut`, and an intact multi-token stream that cannot be counted is `token_count`."""
    sched = Schedule(ttft_s=0.003, itl_s=0.001, tokens_per_chunk=2, tokenize_fault="reset")
    reqs = [_req(0, "cut:2"), _req(1, "cut:1"), _req(2)]
    out = await _run(sched, reqs, tokenizer=lambda url: ServerTokenizer(url, "reference"))
    for rid in ("m0", "m1"):
        assert out[rid].error == ErrorKind.STREAM_CUT
        assert "tokenizer failed" in out[rid].error_detail
    assert out["m2"].error == ErrorKind.TOKEN_COUNT
    assert out["m2"].chunk_ns and out["m2"].token_source == "none"


async def test_lying_usage_is_flagged_and_the_point_is_invalid() -> None:
    reqs = [_req(i, f) for i, f in enumerate(["usage:str", "usage:neg", "usage:x10", None])]
    out = await _run(FAST, reqs)
    for rid, why in (("m0", "'6'"), ("m1", "-665"), ("m2", "60 exceeds max_tokens 6")):
        r = out[rid]
        assert r.ok and why in r.usage_issue, (rid, r.usage_issue)
        assert r.output_tokens == 6  # the six frames counted, not the server's claim
    assert out["m3"].ok and out["m3"].usage_issue == "" and out["m3"].token_source == "usage"
    records = list(out.values())
    t0, t1 = min(r.start_ns for r in records), max(r.end_ns for r in records)
    window = PointWindow("c", t0, t1, "concurrency", 2, 4)
    row = summarize(records, [window], Declared(), {})[0].to_dict()
    assert row["usage_flagged"] == 3 and row["n_ok"] == 4 and row["valid"] is False


class _Words:
    """A whitespace tokenizer: the reference server streams ' tok' words."""

    name = "words"

    def encode(self, text: str) -> list[int]:
        return [0] * len(text.split())

    def decode(self, ids: list[int]) -> str:
        return " tok" * len(ids)


def test_usage_far_from_the_local_count_is_not_believed() -> None:
    """Six frames of two words: 12 tokens counted locally, so [4, 26] is believable."""
    for claimed, believed in ((30, False), (26, True), (4, True), (3, False)):
        ex = Exchange(start_ns=0, chunk_ns=list(range(6)), chunk_text=[" tok tok"] * 6)
        ex.completion_tokens = claimed
        counts, source = count_chunk_tokens(ex, _Words())
        assert list(counts) == [2] * 6
        assert (source, ex.usage_issue == "") == (("usage", True) if believed else ("local", False))
        assert ex.completion_tokens == (claimed if believed else None)


async def test_crlf_streams_and_huge_frames_are_read() -> None:
    reqs = [_req(0, "crlf"), _req(1, "huge:5000000"), _req(2)]
    out = await _run(FAST, reqs, concurrency=3)
    assert all(r.ok for r in out.values()), [r.error_detail for r in out.values()]
    assert out["m0"].output_tokens == 6 and len(out["m0"].chunk_ns) == 6


async def test_a_trickle_and_a_silent_server_hit_the_total_deadline() -> None:
    reqs = [_req(0, "trickle:20"), _req(1, "hang")]
    t0 = time.monotonic()
    out = await _run(FAST, reqs, request_timeout_s=1.0)
    assert time.monotonic() - t0 < 3.0
    for r in out.values():
        assert r.error == ErrorKind.TIMEOUT and "within 1 s" in r.error_detail, r.error_detail


async def test_non_streams_html_pages_echoes_and_retry_after() -> None:
    key = "sk-scoville-test-0123456789"
    reqs = [_req(0, "json200"), _req(1, "nodata"), _req(2, "html"), _req(3, "echo")]
    reqs.append(_req(4, "429"))
    out = await _run(FAST, reqs, api_key=key)
    assert (
        out["m0"].error == ErrorKind.MALFORMED and "not an event stream" in out["m0"].error_detail
    )
    assert out["m1"].error == ErrorKind.MALFORMED and "no data:" in out["m1"].error_detail
    assert out["m2"].error == ErrorKind.HTTP_5XX and "Bad Gateway" in out["m2"].error_detail
    assert out["m3"].error == ErrorKind.HTTP_4XX
    assert key not in out["m3"].error_detail and "[redacted]" in out["m3"].error_detail
    assert out["m4"].error == ErrorKind.RATE_LIMITED
    assert out["m4"].error_detail.startswith("Retry-After: 2;")


async def test_keep_alive_reuse_and_the_stale_connection_retry() -> None:
    reqs = [_req(i) for i in range(4)]
    kept = await _run(FAST, reqs, concurrency=1)
    connects = [kept[f"m{i}"].connect_ms for i in range(4)]
    assert connects[0] is not None and connects[0] > 0
    assert connects[1:] == [0.0, 0.0, 0.0]  # one connection carried all four
    fresh = await _run(FAST, reqs, concurrency=1, fresh_connections=True)
    assert all((r.connect_ms or 0) > 0 and r.retries == 0 for r in fresh.values())
    # A server that drops every reused connection unanswered: a request on a pooled
    # connection fails before any byte came back and is sent once more on a connection of
    # its own (not pooled), so the next request opens a new pooled one: 0, 1, 0, 1.
    once = Schedule(ttft_s=0.003, itl_s=0.001, one_request_per_connection=True)
    dropped = await _run(once, reqs, concurrency=1)
    assert all(r.ok for r in dropped.values())
    assert [dropped[f"m{i}"].retries for i in range(4)] == [0, 1, 0, 1]
    for r in dropped.values():
        assert r.send_ns is not None and r.send_ns <= r.start_ns < r.chunk_ns[0]


async def test_the_retry_never_takes_another_stale_pooled_connection() -> None:
    """Four connections pooled by a first wave, all dropped by the server when reused: each
    later request fails once on a pooled one and succeeds on a connection of its own."""
    once = Schedule(ttft_s=0.003, itl_s=0.001, one_request_per_connection=True)
    sink = MemorySink()
    async with ReferenceServer(once) as url:
        clock = MonotonicClock()
        server = OpenAIStreamingServer(url, "reference", clock)
        try:
            wave = PointPlan("c4", "concurrency", 4, [], [_req(i) for i in range(4)], 4)
            await run_point(server, clock, wave, sink)
            later = PointPlan("c1", "concurrency", 1, [], [_req(i) for i in range(4, 7)], 1)
            await run_point(server, clock, later, sink)
        finally:
            await server.close()
    assert [r.error for r in sink.records] == [None] * 7, [r.error_detail for r in sink.records]
    assert [r.retries for r in sink.records[4:]] == [1, 1, 1]
