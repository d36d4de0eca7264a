"""Ray as the distributed client: a point's shards run as Ray tasks, one per worker, possibly
on other machines (`scoville run --workers ray://HEAD:10001`, or `ray` for a local instance).

Ray is an optional extra, imported only here and only when asked. Each task runs the same
`run_shard` as a local worker process and returns its records by value. Latencies are
differences of one node's monotonic clock, so clock offsets between nodes cannot corrupt them;
only the merged window's edges need a common time base, taken from each node's wall clock
(NTP-grade, milliseconds) and skipped for tasks on the driver's own host.
"""

from __future__ import annotations

import asyncio
import dataclasses
import socket
import time
from collections.abc import Sequence
from typing import Any

from scoville.client.driver import PointPlan
from scoville.client.scale.workers import (
    WorkerResult,
    WorkerTarget,
    merge_windows,
    run_shard,
    shard_plan,
)
from scoville.errors import UserError
from scoville.records.model import PointWindow, RequestRecord
from scoville.records.sink import MemorySink


def import_ray() -> Any:
    try:
        import ray
    except Exception as exc:  # ImportError, or a broken install raising anything
        raise UserError(
            "Ray is not installed here, so `--workers ray` cannot run. Install the extra "
            "(pip install 'scoville[ray]'), or use local worker processes (--workers N)."
        ) from exc
    return ray


def init_ray(ray: Any, address: str | None = None) -> None:
    """Connect to `address` (ray://host:port or "auto"), or start a local instance bound to
    loopback with no dashboard. Does nothing when Ray is already initialised."""
    if ray.is_initialized():
        return
    if address:
        ray.init(address=address, log_to_driver=False)
    else:
        ray.init(
            include_dashboard=False,
            _node_ip_address="127.0.0.1",
            log_to_driver=False,
            configure_logging=False,
        )


class _Barrier:
    """A Ray actor every task awaits before sending, so shards start together."""

    def __init__(self, parties: int) -> None:
        self._parties = parties
        self._arrived = 0
        self._event = asyncio.Event()

    async def wait(self) -> None:
        self._arrived += 1
        if self._arrived >= self._parties:
            self._event.set()
        await self._event.wait()


def _task(target: WorkerTarget, shard: PointPlan, worker: str, barrier: Any) -> WorkerResult:
    """Body of one Ray task (runs on a Ray worker process, maybe on another node)."""
    sink = MemorySink()

    async def gate() -> None:
        await barrier.wait.remote()

    window, series, offset = asyncio.run(run_shard(target, shard, worker, sink, gate))
    host = socket.gethostname()
    return WorkerResult(worker, host, window, series, offset, None, tuple(sink.records))


def shift_record(r: RequestRecord, delta_ns: int) -> RequestRecord:
    """The same record on a clock `delta_ns` ahead."""
    return dataclasses.replace(
        r,
        start_ns=r.start_ns + delta_ns,
        end_ns=r.end_ns + delta_ns,
        chunk_ns=tuple(t + delta_ns for t in r.chunk_ns),
        scheduled_ns=None if r.scheduled_ns is None else r.scheduled_ns + delta_ns,
        send_ns=None if r.send_ns is None else r.send_ns + delta_ns,
    )


def rebase(results: Sequence[WorkerResult], host: str, offset_ns: int) -> list[WorkerResult]:
    """Put every result on this host's monotonic clock. Same host: unchanged (one system-wide
    clock). Other hosts: shifted by the difference of wall-minus-monotonic offsets."""
    out = []
    for res in results:
        delta = 0 if res.host == host else res.wall_minus_mono_ns - offset_ns
        if delta == 0:
            out.append(res)
            continue
        w = res.window
        window = dataclasses.replace(w, start_ns=w.start_ns + delta, end_ns=w.end_ns + delta)
        records = tuple(shift_record(r, delta) for r in res.records)
        out.append(dataclasses.replace(res, window=window, records=records))
    return out


def run_point_ray(
    target: WorkerTarget,
    plan: PointPlan,
    n_workers: int,
    address: str | None = None,
    timeout_s: float = 3600.0,
    ray: Any = None,
) -> tuple[list[RequestRecord], PointWindow, list[WorkerResult]]:
    """Drive one point as `n_workers` Ray tasks; blocking. Returns merged records, the merged
    window on this host's clock, and the per-worker results."""
    ray = ray if ray is not None else import_ray()
    init_ray(ray, address)
    shards = shard_plan(plan, n_workers)
    barrier = ray.remote(_Barrier).options(num_cpus=0).remote(len(shards))
    task = ray.remote(_task).options(num_cpus=1, max_retries=0)
    refs = [task.remote(target, shard, str(i), barrier) for i, shard in enumerate(shards)]
    results: list[WorkerResult] = ray.get(refs, timeout=timeout_s)
    offset_ns = time.time_ns() - time.monotonic_ns()
    results = rebase(results, socket.gethostname(), offset_ns)
    records = [r for res in results for r in res.records]
    return records, merge_windows(plan, [r.window for r in results]), results
