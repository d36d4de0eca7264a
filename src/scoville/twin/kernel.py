"""A tiny discrete-event kernel: a heap of (time_ns, seq, callback) and a virtual clock.

The twin's engine schedules its step completions and request arrivals through the `Kernel`
protocol; `EventKernel` runs them in simulated time without asyncio (the fast path), and
`scoville.twin.server` supplies an asyncio-backed kernel for the Server seam.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Protocol

Callback = Callable[[int], None]


class Kernel(Protocol):
    """Schedules `fn(t_ns)` to run at virtual time `t_ns` (never earlier than now)."""

    def now_ns(self) -> int: ...

    def schedule(self, t_ns: int, fn: Callback) -> None: ...


class EventKernel:
    """SimPy-like: events fire in (time, insertion order); the clock jumps to each event."""

    __slots__ = ("_heap", "_now_ns", "_seq")

    def __init__(self, start_ns: int = 0) -> None:
        self._heap: list[tuple[int, int, Callback]] = []
        self._now_ns = start_ns
        self._seq = 0

    def now_ns(self) -> int:
        return self._now_ns

    def schedule(self, t_ns: int, fn: Callback) -> None:
        if t_ns < self._now_ns:
            raise ValueError(f"cannot schedule in the past ({t_ns} < {self._now_ns})")
        self._seq += 1
        heapq.heappush(self._heap, (t_ns, self._seq, fn))

    def run(self, until_ns: int | None = None) -> int:
        """Run events until none are left (or the next is after `until_ns`); returns now."""
        heap = self._heap
        pop = heapq.heappop
        while heap:
            if until_ns is not None and heap[0][0] > until_ns:
                self._now_ns = until_ns
                break
            t_ns, _, fn = pop(heap)
            self._now_ns = t_ns
            fn(t_ns)
        return self._now_ns

    def __len__(self) -> int:
        return len(self._heap)
