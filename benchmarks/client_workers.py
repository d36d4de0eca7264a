"""Client capacity with 1 vs 2 worker processes: SSE chunks/s received from the calibration
emitter (its own process) at a load beyond one process's reach. Prints both and the ratio.

    PYTHONPATH=src python benchmarks/client_workers.py [--streams 256] [--itl-ms 5]

On a 2-core machine the emitter takes one core, so 2 client workers share the other with it:
the ratio shows how much a second process buys here, not the ceiling on a larger host.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

from scoville.client.driver import PointPlan
from scoville.client.scale.workers import WorkerTarget, run_point_processes
from scoville.client.seam import GenerateRequest
from scoville.client.selftest.calibrate import reference_process
from scoville.client.selftest.integrity import cpu_share


def measure(url: str, streams: int, tokens: int, per_stream: int, n_workers: int) -> float:
    reqs = [
        GenerateRequest(f"b{n_workers}-{i}", "completions", 1, tokens, prompt="hi")
        for i in range(streams * per_stream)
    ]
    plan = PointPlan(f"c{streams}", "concurrency", streams, (), reqs, concurrency=streams)
    with tempfile.TemporaryDirectory() as tmp:
        records, window, results = run_point_processes(
            WorkerTarget(url, "reference"), plan, n_workers, Path(tmp)
        )
    window_s = (window.end_ns - window.start_ns) / 1e9
    chunks = sum(len(r.chunk_ns) for r in records)
    failed = sum(1 for r in records if not r.ok)
    shares = [cpu_share(r.client, r.window.start_ns, r.window.end_ns) for r in results]
    cpu = ", ".join("-" if s is None else f"{s:.2f}" for s in shares)
    print(
        f"workers={n_workers} streams={streams} chunks={chunks} failed={failed} "
        f"window={window_s:.2f}s chunks_per_s={chunks / window_s:,.0f} cpu_per_worker=[{cpu}]"
    )
    return chunks / window_s


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--streams", type=int, default=256)
    ap.add_argument("--itl-ms", type=float, default=5.0)
    ap.add_argument("--tokens", type=int, default=200)
    ap.add_argument("--per-stream", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3, help="runs per setting; medians reported")
    a = ap.parse_args()
    print(f"cores={os.cpu_count()} load={os.getloadavg()}")
    with reference_process(ttft_s=0.010, itl_s=a.itl_ms / 1e3) as url:
        offered = a.streams * a.tokens / (0.010 + a.tokens * a.itl_ms / 1e3)
        print(f"offered ~{offered:,.0f} chunks/s")
        one, two = [], []
        for _ in range(a.repeats):  # interleaved, so drifting machine load hits both alike
            one.append(measure(url, a.streams, a.tokens, a.per_stream, 1))
            two.append(measure(url, a.streams, a.tokens, a.per_stream, 2))
    m1, m2 = statistics.median(one), statistics.median(two)
    print(f"median chunks/s: 1 worker {m1:,.0f}, 2 workers {m2:,.0f}; ratio {m2 / m1:.2f}")


if __name__ == "__main__":
    main()
