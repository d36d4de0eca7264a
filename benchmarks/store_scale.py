"""10 million request records through the results store: add, SQL read-back, percentiles with
intervals, frontier (prints wall times and peak RSS; no asserts). Target: < 10 s, < 2 GB.

Synthetic per-request facts (integer ns, token counts; numpy RNG, seed 0; requests stored in
point order as a run writes them) become an Arrow table with zero copies, are written to the
store as Parquet, read back through the store's DuckDB view (which derives TTFT/E2E/TPOT in
seconds), summarised per point with order-statistic intervals (`analysis.intervals`), put on
the frontier, and the point rows and catalogue row stored.

Run: PYTHONPATH=src python benchmarks/store_scale.py [N] [P] [STORE_DIR]
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

from scoville.analysis.frontier import frontiers, read_at
from scoville.analysis.intervals import grouped_quantile_ci
from scoville.store.results import DERIVED_REQUESTS, ResultsStore
from scoville.store.tables import points_table

RUN_ID = "bench-10m"
# The point's position in the run's point list comes back as a small integer code (no 10 M
# strings cross into Python).
MEASURED = (
    "SELECT list_position(?, point_id)::INTEGER - 1 AS code, input_tokens, output_tokens, "
    "ttft_s, e2e_s, tpot_s FROM requests WHERE run_id = ? AND phase = 'measure' "
    "AND error IS NULL"
)
QS = {"median": 0.5, "p90": 0.9, "p99": 0.99, "p999": 0.999}


def generate(n: int, n_points: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Per-request columns in point order (concurrency 1..512 over P points)."""
    rng = np.random.default_rng(0)
    codes = np.sort(rng.integers(0, n_points, size=n)).astype(np.int32)
    level = 2.0 ** (np.arange(n_points) * 9.0 / max(1, n_points - 1))
    conc = level[codes]
    tpot_ns = (5e6 * (1 + 0.05 * conc) * rng.lognormal(0.0, 0.1, n)).astype(np.int64)
    ttft_ns = (2e8 * (1 + 0.02 * conc) * rng.lognormal(0.0, 0.2, n)).astype(np.int64)
    start = np.cumsum(rng.integers(1_000, 100_000, size=n)).astype(np.int64)
    first = start + ttft_ns
    end = first + tpot_ns * 1023
    cols = {
        "start_ns": start,
        "first_chunk_ns": first,
        "last_chunk_ns": end,
        "end_ns": end,
        "input_tokens": np.full(n, 8192, dtype=np.int64),
        "output_tokens": np.full(n, 1024, dtype=np.int64),
        "point_code": codes,
    }
    return cols, level


def requests_arrow(cols: dict[str, np.ndarray], point_ids: list[str]) -> pa.Table:
    n = cols["start_ns"].size
    zeros = np.zeros(n, dtype=np.int32)
    arrays: dict[str, Any] = {
        "run_id": pa.DictionaryArray.from_arrays(zeros, pa.array([RUN_ID])),
        "point_id": pa.DictionaryArray.from_arrays(cols["point_code"], pa.array(point_ids)),
        "phase": pa.DictionaryArray.from_arrays(zeros, pa.array(["measure"])),
        "error": pa.nulls(n, pa.string()),
    }
    for k, v in cols.items():
        if k != "point_code":
            arrays[k] = pa.array(v)
    return pa.table(arrays)


def point_rows(measured: pa.Table, window_s: np.ndarray, point_ids: list[str]) -> list[dict]:  # type: ignore[type-arg]
    codes = measured.column("code").to_numpy().astype(np.int64)
    n_p = len(point_ids)
    col = {c: measured.column(c).to_numpy() for c in ("input_tokens", "output_tokens")}
    tok = np.bincount(codes, weights=col["input_tokens"] + col["output_tokens"], minlength=n_p)
    stats = {
        stem: grouped_quantile_ci(
            codes, measured.column(f"{stem}_s").to_numpy(), list(QS.values()), n_p
        )
        for stem in ("ttft", "tpot", "e2e")
    }
    rows: list[dict] = []  # type: ignore[type-arg]
    for i, pid in enumerate(point_ids):
        row: dict[str, Any] = {
            "point_id": pid,
            "conc": float(pid[1:]),
            "system": "bench",
            "model": "synthetic",
            "n_accelerators": 8,
            "valid": True,
            "window_s": float(window_s[i]),
            "tput_per_gpu": float(tok[i] / window_s[i] / 8),
        }
        few: list[str] = []
        for stem, ci in stats.items():
            row[f"n_{stem}"] = int(ci.n[i])
            for j, name in enumerate(QS):
                row[f"{name}_{stem}"] = float(ci.estimate[i, j])
                row[f"{name}_{stem}_lo"], row[f"{name}_{stem}_hi"] = (
                    float(ci.lo[i, j]),
                    float(ci.hi[i, j]),
                )
                if not ci.enough[i, j]:
                    few.append(f"{name}_{stem}")
        row["median_intvty"] = 1.0 / row["median_tpot"]
        row["few_samples"] = few
        rows.append(row)
    return rows


class Stages:
    """Wall and CPU (all threads) time per named stage."""

    def __init__(self) -> None:
        self.done: list[tuple[str, float, float]] = []

    @contextmanager
    def stage(self, label: str) -> Iterator[None]:
        t, c = time.perf_counter(), time.process_time()
        yield
        self.done.append((label, time.perf_counter() - t, time.process_time() - c))

    def report(self) -> None:
        for label, wall, cpu in self.done:
            print(f"{label}: {wall:.2f} s (CPU {cpu:.2f} s)")
        timed = self.done[1:]
        print(
            f"TOTAL (timed, generation excluded): {sum(w for _, w, _ in timed):.2f} s wall, "
            f"{sum(c for _, _, c in timed):.2f} s CPU; peak RSS "
            f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB; load "
            f"average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
        )


def derive(table: pa.Table, point_ids: list[str]) -> pa.Table:
    """The store's own SQL derives TTFT / E2E / TPOT seconds from the integer facts."""
    with duckdb.connect() as con:
        con.register("raw", table)
        con.execute("CREATE VIEW requests AS " + DERIVED_REQUESTS.format(source="raw"))
        return con.sql(MEASURED, params=[point_ids, RUN_ID]).to_arrow_table()


def main(n: int = 10_000_000, n_points: int = 20, store_dir: str | None = None) -> None:
    root = Path(store_dir or tempfile.mkdtemp(prefix="scoville-store-"))
    st = Stages()
    with st.stage("generate columns (not timed)"):
        cols, level = generate(n, n_points)
        point_ids = [f"c{c:.0f}" for c in level]
        e2e_s = (cols["end_ns"] - cols["start_ns"]) / 1e9
        # a closed loop at C finishes C requests per E2E: window = sum(E2E) / C
        window_s = np.bincount(cols["point_code"], weights=e2e_s, minlength=n_points) / level
    with st.stage("Arrow table + DuckDB derived seconds -> Arrow"):
        table = requests_arrow(cols, point_ids)
        del cols
        measured = derive(table, point_ids)
    with st.stage("per-point throughput, 4 percentiles x 3 latencies with 95 % CIs, frontier"):
        rows = point_rows(measured, window_s, point_ids)
        del measured
        (f,) = frontiers(rows).values()
        mid = (f.xs[0] + f.xs[-1]) / 2
        value = read_at(f, mid).value
    with st.stage("store add (requests, points, catalogue -> Parquet)"):
        store = ResultsStore(root)
        entry = {
            "run_id": RUN_ID,
            "run_utc": datetime.now(UTC).isoformat(),
            "labels": "{}",
            "n_points": len(rows),
            "n_requests": n,
            "system": "bench",
            "model": "synthetic",
        }
        store.add_tables(entry, points_table(rows, RUN_ID), table)
        del table
    with st.stage(f"SQL over the stored Parquet (count + p99 TTFT of {point_ids[-1]})"):
        back = store.query(
            "SELECT count(*) AS n, quantile_cont(ttft_s, 0.99) AS p99 FROM requests "
            "WHERE run_id = ? AND point_id = ?",
            [RUN_ID, point_ids[-1]],
        ).to_pylist()[0]
    size_mb = sum(p.stat().st_size for p in root.rglob("*.parquet")) / 1e6
    print(f"requests: {n:,}  points: {n_points}  store: {root} ({size_mb:.0f} MB Parquet)")
    st.report()
    p = rows[-1]
    print(
        f"tput_per_gpu at {mid:.1f} tok/s/user: {value:.1f}; frontier points: {len(f.points)}; "
        f"{p['point_id']}: n={p['n_ttft']:,} p99 TTFT {p['p99_ttft']:.4f} s "
        f"[{p['p99_ttft_lo']:.4f}, {p['p99_ttft_hi']:.4f}] (SQL: n={back['n']:,}, "
        f"p99 {back['p99']:.4f} s)"
    )


if __name__ == "__main__":
    a = sys.argv[1:]
    main(
        int(a[0]) if a else 10_000_000,
        int(a[1]) if len(a) > 1 else 20,
        a[2] if len(a) > 2 else None,
    )
