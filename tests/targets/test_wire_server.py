"""The light ground-truth server: real HTTP on loopback from two processes on one port, the
scoville client against it, and the server's own log of what it wrote when."""

from __future__ import annotations

import asyncio
import signal
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from scoville.client.driver import PointPlan, run_point
from scoville.client.openai_sse import OpenAIStreamingServer
from scoville.client.ports import free_port
from scoville.client.seam import GenerateRequest, MonotonicClock
from scoville.records.sink import MemorySink
from scoville.targets.reference_server import tagged_requests
from scoville.targets.wire_server import Frames, read_truth, start


async def _drive(url: str, requests: list[GenerateRequest]) -> MemorySink:
    clock = MonotonicClock()
    server = OpenAIStreamingServer(url, "reference", clock)
    sink = MemorySink()
    try:
        await run_point(server, clock, PointPlan("c4", "concurrency", 4, [], requests, 4), sink)
    finally:
        await server.close()
    return sink


def test_two_processes_stream_on_schedule_and_log_every_write(tmp_path: Path) -> None:
    port = free_port()
    proc = start(port, ttft_ms=30, itl_ms=10, processes=2, truth_dir=tmp_path)
    try:
        sink = asyncio.run(_drive(f"http://127.0.0.1:{port}", tagged_requests(12, "s", 5)))
        bad = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", b"{not json")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(bad, timeout=5)
        assert refused.value.code == 400
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
    assert proc.returncode == 0
    assert [r.ok for r in sink.records] == [True] * 12
    assert {r.output_tokens for r in sink.records} == {5}
    assert {r.token_source for r in sink.records} == {"usage"}  # the usage frame counts 5
    truth = read_truth(tmp_path)
    assert len(list(tmp_path.glob("truth-*.json"))) == 2  # one file per process
    assert sorted(truth) == sorted(f"s{i}" for i in range(12))
    for t in truth.values():
        assert len(t["emit_ns"]) == 5
        # frame i is due 30 + 10 i ms after arrival (the loop's timers round to 1 ms); a
        # late frame never shifts the ones after it
        late_ms = [(e - t["arrived_ns"]) / 1e6 - (30 + 10 * i) for i, e in enumerate(t["emit_ns"])]
        assert all(-1.5 <= x <= 30.0 for x in late_ms), late_ms


def test_frames_are_one_http_chunk_each() -> None:
    f = Frames.make("m", chat=False)
    body = b'data: {"id": "ref-0", "object": "text_completion", "created": 0, "model": "m", '
    body += b'"choices": [{"index": 0, "finish_reason": null, "text": " tok"}]}\n\n'
    assert f.token == b"%x\r\n" % len(body) + body + b"\r\n"
    end = f.end(prompt_tokens=3, n_tokens=2)
    assert end.endswith(b"data: [DONE]\n\n\r\n0\r\n\r\n")
    assert b'"usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}' in end
