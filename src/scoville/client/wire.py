"""When each request really reached the wire: aiohttp request tracing, per request.

The transport hands a fresh `WireTiming` to each attempt (`trace_request_ctx`); the callbacks
below fill it. `written_ns` is stamped in `on_request_chunk_sent`, which aiohttp calls just
before the write that puts the request's last body bytes on the socket (headers and a small
body go out in that same write), so TTFT starts when the request left the client, not when
the client began to prepare it. Connection set-up (TCP connect) is timed separately.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import aiohttp


@dataclass(slots=True)
class WireTiming:
    """Facts of one attempt on the wire, in monotonic ns (0 = not seen)."""

    now_ns: Callable[[], int] = time.monotonic_ns
    written_ns: int = 0  # just before the request's last bytes were written
    connect_start_ns: int = 0
    connect_end_ns: int = 0
    reused: bool = False  # a pooled keep-alive connection carried the request

    @property
    def connect_ms(self) -> float | None:
        """Connection set-up of this attempt; 0.0 on a reused connection, None if unknown."""
        if self.reused:
            return 0.0
        if self.connect_start_ns and self.connect_end_ns:
            return (self.connect_end_ns - self.connect_start_ns) / 1e6
        return None


def _ctx(trace_ctx: SimpleNamespace) -> WireTiming | None:
    timing = getattr(trace_ctx, "trace_request_ctx", None)
    return timing if isinstance(timing, WireTiming) else None


async def _connect_start(_s: Any, trace_ctx: SimpleNamespace, _p: Any) -> None:
    if (t := _ctx(trace_ctx)) is not None:
        t.connect_start_ns = t.now_ns()


async def _connect_end(_s: Any, trace_ctx: SimpleNamespace, _p: Any) -> None:
    if (t := _ctx(trace_ctx)) is not None:
        t.connect_end_ns = t.now_ns()


async def _reused(_s: Any, trace_ctx: SimpleNamespace, _p: Any) -> None:
    if (t := _ctx(trace_ctx)) is not None:
        t.reused = True


async def _written(_s: Any, trace_ctx: SimpleNamespace, _p: Any) -> None:
    # Called once per body chunk, before its write; the last call is the last byte's.
    if (t := _ctx(trace_ctx)) is not None:
        t.written_ns = t.now_ns()


def trace_config() -> aiohttp.TraceConfig:
    """The TraceConfig that fills the `WireTiming` passed as `trace_request_ctx`."""
    tc = aiohttp.TraceConfig()
    tc.on_connection_create_start.append(_connect_start)
    tc.on_connection_create_end.append(_connect_end)
    tc.on_connection_reuseconn.append(_reused)
    tc.on_request_headers_sent.append(_written)  # a body-less request ends with its headers
    tc.on_request_chunk_sent.append(_written)
    return tc


_BEARER = re.compile(r"(?i)(bearer\s+)[^\s\"',;]+")


def redact(text: str, secret: str | None) -> str:
    """`text` without the API key or any bearer token a server echoed back into it."""
    if secret:
        text = text.replace(secret, "[redacted]")
    return _BEARER.sub(r"\1[redacted]", text)


class SendPacer:
    """At most `per_turn` requests start per turn of the event loop; the others queue, in
    order, for the next turns.

    A burst of sends (a closed loop's wave of completions, an open loop's cluster of
    arrivals) costs the loop hundreds of microseconds a request; run back to back, 512 of them
    hold the loop for tens of milliseconds, and every frame that arrives meanwhile is stamped
    late. Spread over turns, the loop polls its sockets between every few sends, so a stamp
    waits at most a few sends. A request's TTFT starts when it is written, so a request held
    a turn is not charged for the wait. Waiters sleep on a future (no polling)."""

    def __init__(self, per_turn: int = 2) -> None:
        self.per_turn = per_turn
        self._started = 0  # in the current turn
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._armed = False

    async def wait(self) -> None:
        if self._started < self.per_turn and not self._waiters:
            self._started += 1
            self._arm()
            return
        fut = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        self._arm()
        await fut

    def _arm(self) -> None:
        if not self._armed:
            self._armed = True
            asyncio.get_running_loop().call_soon(self._next_turn)

    def _next_turn(self) -> None:
        """Runs once a turn while there is work: lets the next `per_turn` waiters go (they
        run in the coming turn and count against it)."""
        self._armed, self._started = False, 0
        while self._waiters and self._started < self.per_turn:
            fut = self._waiters.popleft()
            if not fut.done():  # a cancelled waiter gives its place up
                fut.set_result(None)
                self._started += 1
        if self._waiters or self._started:
            self._arm()
