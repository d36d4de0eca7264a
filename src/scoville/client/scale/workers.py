"""Multi-process client: one sweep point's requests sharded over N local worker processes.

Each worker is a spawned process with its own event loop running the foundation's driver
(`run_point`) on its shard, writing its own JSONL sink; all start together at a barrier, and
the parent merges records and windows afterwards. No clock translation is needed between
local processes: Linux's CLOCK_MONOTONIC is one system-wide clock, so every process's `_ns`
timestamps are directly comparable (the Ray variant, across machines, rebases; see ray_workers).
"""

from __future__ import annotations

import asyncio
import dataclasses
import multiprocessing as mp
import os
import socket
import time
import traceback
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scoville.client.driver import PointPlan, run_point
from scoville.client.seam import GenerateRequest, MonotonicClock
from scoville.client.selftest.integrity import ClientMonitor, ClientSeries
from scoville.records.model import PointWindow, RequestRecord
from scoville.records.sink import RecordSink, read_records
from scoville.workload.tokenizers import Tokenizer


@dataclass(frozen=True, slots=True)
class WorkerTarget:
    """What a worker needs to open its own connection to the server (picklable). The API key
    is read from `api_key_env` inside the worker, never passed through pickles or files;
    `tokenizer_factory` (a module-level function) counts multi-token frames."""

    base_url: str
    model: str
    api_key_env: str | None = None
    request_timeout_s: float = 600.0
    tokenizer_factory: Callable[[], Tokenizer | None] | None = None


@dataclass(frozen=True, slots=True)
class WorkerResult:
    """One worker's outcome. `window` is on that worker's clock; `wall_minus_mono_ns` (taken at
    the start barrier) lets a merger on another host rebase it."""

    worker: str
    host: str
    window: PointWindow
    client: ClientSeries
    wall_minus_mono_ns: int
    records_path: str | None = None  # local processes: the worker's sink file
    records: tuple[RequestRecord, ...] = ()  # Ray: records come back by value


def split_counts(total: int, n: int) -> list[int]:
    """`total` split into `n` near-equal non-negative parts, larger parts first."""
    return [total // n + (1 if i < total % n else 0) for i in range(n)]


def _deal(items: Sequence[GenerateRequest], weights: list[int]) -> list[list[GenerateRequest]]:
    """Round-robin weighted by `weights` (a worker with 3 lanes gets 3 of every sum(weights))."""
    cycle = [w for w, k in enumerate(weights) for _ in range(k)]
    out: list[list[GenerateRequest]] = [[] for _ in weights]
    for j, item in enumerate(items):
        out[cycle[j % len(cycle)]].append(item)
    return out


def shard_plan(plan: PointPlan, n_workers: int) -> list[PointPlan]:
    """Split one point over at most `n_workers` workers, keeping its total load.

    Closed loop: the concurrency is split (c=10 over 3 -> 4, 3, 3) and requests are dealt in
    proportion. Open loop: arrival j goes to worker j mod n with its offset unchanged, so the
    merged schedule is the original one; an in-flight cap is split like a concurrency."""
    if n_workers < 1:
        raise ValueError("n_workers must be >= 1")
    if plan.arrivals_ns is None:
        conc = max(1, plan.concurrency or 1)
        weights = [c for c in split_counts(conc, n_workers) if c > 0]
        warm, meas = _deal(plan.warmup, weights), _deal(plan.measured, weights)
        return [
            dataclasses.replace(plan, warmup=w, measured=m, concurrency=c)
            for w, m, c in zip(warm, meas, weights, strict=True)
        ]
    jobs = [*plan.warmup, *plan.measured]
    n = min(n_workers, len(jobs)) or 1
    caps = split_counts(plan.concurrency, n) if plan.concurrency else [0] * n
    n_warm = len(plan.warmup)
    shards = []
    for w in range(n):
        idx = list(range(w, len(jobs), n))
        shards.append(
            dataclasses.replace(
                plan,
                warmup=[jobs[j] for j in idx if j < n_warm],
                measured=[jobs[j] for j in idx if j >= n_warm],
                arrivals_ns=[plan.arrivals_ns[j] for j in idx],
                concurrency=max(1, caps[w]) if plan.concurrency else None,
            )
        )
    return shards


async def run_shard(
    target: WorkerTarget,
    shard: PointPlan,
    worker: str,
    sink: Any,
    gate: Callable[[], Awaitable[None]],
) -> tuple[PointWindow, ClientSeries, int]:
    """Open the server, wait at `gate` (the start barrier), drive the shard, watch the loop.
    Returns the worker-local window, its client series and its wall-minus-monotonic offset."""
    from scoville.client.openai_sse import OpenAIStreamingServer

    clock = MonotonicClock()
    key = os.environ.get(target.api_key_env) if target.api_key_env else None
    server = OpenAIStreamingServer(
        target.base_url, target.model, clock, key, target.request_timeout_s
    )
    tokenizer = target.tokenizer_factory() if target.tokenizer_factory else None
    monitor = ClientMonitor(clock)
    await gate()
    offset_ns = time.time_ns() - time.monotonic_ns()
    await monitor.start()
    try:
        window = await run_point(server, clock, shard, sink, tokenizer, worker=worker)
    finally:
        series = await monitor.stop()
        await server.close()
    return window, series, offset_ns


def _process_main(
    target: WorkerTarget, shard: PointPlan, worker: str, sink_path: str, barrier: Any, queue: Any
) -> None:
    """Entry point of a spawned worker. `except Exception` is right here: a process boundary."""
    try:

        async def gate() -> None:
            await asyncio.to_thread(barrier.wait)

        with RecordSink(Path(sink_path)) as sink:
            window, series, offset = asyncio.run(run_shard(target, shard, worker, sink, gate))
        res = WorkerResult(worker, socket.gethostname(), window, series, offset, sink_path)
        queue.put(("ok", res))
    except BaseException:
        barrier.abort()
        queue.put(("error", f"worker {worker}: {traceback.format_exc()}"))


def merge_windows(plan: PointPlan, windows: Sequence[PointWindow]) -> PointWindow:
    """The point's window from its workers' windows (all on one clock): the earliest start,
    the latest end, the sum of requests sent."""
    live = [w for w in windows if w.sent > 0] or list(windows)
    return PointWindow(
        point_id=plan.point_id,
        start_ns=min(w.start_ns for w in live),
        end_ns=max(w.end_ns for w in live),
        mode=plan.mode,
        level=plan.level,
        sent=sum(w.sent for w in windows),
        notes=(f"client workers: {len(windows)}",),
    )


def run_point_processes(
    target: WorkerTarget,
    plan: PointPlan,
    n_workers: int,
    work_dir: Path,
    timeout_s: float = 3600.0,
) -> tuple[list[RequestRecord], PointWindow, list[WorkerResult]]:
    """Drive one point with `n_workers` spawned processes; blocking (call it via
    `asyncio.to_thread` from async code). Records come back in completion order per worker;
    each carries `worker="<i>"`. Worker sinks stay in `work_dir/<point>.w<i>.jsonl`."""
    shards = shard_plan(plan, n_workers)
    ctx = mp.get_context("spawn")
    barrier, queue = ctx.Barrier(len(shards)), ctx.Queue()
    work_dir.mkdir(parents=True, exist_ok=True)
    procs = []
    for i, shard in enumerate(shards):
        path = work_dir / f"{plan.point_id}.w{i}.jsonl"
        path.unlink(missing_ok=True)
        args = (target, shard, str(i), str(path), barrier, queue)
        procs.append(ctx.Process(target=_process_main, args=args, name=f"scoville-worker-{i}"))
    for p in procs:
        p.start()
    results: list[WorkerResult] = []
    errors: list[str] = []
    try:
        for _ in procs:
            status, payload = queue.get(timeout=timeout_s)
            (results if status == "ok" else errors).append(payload)
    finally:
        for p in procs:
            p.join(timeout=30)
    if errors:
        raise RuntimeError("client worker failed:\n" + "\n".join(errors))
    results.sort(key=lambda r: int(r.worker))
    records = [r for res in results for r in read_records(Path(res.records_path or ""))[0]]
    return records, merge_windows(plan, [r.window for r in results]), results
