"""Client capacity: SSE frames per second and timestamp lag the client sustains on one core.

A fast SSE server (raw asyncio protocol, one timer for all streams, pre-rendered frames) runs
in a child process pinned to one core; the scoville client (the production transport and
driver, uvloop) runs pinned to the other. Every block the server writes carries the server's
monotonic write time; the client's arrival stamp minus that time is the timestamp lag
(loopback + kernel + event-loop delay), taken in steady state (after the first second, when
every connection opens at once). Prints, per stream count: offered and achieved
frames/s, client CPU share, and lag percentiles. Targets: >= 100k frames/s on one core with
p99 lag <= 1 ms at 512 streams.

    python benchmarks/client_capacity.py [--streams 64,512] [--rate 120000] [--interval-ms 50]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import re
import resource
import time

import numpy as np

from scoville.client.driver import PointPlan, run_point
from scoville.client.openai_sse import OpenAIStreamingServer
from scoville.client.ports import free_port
from scoville.client.seam import GenerateRequest, MonotonicClock, real_loop_factory
from scoville.records.sink import MemorySink

FRAME = b'data: {"choices":[{"index":0,"text":" tok","finish_reason":null}]}\n\n'
STAMP = re.compile(rb'"t":(\d+)')


class _Stream(asyncio.Protocol):
    def __init__(self, hub: _Hub) -> None:
        self.hub, self.buf, self.transport = hub, b"", None
        self.left = 0
        self.phase = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buf += data
        head, sep, body = self.buf.partition(b"\r\n\r\n")
        if not sep:
            return
        length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))  # type: ignore[union-attr]
        if len(body) < length:
            return
        self.left = int(json.loads(body[:length])["max_tokens"])
        self.transport.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"  # type: ignore[union-attr]
            b"Connection: close\r\n\r\n"
        )
        self.hub.add(self)

    def tick(self, per_block: int) -> None:
        n = min(per_block, self.left)
        self.left -= n
        stamp = b'data: {"choices":[{"index":0,"text":" tok"}],"t":%d}\n\n' % time.monotonic_ns()
        out = stamp + FRAME * (n - 1)
        if self.left == 0:
            out += (
                b'data: {"choices":[{"index":0,"text":"","finish_reason":"length"}],'
                b'"usage":{"prompt_tokens":1,"completion_tokens":%d}}\n\ndata: [DONE]\n\n'
                % self.hub.tokens
            )
        self.transport.write(out)  # type: ignore[union-attr]
        if self.left == 0:
            self.transport.close()  # type: ignore[union-attr]
            self.hub.discard(self)


class _Hub:
    """Writes every stream one block per interval, the streams spread evenly over the interval
    in `PHASES` groups (real streams are not in lock-step; a synchronised burst of 512 blocks
    would measure queueing behind the burst, not the client)."""

    PHASES = 20

    def __init__(self, per_block: int, interval_s: float, tokens: int) -> None:
        self.groups: list[set[_Stream]] = [set() for _ in range(self.PHASES)]
        self.per_block, self.interval_s, self.tokens = per_block, interval_s, tokens
        self.joined = 0

    def add(self, s: _Stream) -> None:
        s.phase = self.joined % self.PHASES
        self.joined += 1
        self.groups[s.phase].add(s)

    def discard(self, s: _Stream) -> None:
        self.groups[s.phase].discard(s)

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        nxt, phase = loop.time(), 0
        while True:
            nxt += self.interval_s / self.PHASES
            await asyncio.sleep(max(0.0, nxt - loop.time()))
            for s in list(self.groups[phase]):
                s.tick(self.per_block)
            phase = (phase + 1) % self.PHASES


def _serve(port: int, per_block: int, interval_s: float, tokens: int, core: int) -> None:
    os.sched_setaffinity(0, {core})
    factory = real_loop_factory() or asyncio.new_event_loop
    loop = factory()
    hub = _Hub(per_block, interval_s, tokens)
    server = loop.run_until_complete(loop.create_server(lambda: _Stream(hub), "127.0.0.1", port))
    loop.create_task(hub.run())
    try:
        loop.run_forever()
    finally:
        server.close()


def measure(
    streams: int, rate: float, seconds: float, interval_s: float = 0.02
) -> dict[str, float]:
    per_block = max(1, round(rate * interval_s / streams))
    tokens = per_block * max(1, round(seconds / interval_s))
    port = free_port()
    proc = mp.get_context("spawn").Process(
        target=_serve, args=(port, per_block, interval_s, tokens, 1), daemon=True
    )
    proc.start()
    time.sleep(1.0)
    os.sched_setaffinity(0, {0})
    stamps: list[tuple[int, int]] = []  # (server write time, client arrival time)
    clock = MonotonicClock()
    server = OpenAIStreamingServer(f"http://127.0.0.1:{port}", "m", clock)

    def on_chunk(t_ns: int, text: str) -> None:
        m = STAMP.search(text.encode())
        if m:
            stamps.append((int(m.group(1)), t_ns))

    class Lagged:  # samples the lag of every stream's stamped frames
        async def generate(self, req: GenerateRequest, on_chunk_: object = None) -> object:
            return await server.generate(req, on_chunk)

        async def close(self) -> None:
            await server.close()

    reqs = [GenerateRequest(f"s{i}", "completions", 1, tokens, prompt="x") for i in range(streams)]
    sink = MemorySink()
    cpu0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()

    async def go() -> None:
        await run_point(
            Lagged(),
            clock,
            PointPlan(
                "c",
                "concurrency",
                streams,
                [],
                reqs,  # type: ignore[arg-type]
                streams,
            ),
            sink,
        )
        await server.close()

    with asyncio.Runner(loop_factory=real_loop_factory()) as runner:
        runner.run(go())
    wall = time.monotonic() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    proc.terminate()
    ok = [r for r in sink.records if r.ok]
    frames = sum(len(r.chunk_ns) for r in ok)
    first = min(r.chunk_ns[0] for r in ok)
    last = max(r.chunk_ns[-1] for r in ok)
    # Steady state only: the first second holds the opening of every connection at once.
    t0_ns = min(s for s, _ in stamps) + 1_000_000_000
    lag = np.asarray([c - s for s, c in stamps if s >= t0_ns], dtype=np.float64) / 1e6
    cpu = (cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime) / wall
    return {
        "streams": streams,
        "ok": len(ok),
        "offered_frames_per_s": streams * per_block / interval_s,
        "frames_per_s": frames / ((last - first) / 1e9),
        "client_cpu_share": cpu,
        "lag_p50_ms": float(np.percentile(lag, 50)),
        "lag_p99_ms": float(np.percentile(lag, 99)),
        "lag_samples": len(lag),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--streams", default="64,512")
    ap.add_argument("--rate", type=float, default=120_000.0, help="offered frames/s in total")
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument(
        "--interval-ms",
        type=float,
        default=50.0,
        help="each stream gets one block of frames per interval (the Python server "
        "tops out near 25k writes/s, so long intervals reach high frame rates)",
    )
    a = ap.parse_args()
    print(
        f"{'streams':>8} {'offered/s':>10} {'frames/s':>10} {'cpu':>5} {'lag p50 ms':>10} "
        f"{'lag p99 ms':>10}"
    )
    for n in (int(x) for x in a.streams.split(",")):
        r = measure(n, a.rate, a.seconds, a.interval_ms / 1e3)
        print(
            f"{n:>8} {r['offered_frames_per_s']:>10,.0f} {r['frames_per_s']:>10,.0f} "
            f"{r['client_cpu_share']:>5.2f} {r['lag_p50_ms']:>10.3f} {r['lag_p99_ms']:>10.3f}"
        )


if __name__ == "__main__":
    main()
