"""Twin speed: wall time of a 10-point 8k/1k closed-loop sweep up to concurrency 256 with
10 x concurrency measured requests per point (plus 2 x concurrency warmup), on one core:
the spec's plans run by the twin's fast executor (plans, simulation and records).

Run: PYTHONPATH=src python benchmarks/twin_speed.py [--hardware H200] [--model gpt-oss-120b]
Targets: under 5 s (issue 3), under 2 s (issue 12). Prints the simulated frontier and the
wall time, the best of `--repeat` runs (3; each run's is printed too). The machine's speed
varies: compare two trees by alternating runs in one session (`git worktree add`, then
`PYTHONPATH=<tree>/src`), never against a figure from another day.
"""

from __future__ import annotations

import argparse
import time

from scoville.twin.catalogue import load_catalogue
from scoville.twin.cluster import TwinConfig
from scoville.twin.costmodel import Parallel
from scoville.twin.simulate import sweep

CONCURRENCIES = (1, 2, 4, 8, 16, 32, 64, 128, 192, 256)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--hardware", default="H200")
    ap.add_argument("--model", default="gpt-oss-120b")
    ap.add_argument("--tp", type=int, default=1)
    ap.add_argument("--no-warmup", action="store_true")
    ap.add_argument("--repeat", type=int, default=3, help="runs; the best is the figure")
    args = ap.parse_args()
    cat = load_catalogue()
    cfg = TwinConfig(
        cat.get_hardware(args.hardware), cat.get_model(args.model), Parallel(tp=args.tp)
    )
    walls = []
    for _ in range(max(1, args.repeat)):  # the same sweep: a slow run is the machine, not it
        t0 = time.perf_counter()
        points = sweep(
            cfg, 8192, 1024, CONCURRENCIES, warmup_per_point=0 if args.no_warmup else None
        )
        walls.append(time.perf_counter() - t0)
    n_req = sum(len(p.records) for p in points)
    n_tok = sum(r.output_tokens for p in points for r in p.records)
    for p in points:
        m = [r for r in p.records if r.phase == "measure"]
        dur_s = (p.window.end_ns - p.window.start_ns) / 1e9
        tput = sum(r.input_tokens + r.output_tokens for r in m) / dur_s / cfg.n_accelerators
        tpots = sorted((r.chunk_ns[-1] - r.chunk_ns[0]) / (len(r.chunk_ns) - 1) for r in m)
        print(
            f"{p.window.point_id:>5}  tput/gpu {tput:9.0f} tok/s  "
            f"median TPOT {tpots[len(tpots) // 2] / 1e6:7.2f} ms  "
            f"bottleneck {p.extras['bottleneck']:<8} kv_max {p.extras['kv_occupancy_max']:.2f}"
        )
    print(
        f"twin_speed: {len(points)} points, {n_req} requests, {n_tok} output tokens "
        f"simulated in {min(walls):.2f} s wall, the best of {len(walls)} runs "
        f"({' '.join(f'{w:.2f}' for w in walls)}; {args.hardware}, {args.model}, 8k/1k)"
    )


if __name__ == "__main__":
    main()
