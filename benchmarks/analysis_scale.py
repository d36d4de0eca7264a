"""How fast analysis turns many request records into a frontier (prints figures, no asserts).

Synthetic per-request columns (N requests over P sweep points, numpy RNG, seed 0) go through
`columnar.point_rows` (per-point throughputs and percentiles) and `frontier.frontiers`.
Run: PYTHONPATH=src python benchmarks/analysis_scale.py [N] [P]
"""

from __future__ import annotations

import sys
import time

import numpy as np

from scoville.analysis.columnar import RequestColumns, point_rows
from scoville.analysis.frontier import frontiers, read_at


def main(n_requests: int = 10_000_000, n_points: int = 20) -> None:
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    idx = rng.integers(0, n_points, size=n_requests).astype(np.int64)
    level = 2.0 ** (np.arange(n_points) * 9.0 / max(1, n_points - 1))  # concurrency 1..512
    conc = level[idx]
    out_tok = np.full(n_requests, 1024.0)
    in_tok = np.full(n_requests, 8192.0)
    tpot = 0.005 * (1 + 0.05 * conc) * rng.lognormal(0.0, 0.1, n_requests)
    ttft = 0.2 * (1 + 0.02 * conc) * rng.lognormal(0.0, 0.2, n_requests)
    e2e = ttft + tpot * (out_tok - 1)
    # A closed loop at concurrency C finishes C requests per E2E: window = n x mean E2E / C.
    counts = np.bincount(idx, minlength=n_points)
    windows = counts * np.bincount(idx, weights=e2e, minlength=n_points) / counts / level
    t1 = time.perf_counter()
    rows = point_rows(
        [f"c{c:.0f}" for c in level],
        windows.tolist(),
        RequestColumns(
            idx,
            in_tok,
            out_tok,
            e2e,
            ttft,
        ),
        n_accelerators=8,
        labels={"system": "bench"},
    )
    t2 = time.perf_counter()
    fs = frontiers(rows)
    (f,) = fs.values()
    mid = (f.xs[0] + f.xs[-1]) / 2
    value = read_at(f, mid).value
    t3 = time.perf_counter()
    print(f"requests: {n_requests:,}  points: {n_points}")
    print(f"generate columns: {t1 - t0:.2f} s")
    print(f"point summaries (throughput, mean/median/p90/p99/p99.9 x 4 metrics): {t2 - t1:.2f} s")
    print(f"frontier + iso read: {(t3 - t2) * 1e3:.1f} ms ({len(f.points)} frontier points)")
    print(f"records -> frontier: {t3 - t1:.2f} s ({n_requests / (t3 - t1) / 1e6:.1f} M records/s)")
    print(f"tput_per_gpu at {mid:.1f} tok/s/user: {value:.1f}")


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    main(*args)
