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

    __slots__ = ("_heap", "_now_ns", "_seq", "_until_ns")

    def __init__(self, start_ns: int = 0) -> None:
        self._heap: list[tuple[int, int, Callback]] = []
        self._now_ns = start_ns
        self._seq = 0
        self._until_ns: int | None = None

    def quiet_through(self, t_ns: int) -> bool:
        """Whether nothing can happen before `t_ns` and at it: no event is due by then and the
        current run goes that far. A callback may then act out what it would have scheduled
        at `t_ns` at once (the engine's plain decode steps), and events still fire in order."""
        heap, until = self._heap, self._until_ns
        return (not heap or heap[0][0] > t_ns) and (until is None or t_ns <= until)

    def quiet_until(self) -> int | None:
        """The latest time `quiet_through` holds for (None: no limit)."""
        heap, until = self._heap, self._until_ns
        due = heap[0][0] - 1 if heap else None
        if until is None or (due is not None and due < until):
            return due
        return until

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
        self._until_ns = until_ns
        try:
            while heap:
                if until_ns is not None and heap[0][0] > until_ns:
                    self._now_ns = until_ns
                    break
                t_ns, _, fn = pop(heap)
                self._now_ns = t_ns
                fn(t_ns)
        finally:
            self._until_ns = None
        return self._now_ns

    def __len__(self) -> int:
        return len(self._heap)
