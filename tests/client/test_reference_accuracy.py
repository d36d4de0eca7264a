"""The client's timestamps against what a separate server process really sent, 512 streams."""

from __future__ import annotations

import asyncio
import json
import statistics
import urllib.request
from itertools import pairwise

import pytest
from quiet_stream import BUSY_OTHER_CORES, OtherCpu

from scoville.client.driver import PointPlan, run_point
from scoville.client.openai_sse import OpenAIStreamingServer
from scoville.client.seam import MonotonicClock, real_loop_factory
from scoville.metrics.compute import request_latency
from scoville.records.sink import MemorySink
from scoville.targets.reference_server import tagged_requests

STREAMS = 512
OUT_TOKENS = 16


def test_512_streams_medians_within_1ms_of_truth(reference_url: str) -> None:
    """All 512 streams in flight at once; per-request errors against the server's own log.
    A missed median is skipped only when other processes held the CPU during this very run
    (`OtherCpu` over `BUSY_OTHER_CORES`); on a quiet machine it fails."""
    clock = MonotonicClock()
    server = OpenAIStreamingServer(reference_url, "reference", clock)
    sink = MemorySink()
    # Arrivals spread over 1 s: every stream lasts 1.55 s, so all 512 overlap, without the
    # lock-step bursts of 512 simultaneous frames a synchronised start would cause.
    arrivals = [i * 1_000_000_000 // STREAMS for i in range(STREAMS)]
    plan = PointPlan(
        "r", "rate", float(STREAMS), [], tagged_requests(STREAMS, "q", OUT_TOKENS), None, arrivals
    )

    async def go() -> None:
        try:
            await run_point(server, clock, plan, sink)
        finally:
            await server.close()

    others = OtherCpu()  # what the rest of the machine did while the streams ran
    with asyncio.Runner(loop_factory=real_loop_factory()) as runner:  # as real runs do
        runner.run(go())
    other_cores = others.cores()
    truth = json.loads(urllib.request.urlopen(reference_url + "/_truth").read())
    assert len(sink.records) == STREAMS and all(r.ok for r in sink.records)
    assert sum(r.output_tokens for r in sink.records) == STREAMS * OUT_TOKENS
    assert all(r.input_tokens == 3 for r in sink.records)
    err = {"ttft": [], "tpot": [], "itl": [], "e2e_done": []}
    for r in sink.records:
        t = truth[r.request_id]
        lat = request_latency(r)
        emit = t["emit_ns"]
        true_ttft = (emit[0] - r.start_ns) / 1e9
        true_tpot = (emit[-1] - emit[0]) / (len(emit) - 1) / 1e9
        err["ttft"].append(lat.ttft_s - true_ttft)
        # TPOT by our definition spans to end of stream; compare the token-gap part
        measured_tpot = (r.chunk_ns[-1] - r.chunk_ns[0]) / (len(r.chunk_ns) - 1) / 1e9
        err["tpot"].append(measured_tpot - true_tpot)
        true_gaps = [(b - a) / 1e9 for a, b in pairwise(emit)]
        err["itl"].append(statistics.median(lat.itl_token_s) - statistics.median(true_gaps))
        err["e2e_done"].append(lat.e2e_s - (t["done_ns"] - r.start_ns) / 1e9)
    medians = {name: statistics.median(values) for name, values in err.items()}
    over = {name: med for name, med in medians.items() if abs(med) >= 1e-3}
    missed = ", ".join(f"{n} {m * 1e3:.3f} ms" for n, m in over.items())
    busy = f"other processes took {other_cores:.3f} cores during the run, steal included"
    if over and other_cores > BUSY_OTHER_CORES:
        # on 2 cores another process's CPU delays the client's stamps: not the client's error
        pytest.skip(f"machine busy: median {missed}; {busy}; limit {BUSY_OTHER_CORES}")
    assert not over, f"median error {missed}; {busy}"
