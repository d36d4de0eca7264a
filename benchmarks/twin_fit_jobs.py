"""`twin fit` with one process and with several: the same fitted book, in less wall time.

Run: PYTHONPATH=src python benchmarks/twin_fit_jobs.py [JOBS] [N_POINTS]
Fits TensorRT-LLM's front end (two parameters, one pass) on the first N_POINTS (default 12)
TensorRT-LLM dev rows with 1 and with JOBS (default: the CPU count) processes, and prints
each wall time, their ratio and whether the two fits agree to the bit. No figure is asserted
(on 2 cores expect a little under 2x; a test checks the agreement on a smaller fit).
"""

from __future__ import annotations

import os
import sys
import time

from scoville.twin.calibration import load_book
from scoville.twin.fit import fit
from scoville.twin.free_params import select_params
from scoville.twin.profiles import load_profiles


def main() -> None:
    jobs = int(sys.argv[1]) if len(sys.argv) > 1 else (os.cpu_count() or 1)
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 12
    rows = [p for p in load_book().points if p.split == "dev" and "framework=trt" in p.url][:n]
    params = select_params("frameworks.trt.frontend")
    out = []
    for j in (1, jobs):
        t0 = time.perf_counter()
        book, before, after = fit(rows, load_profiles(), params=params, passes=1, jobs=j)
        out.append((time.perf_counter() - t0, book, before, after))
        print(f"jobs={j}: {out[-1][0]:.1f} s wall, dev loss {before:.4f} -> {after:.4f}")
    (t1, b1, *l1), (tj, bj, *lj) = out
    same = b1 == bj and l1 == lj
    print(
        f"{len(rows)} rows, {len(params)} parameters: jobs={jobs} is {t1 / tj:.2f}x faster; "
        f"same book: {same}"
    )


if __name__ == "__main__":
    main()
