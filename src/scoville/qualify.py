"""Wiring of a run's quality pass: `spec.quality` -> items (checked before measuring) -> the
pass on the run's still-open target once the sweep ends (`DriveArgs.after_sweep`), with
`quality.reference` opened beside it -> the document `summarize_run` writes as quality.json.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scoville.quality.gate import check_run_quality
from scoville.quality.inrun import items_of, measure, reference_spec
from scoville.quality.items import Item
from scoville.quality.passes import Endpoint
from scoville.spec.model import BenchmarkSpec
from scoville.targets.base import Target
from scoville.targets.registry import open_target


def endpoint(label: str, target: Target) -> Endpoint:
    return Endpoint(label, target.server, target.model, target.tokenizer, target.info)


@dataclass
class QualityStep:
    """The pass a run owes its spec; `doc` is its quality.json once `after_sweep` ran."""

    spec: BenchmarkSpec
    items: list[Item]
    on_stage: Callable[[str], None] | None = None  # hears one line when the pass starts
    doc: dict[str, Any] | None = field(default=None)

    async def after_sweep(self, target: Target) -> None:
        """Open the reference (if any) in a thread (a server start blocks), run the pass on
        both, close the reference; the run's own target is closed by the sweep."""
        own = endpoint(self.spec.target.url, target)
        ref_url = self.spec.quality.reference
        if self.on_stage is not None:
            against = f" and on the reference {ref_url}" if ref_url else ""
            self.on_stage(
                f"quality pass: {len(self.items)} items at concurrency "
                f"{self.spec.quality.concurrency}{against}"
            )
        if ref_url is None:
            self.doc = await measure(own, None, self.items, self.spec)
            return
        ref_t = await asyncio.to_thread(open_target, reference_spec(self.spec, self.items))
        try:
            self.doc = await measure(own, endpoint(ref_url, ref_t), self.items, self.spec)
        finally:
            await ref_t.close()


def quality_step(
    spec: BenchmarkSpec, on_stage: Callable[[str], None] | None = None
) -> QualityStep | None:
    """The run's quality pass, or None when `quality.task` is unset. A pass that cannot work
    (the twin, no bar, a bad task or data file) is refused here, before anything runs."""
    check_run_quality(spec)
    items = items_of(spec)
    return QualityStep(spec, items, on_stage) if items else None
