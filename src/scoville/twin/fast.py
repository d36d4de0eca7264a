"""The twin's fast executor: a point's `PointPlan` simulated straight on the event kernel (no
asyncio), behind the client's `Executor` seam.

Same plans, send order (`plan_jobs`), record definition (`exchange_of` -> `to_record`) and
window rule (`WindowTracker`) as the asyncio driver; only the loop is the engine's own. Per-point
twin facts (bottleneck shares, KV occupancy, preemptions) come back in `extras`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from scoville.client.driver import (
    OnRecord,
    PointPlan,
    WindowTracker,
    count_chunk_tokens,
    plan_jobs,
    to_record,
)
from scoville.client.seam import GenerateRequest
from scoville.records.model import Phase, PointWindow, RequestRecord
from scoville.records.sink import Sink
from scoville.twin.cluster import Cluster, TwinConfig
from scoville.twin.engine import Seq
from scoville.twin.kernel import EventKernel
from scoville.twin.power import point_power_extras
from scoville.twin.server import exchange_of, make_seq

GAP_NS = 1_000_000_000  # idle time between points, as a real sweep idles


@dataclass(frozen=True, slots=True)
class PointResult:
    records: list[RequestRecord]
    window: PointWindow
    extras: dict[str, Any]
    end_ns: int  # when the last request of the point (warmup included) ended


class _StopGate:
    """Whether job `i` may still be sent: warmup always; a measured job until `stop` first
    answers True (asked before each measured send, as the driver asks it; then for good)."""

    def __init__(self, jobs: Sequence[Any], stop: Callable[[], bool] | None) -> None:
        self.jobs, self.stop, self.halted = jobs, stop, False

    def __call__(self, i: int) -> bool:
        if self.jobs[i][1] != "measure":
            return True
        if not self.halted and self.stop is not None:
            self.halted = self.stop()
        return not self.halted


def _send_all(
    cluster: Cluster,
    kernel: EventKernel,
    plan: PointPlan,
    jobs: Sequence[Any],
    start_ns: int,
    on_done: Callable[[Seq], None] | None = None,
    stop: Callable[[], bool] | None = None,
) -> list[Seq]:
    """Closed loop (`concurrency` lanes: the next request goes when one ends) or open loop
    (sends at `start_ns + arrivals_ns`, queued behind the in-flight cap when there is one).
    `on_done` hears each request as it ends; once `stop` answers True before a measured send
    (statistical stopping, as the driver asks it), no further measured request is sent."""
    done: list[Seq] = []
    closed = plan.arrivals_ns is None
    cap = max(1, plan.concurrency or 1) if closed else plan.concurrency
    queue: deque[int] = deque(range(len(jobs))) if closed else deque()
    in_flight = 0
    may_send = _StopGate(jobs, stop)

    def submit(i: int, t_ns: int) -> None:
        seq = make_seq(i, jobs[i][0], t_ns)
        seq.on_done = finished
        cluster.submit(seq, t_ns)

    def finished(seq: Seq) -> None:
        nonlocal in_flight
        done.append(seq)
        if on_done is not None:
            on_done(seq)
        # its seat passes straight to the next request; an open-loop request queued behind
        # the cap had arrived (and was let through) before any stop, as in the driver
        if queue and (not closed or may_send(queue[0])):
            kernel.schedule(seq.end_ns, partial(submit, queue.popleft()))
        else:
            queue.clear()  # drained, or stopped: nothing more is sent
            in_flight -= 1

    def arrive(i: int, t_ns: int) -> None:
        nonlocal in_flight
        if not may_send(i):
            return
        if cap is None or in_flight < cap:
            in_flight += 1
            submit(i, t_ns)
        else:
            queue.append(i)

    if closed:
        for _ in range(min(cap or 1, len(jobs))):
            i = queue.popleft()
            kernel.schedule(start_ns, partial(submit, i))
    else:
        for i, offset in enumerate(plan.arrivals_ns or ()):
            kernel.schedule(start_ns + offset, partial(arrive, i))
    kernel.run()
    return done


def simulate_point(
    cfg: TwinConfig,
    plan: PointPlan,
    start_ns: int = 0,
    on_record: OnRecord | None = None,
    stop: Callable[[], bool] | None = None,
) -> PointResult:
    """One point on a fresh deployment, starting at `start_ns`; records in send order.
    `on_record` hears each record as its request ends (so `stop` can judge the sample)."""
    jobs: list[tuple[GenerateRequest, Phase]] = plan_jobs(plan)
    if plan.arrivals_ns is not None and len(plan.arrivals_ns) != len(jobs):
        raise ValueError(f"{len(plan.arrivals_ns)} arrival times for {len(jobs)} requests")
    kernel = EventKernel(start_ns)
    cluster = Cluster(cfg, kernel)
    ones: dict[int, tuple[int, ...]] = {}  # one shared chunk_tokens tuple per length
    by_rid: dict[int, RequestRecord] = {}

    def record_of(seq: Seq) -> None:
        req, phase = jobs[seq.rid]
        scheduled = start_ns + plan.arrivals_ns[seq.rid] if plan.arrivals_ns else None
        tags = {"session_id": seq.session} if seq.session is not None else None
        ex = exchange_of(seq, req, ones)
        record = to_record(
            ex, req, plan.point_id, phase, count_chunk_tokens(ex, None), scheduled, tags=tags
        )
        by_rid[seq.rid] = record
        if on_record is not None:
            on_record(record)

    _send_all(cluster, kernel, plan, jobs, start_ns, record_of, stop)
    tracker = WindowTracker()
    records = [by_rid[rid] for rid in sorted(by_rid)]
    for record in records:
        tracker.add(record)
    end_ns = kernel.now_ns()
    extras = cluster.point_extras()
    extras["n_accelerators"] = cfg.n_accelerators
    span_s = (end_ns - start_ns) / 1e9
    extras.update(point_power_extras(cluster.replicas, span_s, cfg.hardware.tdp_w))
    return PointResult(records, tracker.window(plan, end_ns), extras, end_ns)


class FastExecutor:
    """`Executor` for the twin: each point on a fresh deployment, one after another on one
    virtual timeline (a second apart). `extras` holds each point's twin fields."""

    def __init__(self, cfg: TwinConfig, start_ns: int = 0) -> None:
        self.cfg = cfg
        self.t_ns = start_ns
        self.extras: dict[str, dict[str, Any]] = {}

    def simulate(
        self,
        plan: PointPlan,
        on_record: OnRecord | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> PointResult:
        res = simulate_point(self.cfg, plan, self.t_ns, on_record, stop)
        self.extras[plan.point_id] = res.extras
        self.t_ns = res.end_ns + GAP_NS
        return res

    async def run_point(
        self,
        plan: PointPlan,
        sink: Sink,
        on_record: OnRecord | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> PointWindow:
        res = self.simulate(plan, on_record, stop)
        for r in res.records:
            sink.write(r)
        sink.write_window(res.window)
        return res.window

    def point_extras(self, windows: Sequence[PointWindow]) -> dict[str, dict[str, Any]]:
        return {w.point_id: self.extras[w.point_id] for w in windows if w.point_id in self.extras}


def run_point(
    cfg: TwinConfig,
    requests: Sequence[GenerateRequest],
    point_id: str,
    *,
    concurrency: int | None = None,
    arrival_ns: Sequence[int] | None = None,
    warmup: int = 0,
    start_ns: int = 0,
) -> PointResult:
    """`simulate_point` for a list of requests: closed loop at `concurrency`, or open loop at
    `arrival_ns` (its rate is (n - 1) / span); the first `warmup` requests are not measured."""
    if (concurrency is None) == (arrival_ns is None):
        raise ValueError("give exactly one of concurrency or arrival_ns")
    warm, measured = requests[:warmup], requests[warmup:]
    if concurrency is not None:
        plan = PointPlan(point_id, "concurrency", float(concurrency), warm, measured, concurrency)
    else:
        arrivals = list(arrival_ns or ())
        span_s = (max(arrivals) - min(arrivals)) / 1e9
        rate = (len(requests) - 1) / span_s if span_s > 0 else 0.0
        plan = PointPlan(point_id, "rate", rate, warm, measured, None, arrivals)
    return simulate_point(cfg, plan, start_ns)
