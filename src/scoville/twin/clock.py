"""Virtual time for the Server seam: a shared nanosecond counter, an asyncio event loop that
jumps to the next timer instead of sleeping, the `Clock` the driver reads, and the `Kernel`
the engine schedules on.

The pipeline runs the unchanged driver inside `VirtualTimeLoop` (`Target.loop_factory`);
whenever every task is waiting on a timer, the loop's selector advances virtual time to
the earliest one, so a 10-minute simulated run takes as long as its Python work.
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Mapping
from typing import Any

from scoville.twin.kernel import Callback


class VirtualTime:
    """The one mutable virtual clock value (integer ns) shared by loop, clock and kernel."""

    __slots__ = ("ns",)

    def __init__(self, start_ns: int = 0) -> None:
        self.ns = start_ns

    def advance_to(self, t_ns: int) -> None:
        if t_ns > self.ns:
            self.ns = t_ns


class _VirtualSelector(selectors.BaseSelector):
    """Delegates registration to a real selector; when nothing is ready and the loop would
    wait `timeout` seconds for its next timer, advances virtual time by that much instead."""

    def __init__(self, vt: VirtualTime) -> None:
        self._real = selectors.DefaultSelector()
        self._vt = vt

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._real.register(fileobj, events, data)

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        return self._real.unregister(fileobj)

    def modify(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._real.modify(fileobj, events, data)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        ready = self._real.select(0)
        if ready or timeout == 0:
            return ready
        if timeout is None:  # no timer at all: only real I/O (e.g. a worker thread) can wake us
            return self._real.select(None)
        # round, not ceil: timers set at t_ns / 1e9 must land on t_ns exactly
        self._vt.ns += max(1, round(timeout * 1e9))
        return []

    def get_map(self) -> Mapping[Any, selectors.SelectorKey]:
        return self._real.get_map()

    def close(self) -> None:
        self._real.close()


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An asyncio loop whose `time()` is the shared virtual clock (seconds = ns / 1e9)."""

    def __init__(self, vt: VirtualTime) -> None:
        self._vt = vt
        super().__init__(_VirtualSelector(vt))

    def time(self) -> float:
        return self._vt.ns / 1e9


class VirtualClock:
    """`Clock` over virtual time. Must be awaited inside a `VirtualTimeLoop` on the same
    `VirtualTime`; sleeping returns at exactly `t_ns` (never earlier)."""

    def __init__(self, vt: VirtualTime) -> None:
        self.vt = vt

    def now_ns(self) -> int:
        return self.vt.ns

    async def sleep_until_ns(self, t_ns: int) -> None:
        if t_ns <= self.vt.ns:
            await asyncio.sleep(0)
            return
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        loop.call_at(t_ns / 1e9, _wake, fut, self.vt, t_ns)
        await fut


def _wake(fut: asyncio.Future[None], vt: VirtualTime, t_ns: int) -> None:
    vt.advance_to(t_ns)  # float seconds may round a hair early; pin to the exact ns
    if not fut.done():
        fut.set_result(None)


class LoopKernel:
    """The engine's `Kernel` on the running asyncio loop (virtual or real time).

    With `speedup` (wall-clock serving), virtual ns = (loop.time() - origin) * 1e9 * speedup.
    """

    def __init__(self, vt: VirtualTime | None = None, speedup: float = 1.0) -> None:
        self.vt = vt
        self.speedup = speedup
        self._origin_s: float | None = None

    def _loop(self) -> asyncio.AbstractEventLoop:
        loop = asyncio.get_running_loop()
        if self._origin_s is None:
            self._origin_s = loop.time()
        return loop

    def now_ns(self) -> int:
        if self.vt is not None:
            return self.vt.ns
        loop = self._loop()
        assert self._origin_s is not None
        return int((loop.time() - self._origin_s) * 1e9 * self.speedup)

    def schedule(self, t_ns: int, fn: Callback) -> None:
        loop = self._loop()
        if self.vt is not None:
            loop.call_at(t_ns / 1e9, self._fire, t_ns, fn)
        else:
            assert self._origin_s is not None
            loop.call_at(self._origin_s + t_ns / 1e9 / self.speedup, fn, t_ns)

    def _fire(self, t_ns: int, fn: Callback) -> None:
        assert self.vt is not None
        self.vt.advance_to(t_ns)
        fn(t_ns)
