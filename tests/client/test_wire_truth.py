"""The client's TTFT and ITL against the wire itself: a nanosecond packet capture of loopback
(tcpdump) while 64 streams run against the reference server in its own process.

TTFT on the wire = last request packet -> the packet completing the first SSE frame with
output text; ITL on the wire = gaps between packets completing consecutive text frames.
Needs tcpdump and the right to capture (root or CAP_NET_RAW); skipped with the reason
otherwise. A missed timing bound is skipped only when other processes held the CPU during the
run (`quiet_stream.OtherCpu` over `BUSY_OTHER_CORES`, as the 512-stream accuracy test); on a
quiet machine it fails.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from quiet_stream import BUSY_OTHER_CORES, OtherCpu

from scoville.client.driver import PointPlan, run_point
from scoville.client.openai_sse import OpenAIStreamingServer
from scoville.client.seam import MonotonicClock, real_loop_factory
from scoville.client.wirecheck import LoopbackCapture, compare, read_pcap, wire_times
from scoville.records.sink import MemorySink
from scoville.targets.reference_server import tagged_requests

STREAMS, TOKENS = 64, 64


def _drive(url: str) -> MemorySink:
    clock = MonotonicClock()
    server = OpenAIStreamingServer(url, "reference", clock)
    sink = MemorySink()
    plan = PointPlan(
        "c64", "concurrency", STREAMS, [], tagged_requests(2 * STREAMS, "w", TOKENS), STREAMS
    )

    async def go() -> None:
        try:
            await run_point(server, clock, plan, sink)
        finally:
            await server.close()

    with asyncio.Runner(loop_factory=real_loop_factory()) as runner:  # as real runs do
        runner.run(go())
    return sink


def test_64_streams_ttft_and_itl_match_the_wire(tmp_path: Path, wire_url: str) -> None:
    port = int(wire_url.rsplit(":", 1)[1])
    cap = LoopbackCapture(tmp_path / "lo.pcap", port)
    why = cap.start()
    if why is not None:
        pytest.skip(f"no loopback capture: {why}")
    others = OtherCpu()  # what the rest of the machine did while the streams ran
    try:
        sink = _drive(wire_url)
    finally:
        dropped = cap.stop()
    other_cores = others.cores()
    assert dropped == 0, f"tcpdump dropped {dropped} packets: the capture is not ground truth"
    assert len(sink.records) == 2 * STREAMS and all(r.ok for r in sink.records)
    assert read_pcap(tmp_path / "lo.pcap"), "the capture holds no TCP payload"
    c = compare(sink.records, wire_times(tmp_path / "lo.pcap", port))
    assert c["matched"] == 2 * STREAMS
    busy = f"other processes took {other_cores:.3f} cores during the run, steal included"
    context = f"{c}; {busy} (load average {os.getloadavg()})"
    # Nine requests in ten stamped within 5 ms of the wire: a full garbage collection while the
    # first wave's frames arrive (28-40 ms) moves this, not the medians. A young-generation
    # collection (1-3 ms) may still land inside the window, and did on CI (p90 1.46 ms).
    missed = [
        name
        for name, gap, bound in (
            ("TTFT median", abs(c["client_ttft_ms"] - c["wire_ttft_ms"]), 1.0),
            ("TTFT p90", c["ttft_diff_p90_ms"], 5.0),
            ("ITL median", abs(c["client_itl_ms"] - c["wire_itl_ms"]), 0.1),
        )
        if gap >= bound
    ]
    if missed and other_cores > BUSY_OTHER_CORES:
        # on 2 cores another process's CPU delays the client's stamps: not the client's error
        pytest.skip(f"machine busy: {', '.join(missed)} missed; {context}")
    assert not missed, f"{', '.join(missed)} off the wire: {context}"
