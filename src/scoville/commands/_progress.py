"""What `scoville run` shows while it measures: the stage it is in, each point's progress with
live output tok/s, and the whole sweep's progress with an estimate of the time left.

The pipeline calls in once per completed request (never per chunk) and the display redraws
on its own at `REFRESH_PER_S`, so rendering stays off the measuring hot path.
"""

from __future__ import annotations

import time
from types import TracebackType
from typing import TYPE_CHECKING

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from scoville.client.plan import rate_point_sizes

if TYPE_CHECKING:
    from rich.console import Console

    from scoville.spec.model import BenchmarkSpec

REFRESH_PER_S = 2.0  # redraws a second: enough to read, negligible next to the client's work


def sweep_requests(spec: BenchmarkSpec) -> dict[str, int]:
    """point_id -> requests it sends (warmup + measured), as `build_plans` sizes them."""
    sizes = {f"c{c}": spec.requests_for(c) + spec.warmup_for(c) for c in spec.load.concurrency}
    for rate in spec.load.request_rates_per_s:
        n, w = rate_point_sizes(spec, rate)
        sizes[f"r{rate:g}"] = n + w
    return sizes


class RunProgress:
    """A context manager: `stage(msg)` prints a stage line, `point(...)` is the pipeline's
    `on_progress`. The overall bar counts requests, so its ETA weighs points by their size."""

    def __init__(self, console: Console, spec: BenchmarkSpec) -> None:
        self._sizes = sweep_requests(spec)
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(bar_width=20),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=console,
            refresh_per_second=REFRESH_PER_S,
        )
        self._console = console
        self._overall: TaskID | None = None
        self._tasks: dict[str, TaskID] = {}
        self._done: dict[str, int] = {}
        self._started_s: dict[str, float] = {}

    def __enter__(self) -> RunProgress:
        self._progress.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._progress.__exit__(exc_type, exc, tb)

    def stage(self, message: str) -> None:
        self._progress.console.print(f"[dim]{time.strftime('%H:%M:%S')}[/dim] {message}")

    def point(self, point_id: str, done: int, total: int, tokens: int) -> None:
        """One more request of `point_id` completed (`tokens`: its output tokens so far)."""
        now_s = time.monotonic()
        if self._overall is None:
            total_all = sum(self._sizes.values())
            points = len(self._sizes)
            self._overall = self._progress.add_task(
                f"sweep ({points} points)", total=total_all, rate=""
            )
        if point_id not in self._tasks:
            self._started_s[point_id] = now_s
            self._tasks[point_id] = self._progress.add_task(
                f"point {point_id}", total=total, rate=""
            )
        elapsed_s = max(1e-9, now_s - self._started_s[point_id])
        rate = f"{tokens / elapsed_s:,.0f} tok/s"
        self._progress.update(self._tasks[point_id], completed=done, rate=rate)
        self._done[point_id] = done
        self._progress.update(self._overall, completed=sum(self._done.values()))
