"""The driver: sends a point's requests through a `Server`, turns exchanges into records.

Closed loop keeps `concurrency` requests in flight; open loop sends at scheduled times
(Poisson/gamma) with an optional in-flight cap. Warmup requests go first under the same load
and are recorded with phase="warmup"; the measurement window opens at the first measured send
and closes at the last measured completion. All waiting goes through the `Clock`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from scoville.client.seam import Clock, Exchange, GenerateRequest, Server, quiet_collector
from scoville.errors import StorageError
from scoville.records.model import ErrorKind, Mode, Phase, PointWindow, RequestRecord, TokenSource
from scoville.records.sink import Sink
from scoville.workload.tokenizers import Tokenizer


@dataclass(frozen=True, slots=True)
class PointPlan:
    """One sweep point: what to send and how.

    `arrivals_ns` (open loop) are send offsets from the point start for warmup followed by
    measured requests; None means closed loop at `concurrency`.
    """

    point_id: str
    mode: Mode  # "concurrency" (closed loop) or "rate" (open loop)
    level: float
    warmup: Sequence[GenerateRequest]
    measured: Sequence[GenerateRequest]
    concurrency: int | None = None  # closed loop in-flight count, or open-loop cap
    arrivals_ns: Sequence[int] | None = None


OnRecord = Callable[[RequestRecord], None]
SendOne = Callable[[GenerateRequest, Phase, int | None], Awaitable[None]]


# Output tokens per frame, and where the counts came from.
Counted = tuple[tuple[int, ...], TokenSource]


def count_chunk_tokens(
    ex: Exchange, tokenizer: Tokenizer | None
) -> tuple[tuple[int, ...], TokenSource]:
    """Output tokens per frame, and where the counts came from ("usage"/"local"/"none").

    Servers that stream one token per frame report `completion_tokens == frames`; then each
    frame is one token. Otherwise frames are counted with the local tokenizer (at least 1).
    A server count far from the local one (outside [local/2 - 2, 2 local + 2]) is not
    believed: the local count stands and `ex.usage_issue` flags the request.
    """
    n = len(ex.chunk_ns)
    if ex.chunk_tokens is not None:
        return tuple(ex.chunk_tokens), "usage"  # a tuple passes through without a copy
    if ex.completion_tokens is not None and ex.completion_tokens == n:
        return (1,) * n, "usage"
    if tokenizer is not None:
        counts = tuple(max(1, len(tokenizer.encode(t))) for t in ex.chunk_text)
        if ex.completion_tokens is None:
            return counts, "local"
        local = sum(counts)
        if not local / 2 - 2 <= ex.completion_tokens <= 2 * local + 2:
            ex.usage_issue = (
                f"usage.completion_tokens {ex.completion_tokens} vs {local} counted locally"
            )
            ex.completion_tokens = None
            return counts, "local"
        return counts, "usage"
    return (1,) * n, "usage" if ex.completion_tokens is not None else "none"


async def count_off_loop(ex: Exchange, tokenizer: Tokenizer | None) -> Counted:
    """`count_chunk_tokens` off the event loop whenever the tokenizer must run (the server's
    /tokenize is a blocking HTTP call; a local tokenizer costs tens of microseconds a frame,
    which would delay every other stream's stamps), and never raising: when the tokenizer
    fails (the server died), frames count 1 each and a request that had not already failed
    is recorded as failed with `ErrorKind.TOKEN_COUNT`."""
    n = len(ex.chunk_ns)
    must_tokenize = ex.chunk_tokens is None and ex.completion_tokens != n and n > 0
    try:
        if tokenizer is not None and must_tokenize:
            return await asyncio.to_thread(count_chunk_tokens, ex, tokenizer)
        return count_chunk_tokens(ex, tokenizer)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        why = f"output not counted: tokenizer failed ({type(exc).__name__}: {exc})"[:300]
        if ex.error is None:
            ex.error, ex.error_detail = ErrorKind.TOKEN_COUNT, why
        else:
            ex.error_detail = f"{ex.error_detail}; {why}"
        return (1,) * len(ex.chunk_ns), "none"


def to_record(
    ex: Exchange,
    req: GenerateRequest,
    point_id: str,
    phase: Phase,
    counted: Counted,
    scheduled_ns: int | None = None,
    worker: str = "0",
    tags: dict[str, Any] | None = None,
) -> RequestRecord:
    """The facts of one exchange as a `RequestRecord` (`counted`: the output tokens per frame
    and their source, from `count_off_loop` or `count_chunk_tokens`; `tags`: session/turn
    labels)."""
    chunk_tokens, source = counted
    out = ex.completion_tokens if ex.completion_tokens is not None else sum(chunk_tokens)
    return RequestRecord(
        request_id=req.request_id,
        point_id=point_id,
        phase=phase,
        start_ns=ex.start_ns,
        end_ns=ex.end_ns,
        chunk_ns=tuple(ex.chunk_ns),
        chunk_tokens=chunk_tokens,
        input_tokens=ex.prompt_tokens if ex.prompt_tokens is not None else req.input_tokens,
        output_tokens=out,
        expected_input_tokens=req.input_tokens,
        expected_output_tokens=req.max_tokens,
        cached_tokens=ex.cached_tokens,
        token_source=source,
        usage_issue=ex.usage_issue,
        scheduled_ns=scheduled_ns,
        error=ex.error,
        error_detail=ex.error_detail,
        http_status=ex.http_status,
        finish_reason=ex.finish_reason,
        worker=worker,
        tags=tags or {},
        send_ns=ex.send_ns,
        connect_ms=ex.connect_ms,
        retries=ex.retries,
    )


def plan_jobs(plan: PointPlan) -> list[tuple[GenerateRequest, Phase]]:
    """The order every executor sends a point in: warmup requests first, then measured."""
    jobs: list[tuple[GenerateRequest, Phase]] = [(r, "warmup") for r in plan.warmup]
    return jobs + [(r, "measure") for r in plan.measured]


class WindowTracker:
    """The measurement-window rule, for every executor: the window opens at the first
    measured send and closes at the last measured completion (warmup never counts)."""

    def __init__(self) -> None:
        self.start_ns: int | None = None
        self.end_ns = 0
        self.sent = 0

    def add(self, record: RequestRecord) -> None:
        if record.phase != "measure":
            return
        self.sent += 1
        sent_ns = record.send_ns if record.send_ns is not None else record.start_ns
        if self.start_ns is None or sent_ns < self.start_ns:
            self.start_ns = sent_ns
        self.end_ns = max(self.end_ns, record.end_ns)

    def partial(self, plan: PointPlan, now_ns: int) -> PointWindow:
        """The window of a point stopped before it finished (never valid)."""
        w = self.window(plan, now_ns)
        total = len(plan.measured)
        return replace(
            w, partial=True, notes=(f"partial: stopped after {self.sent} of {total} measured",)
        )

    def window(self, plan: PointPlan, now_ns: int) -> PointWindow:
        """The point's window (`now_ns` when nothing was measured)."""
        start = self.start_ns if self.start_ns is not None else now_ns
        return PointWindow(
            point_id=plan.point_id,
            start_ns=start,
            end_ns=max(start, self.end_ns),
            mode=plan.mode,
            level=plan.level,
            sent=self.sent,
        )


async def run_point(
    server: Server,
    clock: Clock,
    plan: PointPlan,
    sink: Sink,
    tokenizer: Tokenizer | None = None,
    on_record: OnRecord | None = None,
    worker: str = "0",
    stop: Callable[[], bool] | None = None,
) -> PointWindow:
    """Drive one point to completion; every request sent becomes exactly one record."""
    window = WindowTracker()
    jobs = plan_jobs(plan)

    async def one(req: GenerateRequest, phase: Phase, scheduled_ns: int | None) -> None:
        start_ns = clock.now_ns()
        try:
            ex = await server.generate(req)
        except asyncio.CancelledError:  # the run is stopping: the request still gets a record
            ex = cancelled_exchange(start_ns, clock.now_ns())
            uncounted: Counted = ((1,) * len(ex.chunk_ns), "none")
            _keep(to_record(ex, req, plan.point_id, phase, uncounted, scheduled_ns, worker))
            raise
        try:
            counted = await count_off_loop(ex, tokenizer)
        except asyncio.CancelledError:  # stopping while counting: frames count one each
            uncounted = ((1,) * len(ex.chunk_ns), "none")
            _keep(to_record(ex, req, plan.point_id, phase, uncounted, scheduled_ns, worker))
            raise
        _keep(to_record(ex, req, plan.point_id, phase, counted, scheduled_ns, worker))

    def _keep(record: RequestRecord) -> None:
        window.add(record)
        sink.write(record)
        if on_record is not None:
            on_record(record)

    try:
        with quiet_collector(clock):
            if plan.arrivals_ns is None:
                await _closed_loop(jobs, max(1, plan.concurrency or 1), one, stop)
            else:
                await _open_loop(jobs, plan.arrivals_ns, plan.concurrency, clock, one, stop)
    except BaseException:
        # Stopped (signal) or failed (disk full): the point's window is written, marked partial.
        partial = window.partial(plan, clock.now_ns())
        with contextlib.suppress(StorageError, OSError):  # the sink's own error propagates
            sink.write_window(partial)
        raise
    result = window.window(plan, clock.now_ns())
    sink.write_window(result)
    return result


def cancelled_exchange(start_ns: int, end_ns: int) -> Exchange:
    """The exchange of a request cut short because the run was stopped."""
    return Exchange(
        start_ns=start_ns,
        end_ns=max(start_ns, end_ns),
        error=ErrorKind.CANCELLED,
        error_detail="the run was stopped while the request was in flight",
    )


async def _all(coros: Sequence[Awaitable[None]]) -> None:
    """Await every coroutine; if one fails or the caller is cancelled, cancel the rest and
    wait for them (each records its cancellation) before the error propagates."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def _closed_loop(
    jobs: list[tuple[GenerateRequest, Phase]],
    concurrency: int,
    one: SendOne,
    stop: Callable[[], bool] | None = None,
) -> None:
    queue = iter(jobs)

    async def lane() -> None:
        for req, phase in queue:  # a shared iterator: each job is taken exactly once
            if phase == "measure" and stop is not None and stop():
                return
            await one(req, phase, None)

    await _all([lane() for _ in range(min(concurrency, len(jobs)))])


async def _open_loop(
    jobs: list[tuple[GenerateRequest, Phase]],
    arrivals_ns: Sequence[int],
    cap: int | None,
    clock: Clock,
    one: SendOne,
    stop: Callable[[], bool] | None = None,
) -> None:
    if len(arrivals_ns) != len(jobs):
        raise ValueError(f"{len(arrivals_ns)} arrival times for {len(jobs)} requests")
    gate = asyncio.Semaphore(cap) if cap else None
    t0 = clock.now_ns()
    tasks = []

    async def send(req: GenerateRequest, phase: Phase, at_ns: int) -> None:
        if gate is None:
            await one(req, phase, at_ns)
            return
        async with gate:
            await one(req, phase, at_ns)

    try:
        for (req, phase), offset in zip(jobs, arrivals_ns, strict=True):
            await clock.sleep_until_ns(t0 + offset)
            if phase == "measure" and stop is not None and stop():
                break
            tasks.append(asyncio.ensure_future(send(req, phase, t0 + offset)))
    except BaseException:
        await _all(tasks)  # not yet sent requests get no record: they were never sent
        raise
    await _all(tasks)
