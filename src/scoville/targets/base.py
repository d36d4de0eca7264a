"""What a target hands the pipeline: a `Server`, its `Clock`, and facts for the manifest.

Every target kind (the embedded llama.cpp server, a remote endpoint, the twin) is opened into
a `Target`; the pipeline never needs to know which kind it got.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from scoville.client.executor import DriverExecutor, Executor
from scoville.client.seam import Clock, Server
from scoville.records.model import PointWindow
from scoville.workload.tokenizers import Tokenizer


@dataclass
class Target:
    """An opened target.

    `loop_factory` is None for real targets; the twin supplies a factory for an event loop
    whose time is virtual, and the pipeline runs the driver inside it. `info` goes into the
    run manifest (model list, server properties, hardware labels). `close` releases whatever
    was started (a server process, sessions).
    """

    server: Server
    clock: Clock
    model: str
    tokenizer: Tokenizer | None
    kind: str  # "embedded" | "http" | "twin"
    info: dict[str, Any] = field(default_factory=dict)
    loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = None
    metrics_url: str | None = None  # Prometheus /metrics of the server, when it has one
    on_close: list[Callable[[], Awaitable[None] | None]] = field(default_factory=list)
    # False when the target reads only token counts (the twin): prompts are not built as text.
    wants_text: bool = True
    # Per-point fields only this target knows (the twin's bottleneck shares, KV occupancy).
    point_extras: Callable[[Sequence[PointWindow]], dict[str, dict[str, Any]]] | None = None
    # How points run: None is the asyncio driver over `server`; a target may offer its own
    # (the twin's fast executor simulates plans straight on its event engine).
    executor: Executor | None = None

    def point_executor(self) -> Executor:
        """The executor every point of a sweep on this target goes through."""
        if self.executor is not None:
            return self.executor
        return DriverExecutor(self.server, self.clock, self.tokenizer)

    async def close(self) -> None:
        await self.server.close()
        for fn in reversed(self.on_close):
            res = fn()
            if res is not None:
                await res
