"""What a target hands the pipeline: a `Server`, its `Clock`, typed facts (labels it fills,
accelerators it serves with, what it supports) and a manifest section.

Every target kind (the embedded llama.cpp server, a remote endpoint, the twin) is opened into
a `Target`; the pipeline reads its fields and never asks which kind it got (`kind` is only
written to the manifest).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scoville.client.executor import DriverExecutor, Executor
from scoville.client.lanes import LanesExecutor
from scoville.client.seam import Clock, Server
from scoville.records.model import PointWindow
from scoville.spec.model import AcceleratorSpec
from scoville.workload.tokenizers import Tokenizer

PointExtras = Mapping[str, Mapping[str, Any]]  # point_id -> summary-row fields


@dataclass(frozen=True, slots=True)
class RunSource:
    """Who answered a run, as the summary needs it: the model served, labels the target fills
    where the spec says "unknown", the accelerators it serves with (used when the spec leaves
    them at the default), per-point fields only it knows, and its manifest section."""

    model: str
    manifest: Mapping[str, Any]
    labels: Mapping[str, Any] = field(default_factory=dict)
    accelerators: AcceleratorSpec | None = None
    extra: PointExtras = field(default_factory=dict)


@dataclass
class Target:
    """An opened target.

    `loop_factory` is None for real targets; the twin supplies a factory for an event loop
    whose time is virtual, and the pipeline runs the driver inside it. `info` goes into the
    run manifest (model list, server properties, hardware labels). `close` releases whatever
    was started (a server process, sessions).

    Capabilities: `base_url` is set when the target answers over HTTP (then client worker
    processes can reach it: `supports_workers`); `has_telemetry` is False when nothing on
    this machine measures it (the twin runs in virtual time).
    """

    server: Server
    clock: Clock
    model: str
    tokenizer: Tokenizer | None
    kind: str  # "embedded" | "http" | "twin": for the manifest; no caller branches on it
    info: dict[str, Any] = field(default_factory=dict)
    loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = None
    metrics_url: str | None = None  # Prometheus /metrics of the server, when it has one
    on_close: list[Callable[[], Awaitable[None] | None]] = field(default_factory=list)
    # False when the target reads only token counts (the twin): prompts are not built as text.
    wants_text: bool = True
    # Per-point fields only this target knows (the twin's bottleneck shares, KV occupancy).
    point_extras: Callable[[Sequence[PointWindow]], PointExtras] | None = None
    # Labels the target knows (e.g. the embedded model's quantisation) for those the spec
    # leaves "unknown"; the accelerators it serves with when the spec declares none.
    labels: Mapping[str, Any] = field(default_factory=dict)
    accelerators: AcceleratorSpec | None = None
    base_url: str | None = None
    has_telemetry: bool = True
    context_tokens: int | None = None  # tokens one request may hold, when the target says

    @property
    def supports_workers(self) -> bool:
        """Client worker processes need a URL to reach the target."""
        return self.base_url is not None

    def manifest(self, **sections: Any) -> dict[str, Any]:
        """The manifest's target part: kind, model, `info`, the labels it fills, `sections`."""
        out = {"kind": self.kind, "model": self.model, **self.info, **sections}
        if self.labels:
            out.setdefault("label_defaults", dict(self.labels))
        return out

    def source(self, windows: Sequence[PointWindow], **sections: Any) -> RunSource:
        """This target's facts for the summary of a run over `windows`."""
        extra = self.point_extras(windows) if self.point_extras else {}
        return RunSource(
            self.model, self.manifest(**sections), self.labels, self.accelerators, extra
        )

    # How points run: None is the asyncio driver over `server`; a target may offer its own
    # (the twin's fast executor simulates plans straight on its event engine).
    executor: Executor | None = None

    # How agentic lanes points run: None is the lane driver over `server`; the twin offers an
    # event-driven executor of its own (same plays, records and window rule).
    lanes_executor: LanesExecutor | None = None

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
