"""Stopping a sweep on SIGINT/SIGTERM without losing a record.

`StopOnSignal` turns the first SIGINT or SIGTERM into a cancellation of the task that drives
the sweep: the driver records every in-flight request as `cancelled` and writes the point's
window marked partial, and the caller summarises what completed. A second signal gets the
default behaviour (Python's KeyboardInterrupt, or termination), so a stuck stop can be forced.
"""

from __future__ import annotations

import asyncio
import signal
from types import TracebackType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopOnSignal:
    """`async with StopOnSignal() as stop:` inside the driving task; `stop.signal` names the
    signal that stopped it (None: not stopped). Where the loop cannot watch signals (not the
    main thread, a loop without signal support) it does nothing."""

    def __init__(self) -> None:
        self.signal: signal.Signals | None = None
        self._task: asyncio.Task[object] | None = None
        self._installed: list[signal.Signals] = []

    async def __aenter__(self) -> StopOnSignal:
        loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        for sig in STOP_SIGNALS:
            try:
                loop.add_signal_handler(sig, self._on_signal, sig)
            except (NotImplementedError, RuntimeError, ValueError):
                continue  # no signal support here: the default behaviour stays
            self._installed.append(sig)
        return self

    def _on_signal(self, sig: signal.Signals) -> None:
        self.signal = sig
        self._remove()  # the next signal gets the default behaviour
        if self._task is not None:
            self._task.cancel()

    def absorb(self) -> bool:
        """Call in `except CancelledError`: True (and the cancellation is consumed) when it
        came from a stop signal, False when it is someone else's to propagate."""
        if self.signal is None:
            return False
        if self._task is not None:
            self._task.uncancel()
        return True

    def _remove(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in self._installed:
            loop.remove_signal_handler(sig)  # SIGINT gets Python's own handler back
        self._installed.clear()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._installed:
            self._remove()
