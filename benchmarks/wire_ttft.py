"""The client's TTFT and ITL against a loopback packet capture, and its CPU per token.

A reference server (first token 40 ms after the request, then one every 8 ms, 64 tokens) runs
in a child process; `tcpdump -i lo --time-stamp-precision=nano` captures its port; the
scoville client (production transport and driver, uvloop) keeps N streams in flight. Prints,
per stream count: median TTFT as the client measured it (from the request's last written
byte), on the wire (last request packet -> packet completing the first text frame), the
former convention (`ttft_from_send`: from before connecting), the server's own (arrival ->
first write), median ITL client vs wire, and client CPU-seconds per streamed token. With
`--fresh` each request opens a new connection (the former client's behaviour). Needs root
(or CAP_NET_RAW) and tcpdump.

    python benchmarks/wire_ttft.py [--streams 1,8,64,512] [--requests-per-stream 2] [--fresh]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from scoville.client.driver import PointPlan, run_point
from scoville.client.openai_sse import OpenAIStreamingServer
from scoville.client.seam import MonotonicClock, real_loop_factory
from scoville.client.wirecheck import LoopbackCapture, compare, wire_times
from scoville.records.sink import MemorySink
from scoville.targets.embedded import free_port
from scoville.targets.reference_server import tagged_requests

TOKENS = 64


def start_server(port: int, ttft_ms: float, itl_ms: float) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "scoville.targets.reference_server", "--port", str(port)]
    cmd += ["--ttft-ms", str(ttft_ms), "--itl-ms", str(itl_ms)]
    proc = subprocess.Popen(cmd)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=1).read()
            return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("reference server did not start")


def drive(url: str, streams: int, n: int, fresh: bool) -> tuple[MemorySink, float]:
    """Closed loop at `streams`; returns the records and the client's CPU seconds."""
    clock = MonotonicClock()
    server = OpenAIStreamingServer(url, "reference", clock, fresh_connections=fresh)
    sink = MemorySink()
    plan = PointPlan(
        f"c{streams}", "concurrency", streams, [], tagged_requests(n, "w", TOKENS), streams
    )

    async def go() -> None:
        try:
            await run_point(server, clock, plan, sink)
        finally:
            await server.close()

    cpu0 = time.process_time()
    with asyncio.Runner(loop_factory=real_loop_factory()) as runner:
        runner.run(go())
    return sink, time.process_time() - cpu0


def server_ttft_ms(url: str) -> float:
    truth = json.loads(urllib.request.urlopen(url + "/_truth").read())
    return statistics.median((t["emit_ns"][0] - t["arrived_ns"]) / 1e6 for t in truth.values())


def one(streams: int, per_stream: int, fresh: bool, ttft_ms: float, itl_ms: float) -> str:
    port = free_port()
    server = start_server(port, ttft_ms, itl_ms)
    url = f"http://127.0.0.1:{port}"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            pcap = Path(tmp) / "lo.pcap"
            cap = LoopbackCapture(pcap, port)
            why = cap.start()
            if why is not None:
                raise SystemExit(why)
            sink, cpu_s = drive(url, streams, max(4, streams * per_stream), fresh)
            dropped = cap.stop()
            c = compare(sink.records, wire_times(pcap, port))
        own = server_ttft_ms(url)
    finally:
        server.terminate()
        server.wait(timeout=10)
    tokens = sum(r.output_tokens for r in sink.records if r.ok)
    failed = sum(1 for r in sink.records if not r.ok)
    return (
        f"{streams:>7} {int(c['matched']):>6} {c['client_ttft_ms']:9.2f} {c['wire_ttft_ms']:8.2f} "
        f"{c['ttft_diff_ms']:8.3f} {c['client_ttft_from_send_ms']:9.2f} {own:8.2f} "
        f"{c['client_itl_ms']:8.3f} {c['wire_itl_ms']:8.3f} "
        f"{cpu_s / max(1, tokens) * 1e6:9.1f} {failed:>6} {dropped:>7}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--streams", default="1,8,64,512")
    ap.add_argument("--requests-per-stream", type=int, default=2)
    ap.add_argument("--fresh", action="store_true", help="a new connection per request")
    ap.add_argument("--ttft-ms", type=float, default=40.0)
    ap.add_argument("--itl-ms", type=float, default=8.0)
    a = ap.parse_args()
    print(
        f"{'streams':>7} {'reqs':>6} {'ttft':>9} {'wire':>8} {'diff':>8} {'from_send':>9} "
        f"{'server':>8} {'itl':>8} {'wire_itl':>8} {'cpu_us/tok':>9} {'failed':>6} "
        f"{'dropped':>7}   (ms unless named)"
    )
    for n in (int(x) for x in a.streams.split(",")):
        print(one(n, a.requests_per_stream, a.fresh, a.ttft_ms, a.itl_ms), flush=True)


if __name__ == "__main__":
    main()
