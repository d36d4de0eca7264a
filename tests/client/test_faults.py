"""Failures become typed records; every request sent is accounted for exactly once."""

from __future__ import annotations

import asyncio

from scoville.client.driver import PointPlan, run_point
from scoville.client.openai_sse import OpenAIStreamingServer
from scoville.client.ports import free_port
from scoville.client.seam import GenerateRequest, MonotonicClock
from scoville.records.model import ErrorKind
from scoville.records.sink import RecordSink, read_records
from scoville.targets.reference_server import ReferenceServer, Schedule

FAULTS = {
    "500": ErrorKind.HTTP_5XX,
    "429": ErrorKind.RATE_LIMITED,
    "cut:3": ErrorKind.STREAM_CUT,
    "malformed:2": ErrorKind.MALFORMED,
}


def _req(i: int, fault: str | None) -> GenerateRequest:
    extra = {"x_fault": fault} if fault else {}
    return GenerateRequest(
        request_id=f"f{i}",
        api="chat" if i % 2 else "completions",
        input_tokens=2,
        max_tokens=6,
        prompt=None if i % 2 else "hello there",
        messages=({"role": "user", "content": "hello there"},) if i % 2 else None,
        extra_body=extra,
    )


async def test_faults_are_typed_and_records_are_on_disk(tmp_path):
    faults = [None, *FAULTS, None]
    reqs = [_req(i, f) for i, f in enumerate(faults)]
    async with ReferenceServer(Schedule(ttft_s=0.005, itl_s=0.002)) as url:
        clock = MonotonicClock()
        server = OpenAIStreamingServer(url, "reference", clock)
        with RecordSink(tmp_path / "records.jsonl") as sink:
            window = await run_point(
                server, clock, PointPlan("c2", "concurrency", 2, [], reqs, 2), sink
            )
        await server.close()
    records, windows = read_records(tmp_path / "records.jsonl")
    assert window.sent == len(reqs) == len(records)
    assert windows == [window]
    by_id = {r.request_id: r for r in records}
    for i, fault in enumerate(faults):
        r = by_id[f"f{i}"]
        if fault is None:
            assert r.ok and r.output_tokens == 6 and r.input_tokens == 2
        else:
            assert r.error == FAULTS[fault], (fault, r.error, r.error_detail)
    assert by_id["f3"].chunk_ns and len(by_id["f3"].chunk_ns) == 3  # partial output kept


async def test_unreachable_endpoint_is_a_connect_error():
    clock = MonotonicClock()
    server = OpenAIStreamingServer(f"http://127.0.0.1:{free_port()}", "m", clock)
    ex = await server.generate(_req(0, None))
    await server.close()
    assert ex.error == ErrorKind.CONNECT and ex.end_ns >= ex.start_ns


async def test_multi_token_chunks_are_counted_from_usage():
    from scoville.metrics.compute import request_latency
    from scoville.records.sink import MemorySink
    from scoville.workload.tokenizers import TiktokenTokenizer

    async with ReferenceServer(Schedule(ttft_s=0.01, itl_s=0.004, tokens_per_chunk=4)) as url:
        clock = MonotonicClock()
        server = OpenAIStreamingServer(url, "reference", clock)
        sink = MemorySink()
        await run_point(
            server,
            clock,
            PointPlan("c1", "concurrency", 1, [], [_req(0, None)], 1),
            sink,
            TiktokenTokenizer("cl100k_base"),
        )
        await server.close()
    (r,) = sink.records
    assert r.output_tokens == 6 and len(r.chunk_ns) == 2  # 4 + 2 tokens
    assert r.chunk_tokens == (4, 2)
    lat = request_latency(r)
    assert len(lat.itl_token_s) == 2 and len(lat.itl_chunk_s) == 1
    asyncio.get_running_loop()
