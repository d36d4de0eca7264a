"""The client's TTFT and ITL against a loopback packet capture, and its CPU per token, with
AIPerf side by side on the same source when it is installed.

The source is `scoville.targets.wire_server` (first token 40 ms after the request, then one
every 8 ms, 64 tokens; `--server-processes` processes on one port), so that it keeps time at
512 streams (the ITL is stretched at high stream counts to keep the frame rate under
`--max-frames-per-s`: at 8 ms, 512 streams are 64,000 frames/s, which a 2-core machine
cannot serve, capture and measure at once); `tcpdump -i lo --time-stamp-precision=nano`
captures its port. Per stream count and client it prints: median TTFT as the client
measured it, on the wire (last request packet -> packet completing the first text frame),
their median per-request difference, the wire TTFT's p99 (the server's lateness seen on the
wire: the schedule says `--ttft-ms`), the server's own log (arrival -> first write), median
ITL client vs wire, and client CPU-seconds per streamed token (scoville: the measuring
process; AIPerf: its process tree, start-up included; with `--marginal` also the extra CPU of
a run three times the size, start-up excluded). Needs root (or CAP_NET_RAW) and tcpdump;
AIPerf is skipped with a message when absent.

    python benchmarks/wire_ttft.py [--streams 1,8,64,512] [--aiperf PATH] [--fresh]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from wire_aiperf import AiperfRun, find_aiperf, run_aiperf

from scoville.client.driver import PointPlan, run_point
from scoville.client.openai_sse import OpenAIStreamingServer
from scoville.client.ports import free_port
from scoville.client.seam import MonotonicClock, real_loop_factory
from scoville.client.wirecheck import LoopbackCapture, WireTimes, compare, wire_times
from scoville.records.sink import MemorySink
from scoville.targets import wire_server
from scoville.targets.reference_server import tagged_requests
from scoville.targets.wire_server import read_truth

TOKENS = 64
T = TypeVar("T")
HEADER = (
    f"{'client':>8} {'streams':>7} {'reqs':>5} {'ttft':>8} {'wire':>8} {'diff':>7} "
    f"{'wire_p99':>8} {'server':>7} {'itl':>7} {'wire_itl':>8} {'cpu_us/tok':>10} "
    f"{'failed':>6} {'dropped':>7}   (ms unless named)"
)


def drive(url: str, streams: int, n: int, a: argparse.Namespace) -> tuple[MemorySink, float]:
    """scoville's production transport and driver (closed loop at `streams`, or spread
    arrivals with `--spread`), on uvloop as real runs are; the records and the measuring
    process's CPU seconds."""
    clock = MonotonicClock()
    server = OpenAIStreamingServer(
        url, "reference", clock, fresh_connections=a.fresh, sends_per_turn=a.sends_per_turn or 10**9
    )
    sink = MemorySink()
    reqs = tagged_requests(n, "w", TOKENS)
    plan = PointPlan(f"c{streams}", "concurrency", streams, [], reqs, streams)
    if a.spread:  # evenly spaced arrivals that keep `streams` in flight, capped there
        period_ns = round(request_s(a) * 1e9 / streams)
        arrivals = [i * period_ns for i in range(n)]
        plan = PointPlan(f"r{streams}", "rate", 1e9 / period_ns, [], reqs, streams, arrivals)

    async def go() -> None:
        try:
            await run_point(server, clock, plan, sink)
        finally:
            await server.close()

    cpu0 = time.process_time()
    with asyncio.Runner(loop_factory=real_loop_factory()) as runner:
        runner.run(go())
    return sink, time.process_time() - cpu0


def request_s(a: argparse.Namespace) -> float:
    """How long one request lasts by the schedule (s)."""
    return (float(a.ttft_ms) + (TOKENS - 1) * float(a.itl_ms)) / 1e3


def captured(
    port: int, a: argparse.Namespace, work: Path, run: Callable[[str], T]
) -> tuple[T, WireTimes, dict[str, dict[str, Any]], int]:
    """Start a server and a capture, `run(url)`, stop both; (result, wire, truth, drops)."""
    truth_dir = work / f"truth-{port}"
    truth_dir.mkdir()
    server = wire_server.start(port, a.ttft_ms, a.itl_ms, a.server_processes, truth_dir)
    try:
        pcap = work / f"lo-{port}.pcap"
        cap = LoopbackCapture(pcap, port)
        why = cap.start()
        if why is not None:
            raise SystemExit(why)
        try:
            result = run(f"http://127.0.0.1:{port}")
        finally:
            dropped = cap.stop()
    finally:
        server.terminate()
        server.wait(timeout=30)
    return result, wire_times(pcap, port), read_truth(truth_dir), dropped


def _server_ms(truth: dict[str, dict[str, Any]], ids: set[str]) -> float:
    """The server's own median TTFT (its log: request read -> first frame written)."""
    own = [t["emit_ns"][0] - t["arrived_ns"] for k, t in truth.items() if k in ids]
    return statistics.median(own) / 1e6 if own else float("nan")


def _p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[98] if len(values) > 1 else values[0]


def scoville_row(streams: int, a: argparse.Namespace, work: Path) -> str:
    n = max(4, streams * a.requests_per_stream)
    (sink, cpu_s), wire, truth, dropped = captured(
        free_port(), a, work, lambda url: drive(url, streams, n, a)
    )
    c = compare(sink.records, wire)
    ids = {r.request_id for r in sink.records if r.ok}
    tokens = sum(r.output_tokens for r in sink.records if r.ok)
    failed = sum(1 for r in sink.records if not r.ok)
    c["wire_p99_ms"] = _p99([wire.ttft_ns[i] / 1e6 for i in ids if i in wire.ttft_ns])
    c["server_ms"] = _server_ms(truth, ids)
    return _row("scoville", streams, c, cpu_s / max(1, tokens), failed, dropped)


def aiperf_row(aiperf: str, streams: int, a: argparse.Namespace, work: Path) -> str:
    n = max(4, streams * a.requests_per_stream)

    def go(url: str, requests: int) -> AiperfRun:
        rate = streams / request_s(a) if a.spread else None
        return run_aiperf(aiperf, url, streams, requests, TOKENS, work, rate)

    run, wire, truth, dropped = captured(free_port(), a, work, lambda url: go(url, n))
    c = compare_ids(run, wire)
    c["wire_p99_ms"] = _p99([wire.ttft_ns[i] / 1e6 for i in run.ttft_ms if i in wire.ttft_ns])
    c["server_ms"] = _server_ms(truth, set(run.ttft_ms))
    row = _row("aiperf", streams, c, run.cpu_s / max(1, run.tokens), run.failed, dropped)
    if a.marginal:  # start-up excluded: the extra CPU of a run three times the size
        big, _w, _t, _d = captured(free_port(), a, work, lambda url: go(url, 3 * n))
        marginal = (big.cpu_s - run.cpu_s) / max(1, big.tokens - run.tokens)
        row += f"  marginal {marginal * 1e6:.1f} cpu_us/tok ({n} vs {3 * n} requests)"
    return row


def compare_ids(run: AiperfRun, wire: WireTimes) -> dict[str, float]:
    """`wirecheck.compare` for another client's per-request TTFT and chunk gaps (ms)."""
    ids = [i for i in run.ttft_ms if i in wire.ttft_ns]
    if not ids:
        raise ValueError("no AIPerf request matches a request on the wire (X-Request-ID)")
    wire_ttft = [wire.ttft_ns[i] / 1e6 for i in ids]
    return {
        "matched": float(len(ids)),
        "client_ttft_ms": statistics.median(run.ttft_ms[i] for i in ids),
        "wire_ttft_ms": statistics.median(wire_ttft),
        "ttft_diff_ms": statistics.median(
            run.ttft_ms[i] - w for i, w in zip(ids, wire_ttft, strict=True)
        ),
        "client_itl_ms": statistics.median(itertools.chain(*(run.itl_ms[i] for i in ids))),
        "wire_itl_ms": statistics.median(g / 1e6 for i in ids for g in wire.itl_ns[i]),
    }


def _row(
    client: str, streams: int, c: dict[str, float], cpu_s_tok: float, failed: int, dropped: int
) -> str:
    return (
        f"{client:>8} {streams:>7} {int(c['matched']):>5} {c['client_ttft_ms']:8.2f} "
        f"{c['wire_ttft_ms']:8.2f} {c['ttft_diff_ms']:7.3f} {c['wire_p99_ms']:8.2f} "
        f"{c['server_ms']:7.2f} {c['client_itl_ms']:7.3f} {c['wire_itl_ms']:8.3f} "
        f"{cpu_s_tok * 1e6:10.1f} {failed:>6} {dropped:>7}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--streams", default="1,8,64,512")
    ap.add_argument("--requests-per-stream", type=int, default=2)
    ap.add_argument("--fresh", action="store_true", help="a new connection per request")
    ap.add_argument("--ttft-ms", type=float, default=40.0)
    ap.add_argument("--itl-ms", type=float, default=8.0)
    ap.add_argument("--server-processes", type=int, default=2)
    ap.add_argument("--sends-per-turn", type=int, default=2, help="0: no send pacing")
    ap.add_argument(
        "--spread",
        action="store_true",
        help="evenly spaced arrivals keeping N in flight, not N streams in lock-step waves",
    )
    ap.add_argument(
        "--max-frames-per-s",
        type=float,
        default=8000.0,
        help="stretch the ITL so streams/ITL stays under this (2 cores cannot carry 64k/s)",
    )
    ap.add_argument("--aiperf", default=None, help="aiperf executable (default: on PATH)")
    ap.add_argument("--no-aiperf", action="store_true")
    ap.add_argument("--marginal", action="store_true", help="AIPerf's marginal CPU/token")
    a = ap.parse_args()
    aiperf = None if a.no_aiperf else find_aiperf(a.aiperf)
    if aiperf is None and not a.no_aiperf:
        print("AIPerf not found (install it in its own venv, pass --aiperf PATH): scoville alone")
    load = os.getloadavg()[0]
    print(f"load average {load:.2f}; schedule: TTFT {a.ttft_ms:g} ms, ITL {a.itl_ms:g} ms")
    print(HEADER)
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in a.streams.split(",")):
            itl_ms = max(a.itl_ms, n / a.max_frames_per_s * 1e3)
            at = argparse.Namespace(**{**vars(a), "itl_ms": itl_ms})
            shape = "spread arrivals" if a.spread else "closed loop"
            print(f"-- {n} streams ({shape}), ITL {itl_ms:g} ms ({n / itl_ms * 1e3:.0f} frames/s)")
            print(scoville_row(n, at, Path(tmp)), flush=True)
            if aiperf is not None:
                print(aiperf_row(aiperf, n, at, Path(tmp)), flush=True)


if __name__ == "__main__":
    main()
