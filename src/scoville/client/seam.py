"""The one seam between the driver and whatever answers: a `Server` and a `Clock`.

A real HTTP endpoint (with the monotonic clock) and the digital twin (with a virtual clock) both
implement these protocols, so the same driver, records, metrics and report run on both. The
driver never reads time or sleeps except through its `Clock`.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from scoville.records.model import ErrorKind

Api = Literal["completions", "chat"]


@runtime_checkable
class Clock(Protocol):
    """Integer-nanosecond time and waiting. Monotonic for real runs, virtual for the twin."""

    def now_ns(self) -> int: ...

    async def sleep_until_ns(self, t_ns: int) -> None: ...


def real_loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's event loop where installed (about twice as fast for many streams, so the
    client stamps frames sooner), else None (asyncio's default)."""
    try:
        import uvloop
    except ImportError:
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


class MonotonicClock:
    """`time.monotonic_ns` and asyncio sleeps: the clock of every real run."""

    def now_ns(self) -> int:
        return time.monotonic_ns()

    async def sleep_until_ns(self, t_ns: int) -> None:
        delay_ns = t_ns - time.monotonic_ns()
        if delay_ns > 0:
            await asyncio.sleep(delay_ns / 1e9)


@contextlib.contextmanager
def quiet_collector(clock: Clock) -> Iterator[None]:
    """Keeps the cyclic garbage collector from walking the whole heap inside a measured
    window on the wall clock: one full collection first, then everything alive is frozen
    (`gc.freeze`) until the window ends, so the collections that still run inside it walk
    only what the window itself allocated. Without it the first point of a process took one
    full collection of about 40 ms mid-wave, and every frame that arrived meanwhile was
    stamped late (docs/DESIGN.md, "No full collection inside a measured window"). A virtual
    clock cannot be bent by a pause, so it is left alone."""
    if not isinstance(clock, MonotonicClock):
        yield
        return
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@dataclass(frozen=True, slots=True)
class GenerateRequest:
    """What to send. Exactly one of `prompt` (completions) or `messages` (chat) is set.

    `input_tokens` is the prompt length the workload built (exact for fixed-sequence prompts).
    `prefix_hashes` names the prompt's blocks of `block_size_tokens` tokens (agentic replay);
    a real server ignores them, the twin's prefix cache uses them.
    """

    request_id: str
    api: Api
    input_tokens: int
    max_tokens: int
    prompt: str | None = None
    messages: tuple[dict[str, str], ...] | None = None
    ignore_eos: bool = True
    min_tokens: int | None = None
    prefix_hashes: tuple[int, ...] = ()
    block_size_tokens: int = 0
    extra_body: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Exchange:
    """What came back, as facts. Built by a `Server`; turned into a record by the driver.

    `start_ns` is when the request's last byte was written (the TTFT/E2E anchor); `send_ns`
    when the client began it (before pooling and connecting), `connect_ms` the connection
    set-up (0.0 on a reused keep-alive connection, None where unknown). `chunk_ns[i]` is when
    the i-th output-bearing frame arrived (taken before parsing it); `chunk_text[i]` its text.
    `chunk_tokens` is set when the server states per-frame token counts (the twin does); else
    the driver counts them. Usage fields are the server's `usage` object (None where not
    reported or not believable: `usage_issue` then says why). On failure `error` is set and
    the chunks received before the failure are kept.
    """

    start_ns: int
    send_ns: int | None = None
    connect_ms: float | None = None
    retries: int = 0  # attempts repeated after a stale pooled connection
    usage_issue: str = ""
    end_ns: int = 0
    chunk_ns: list[int] = field(default_factory=list)
    chunk_text: list[str] = field(default_factory=list)
    chunk_tokens: Sequence[int] | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    finish_reason: str | None = None
    error: ErrorKind | None = None
    error_detail: str = ""
    http_status: int | None = None


ChunkCallback = Callable[[int, str], None]


@runtime_checkable
class Server(Protocol):
    """Anything that streams a generation. Never raises for a failed request: the returned
    `Exchange` carries the error kind. `on_chunk(t_ns, text)`, when given, is called as each
    frame arrives (for live consumers such as agent loops)."""

    async def generate(
        self, request: GenerateRequest, on_chunk: ChunkCallback | None = None
    ) -> Exchange: ...

    async def close(self) -> None: ...
