"""The driver: sends a point's requests through a `Server`, turns exchanges into records.

Closed loop keeps `concurrency` requests in flight; open loop sends at scheduled times
(Poisson/gamma) with an optional in-flight cap. Warmup requests go first under the same load
and are recorded with phase="warmup"; the measurement window opens at the first measured send
and closes at the last measured completion. All waiting goes through the `Clock`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from scoville.client.seam import Clock, Exchange, GenerateRequest, Server
from scoville.records.model import ErrorKind, Phase, PointWindow, RequestRecord
from scoville.workload.tokenizers import Tokenizer


class Sink(Protocol):
    """What the driver writes to (`RecordSink`, `MemorySink`, or anything alike)."""

    def write(self, record: RequestRecord) -> None: ...

    def write_window(self, window: PointWindow) -> None: ...


@dataclass(frozen=True, slots=True)
class PointPlan:
    """One sweep point: what to send and how.

    `arrivals_ns` (open loop) are send offsets from the point start for warmup followed by
    measured requests; None means closed loop at `concurrency`.
    """

    point_id: str
    mode: str  # "concurrency" | "rate"
    level: float
    warmup: Sequence[GenerateRequest]
    measured: Sequence[GenerateRequest]
    concurrency: int | None = None  # closed loop in-flight count, or open-loop cap
    arrivals_ns: Sequence[int] | None = None


OnRecord = Callable[[RequestRecord], None]


def count_chunk_tokens(ex: Exchange, tokenizer: Tokenizer | None) -> tuple[list[int], str]:
    """Output tokens per frame, and where the counts came from ("usage"/"local"/"none").

    Servers that stream one token per frame report `completion_tokens == frames`; then each
    frame is one token. Otherwise frames are counted with the local tokenizer (at least 1).
    A server count far from the local one (outside [local/2 - 2, 2 local + 2]) is not
    believed: the local count stands and `ex.usage_issue` flags the request.
    """
    n = len(ex.chunk_ns)
    if ex.chunk_tokens is not None:
        return list(ex.chunk_tokens), "usage"
    if ex.completion_tokens is not None and ex.completion_tokens == n:
        return [1] * n, "usage"
    if tokenizer is not None:
        counts = [max(1, len(tokenizer.encode(t))) for t in ex.chunk_text]
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
    return [1] * n, "usage" if ex.completion_tokens is not None else "none"


async def count_off_loop(ex: Exchange, tokenizer: Tokenizer | None) -> tuple[list[int], str]:
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
        return [1] * len(ex.chunk_ns), "none"


def to_record(
    ex: Exchange,
    req: GenerateRequest,
    point_id: str,
    phase: Phase,
    tokenizer: Tokenizer | None,
    scheduled_ns: int | None = None,
    worker: str = "0",
    tags: dict[str, Any] | None = None,
    counted: tuple[list[int], str] | None = None,
) -> RequestRecord:
    """The facts of one exchange as a `RequestRecord` (`tags`: session/turn labels;
    `counted`: the result of `count_off_loop`, when the caller already counted)."""
    chunk_tokens, source = counted or count_chunk_tokens(ex, tokenizer)
    out = ex.completion_tokens if ex.completion_tokens is not None else sum(chunk_tokens)
    return RequestRecord(
        request_id=req.request_id,
        point_id=point_id,
        phase=phase,
        start_ns=ex.start_ns,
        end_ns=ex.end_ns,
        chunk_ns=tuple(ex.chunk_ns),
        chunk_tokens=tuple(chunk_tokens),
        input_tokens=ex.prompt_tokens if ex.prompt_tokens is not None else req.input_tokens,
        output_tokens=out,
        expected_input_tokens=req.input_tokens,
        expected_output_tokens=req.max_tokens,
        cached_tokens=ex.cached_tokens,
        token_source=source,  # type: ignore[arg-type]
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


class _Window:
    def __init__(self) -> None:
        self.start_ns: int | None = None
        self.end_ns = 0
        self.sent = 0

    def sent_at(self, t_ns: int) -> None:
        self.sent += 1
        if self.start_ns is None or t_ns < self.start_ns:
            self.start_ns = t_ns

    def ended_at(self, t_ns: int) -> None:
        self.end_ns = max(self.end_ns, t_ns)


async def run_point(
    server: Server,
    clock: Clock,
    plan: PointPlan,
    sink: Sink,
    tokenizer: Tokenizer | None = None,
    on_record: OnRecord | None = None,
    worker: str = "0",
) -> PointWindow:
    """Drive one point to completion; every request sent becomes exactly one record."""
    window = _Window()
    jobs: list[tuple[GenerateRequest, Phase]] = [(r, "warmup") for r in plan.warmup]
    jobs += [(r, "measure") for r in plan.measured]

    async def one(req: GenerateRequest, phase: Phase, scheduled_ns: int | None) -> None:
        ex = await server.generate(req)
        if phase == "measure":
            window.sent_at(ex.send_ns if ex.send_ns is not None else ex.start_ns)
            window.ended_at(ex.end_ns)
        counted = await count_off_loop(ex, tokenizer)
        record = to_record(
            ex, req, plan.point_id, phase, tokenizer, scheduled_ns, worker, counted=counted
        )
        sink.write(record)
        if on_record is not None:
            on_record(record)

    if plan.arrivals_ns is None:
        await _closed_loop(jobs, max(1, plan.concurrency or 1), one)
    else:
        await _open_loop(jobs, plan.arrivals_ns, plan.concurrency, clock, one)
    start = window.start_ns if window.start_ns is not None else clock.now_ns()
    result = PointWindow(
        point_id=plan.point_id,
        start_ns=start,
        end_ns=max(start, window.end_ns),
        mode=plan.mode,  # type: ignore[arg-type]
        level=plan.level,
        sent=window.sent,
    )
    sink.write_window(result)
    return result


async def _closed_loop(
    jobs: list[tuple[GenerateRequest, Phase]],
    concurrency: int,
    one: Callable[[GenerateRequest, Phase, int | None], object],
) -> None:
    queue = iter(jobs)

    async def lane() -> None:
        for req, phase in queue:  # a shared iterator: each job is taken exactly once
            await one(req, phase, None)  # type: ignore[misc]

    await asyncio.gather(*(lane() for _ in range(min(concurrency, len(jobs)))))


async def _open_loop(
    jobs: list[tuple[GenerateRequest, Phase]],
    arrivals_ns: Sequence[int],
    cap: int | None,
    clock: Clock,
    one: Callable[[GenerateRequest, Phase, int | None], object],
) -> None:
    if len(arrivals_ns) != len(jobs):
        raise ValueError(f"{len(arrivals_ns)} arrival times for {len(jobs)} requests")
    gate = asyncio.Semaphore(cap) if cap else None
    t0 = clock.now_ns()
    tasks = []

    async def send(req: GenerateRequest, phase: Phase, at_ns: int) -> None:
        if gate is None:
            await one(req, phase, at_ns)  # type: ignore[misc]
            return
        async with gate:
            await one(req, phase, at_ns)  # type: ignore[misc]

    for (req, phase), offset in zip(jobs, arrivals_ns, strict=True):
        await clock.sleep_until_ns(t0 + offset)
        tasks.append(asyncio.ensure_future(send(req, phase, t0 + offset)))
    await asyncio.gather(*tasks)
