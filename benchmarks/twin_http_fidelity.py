"""HTTP twin fidelity: scoville's own client drives `TwinHttpServer` (in a separate process,
wall clock) and the same sweep is simulated on the fast path (virtual clock); prints the
medians of both and their differences in ms.

Run (needs the foundation's pipeline on the path):
    PYTHONPATH=src python benchmarks/twin_http_fidelity.py --concurrency 256 --isl 1024 --osl 128
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import socket
import sys
import tempfile
import time
from pathlib import Path

from scoville.client.ports import free_port


def _serve(url: str, port: int, speedup: float) -> None:
    import asyncio

    from scoville.twin.http import TwinHttpServer
    from scoville.twin.target import parse_twin_url

    async def main() -> None:
        async with TwinHttpServer(parse_twin_url(url), speedup=speedup, port=port):
            await asyncio.Event().wait()

    asyncio.run(main())


def _wait(port: int, timeout_s: float = 30.0) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise SystemExit("the twin server did not start")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--twin", default="twin:H200/gpt-oss-120b")
    ap.add_argument("--concurrency", type=int, default=256)
    ap.add_argument("--isl", type=int, default=1024)
    ap.add_argument("--osl", type=int, default=128)
    ap.add_argument("--requests", type=int, default=None, help="default 2 x concurrency")
    ap.add_argument("--speedup", type=float, default=1.0)
    args = ap.parse_args()
    try:
        from scoville.pipeline import run_benchmark
    except ImportError:
        sys.exit("needs scoville.pipeline (the foundation) on the path")
    from scoville.client.plan import length_requests
    from scoville.spec.model import BenchmarkSpec
    from scoville.twin.fast import run_point
    from scoville.twin.frontier import frontier_rows
    from scoville.twin.target import parse_twin_url

    n = args.requests or 2 * args.concurrency
    port = free_port()
    proc = mp.get_context("spawn").Process(target=_serve, args=(args.twin, port, args.speedup))
    proc.start()
    try:
        _wait(port)
        spec = BenchmarkSpec.model_validate(
            {
                "target": {"url": f"http://127.0.0.1:{port}", "tokenizer": "server"},
                "shape": {"isl_tokens": args.isl, "osl_tokens": args.osl},
                "load": {
                    "concurrency": [args.concurrency],
                    "requests_per_point": n,
                    "warmup_requests": 0,
                },
            }
        )
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            res = run_benchmark(spec, Path(d))
            wall_s = time.perf_counter() - t0
        row = res.summary["points"][0]
    finally:
        proc.terminate()
        proc.join()
    fast = run_point(
        parse_twin_url(args.twin),
        length_requests(n, args.isl, args.osl),
        "c",
        concurrency=args.concurrency,
    )
    (pred,) = frontier_rows([fast])
    # wall = simulated / speedup, so simulated = wall x speedup
    http_ttft, http_tpot = row["median_ttft"] * args.speedup, row["median_tpot"] * args.speedup
    print(
        f"{args.twin} c={args.concurrency} {args.isl}/{args.osl}, {n} requests, speedup "
        f"{args.speedup}, run took {wall_s:.1f} s (ok {row['n_ok']}/{row['n_sent']})"
    )
    print(
        f"median TTFT  http {http_ttft * 1e3:9.2f} ms  virtual {pred.median_ttft_s * 1e3:9.2f} ms"
        f"  diff {(http_ttft - pred.median_ttft_s) * 1e3:+.2f} ms (simulated time)"
    )
    print(
        f"median TPOT  http {http_tpot * 1e3:9.3f} ms  virtual {pred.median_tpot_s * 1e3:9.3f} ms"
        f"  diff {(http_tpot - pred.median_tpot_s) * 1e3:+.3f} ms (simulated time)"
    )


if __name__ == "__main__":
    main()
