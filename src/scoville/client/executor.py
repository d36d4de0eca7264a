"""How a point's plan gets executed: the `Executor` seam, and the asyncio driver behind it.

Every sweep runs plan -> executor -> records -> window. The asyncio driver (`DriverExecutor`)
serves every real target; a target may offer a faster executor of its own (the twin's event
engine) that keeps the same plans, send order, record definition and window rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from scoville.client.driver import OnRecord, PointPlan, run_point
from scoville.client.seam import Clock, Server
from scoville.records.model import PointWindow
from scoville.records.sink import Sink
from scoville.workload.tokenizers import Tokenizer


class Executor(Protocol):
    """Runs one point: sends `plan`'s warmup then measured requests, writes one record per
    request to `sink` (and to `on_record`, as each completes), writes and returns the point's
    window. `stop` (statistical stopping) is asked before each measured send; once it answers
    True no further measured request is sent and those in flight complete."""

    async def run_point(
        self,
        plan: PointPlan,
        sink: Sink,
        on_record: OnRecord | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> PointWindow: ...


class DriverExecutor:
    """The asyncio driver over a `Server` and its `Clock` (real targets, the twin's
    virtual-time server)."""

    def __init__(
        self, server: Server, clock: Clock, tokenizer: Tokenizer | None = None, worker: str = "0"
    ) -> None:
        self.server = server
        self.clock = clock
        self.tokenizer = tokenizer
        self.worker = worker

    async def run_point(
        self,
        plan: PointPlan,
        sink: Sink,
        on_record: OnRecord | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> PointWindow:
        return await run_point(
            self.server, self.clock, plan, sink, self.tokenizer, on_record, self.worker, stop
        )
