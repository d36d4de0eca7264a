"""What `scoville run` shows while it measures: the stage it is in, each point's progress with
live output tok/s, and the whole sweep's progress with an estimate of the time left.

The pipeline calls in once per completed request (never per chunk), and once when a point
stops before its plan (its target margin reached): that bar ends complete with the reason,
and the sweep's total drops the requests never sent, so its ETA does too. On a terminal the
display is drawn by a child process (`ProgressProcess`): a redraw costs milliseconds of CPU
under the GIL, which in the measuring process delayed the stamps of frames arriving
meanwhile (a loopback capture showed it in the p99 of the ITL error); the measuring process
only writes one small message per completed request to a pipe.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import signal
import sys
import time
from multiprocessing.connection import Connection
from types import TracebackType
from typing import TYPE_CHECKING, Any

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
        """One more request of `point_id` completed (`tokens`: its output tokens so far); at
        `done` 0 the point starts, and its elapsed time and rate count from then."""
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

    def point_end(self, point_id: str, done: int, planned: int, reason: str) -> None:
        """`point_id` stopped after `done` of its `planned` requests (`reason`, e.g. "margin
        reached at 36 of 200"): its bar ends full at `done`, and the sweep no longer counts
        the requests it will never send."""
        if point_id not in self._tasks:
            self.point(point_id, done, planned, 0)
        task = self._tasks[point_id]
        self._progress.update(
            task, total=done, completed=done, description=f"point {point_id} ({reason})"
        )
        self._sizes[point_id] = done
        self._done[point_id] = done
        if self._overall is not None:
            self._progress.update(
                self._overall,
                total=sum(self._sizes.values()),
                completed=sum(self._done.values()),
            )

    def bar(self, name: str) -> tuple[int, int, str]:
        """(completed, total, label) of the bar of point `name`, or of the sweep ("sweep")."""
        task_id = self._overall if name == "sweep" else self._tasks.get(name)
        if task_id is None:
            raise KeyError(f"no bar {name!r} yet")
        task = self._progress.tasks[task_id]
        return int(task.completed), int(task.total or 0), task.description


class ProgressProcess:
    """`RunProgress` drawn by a spawned child process on the same terminal (or `path`):
    `stage` and `point` become messages on a pipe. A child that died takes the display with
    it, never the run."""

    def __init__(
        self,
        spec: BenchmarkSpec,
        path: str | None = None,
        force_terminal: bool | None = None,
        width: int | None = None,
    ) -> None:
        ctx = mp.get_context("spawn")
        self._recv, self._send = ctx.Pipe(duplex=False)
        console_kw = {"force_terminal": force_terminal, "width": width}
        self._proc = ctx.Process(
            target=_draw, args=(self._recv, spec, path, console_kw), name="scoville-progress"
        )

    def __enter__(self) -> ProgressProcess:
        self._proc.start()
        self._recv.close()  # the child holds its own end
        return self

    def __exit__(self, *exc: object) -> None:
        self._post(("stop",))
        self._send.close()
        self._proc.join(timeout=10)
        if self._proc.is_alive():
            self._proc.terminate()

    def _post(self, msg: tuple[Any, ...]) -> None:
        with contextlib.suppress(OSError):  # the display is gone (broken pipe); the run goes on
            self._send.send(msg)

    def stage(self, message: str) -> None:
        self._post(("stage", message))

    def point(self, point_id: str, done: int, total: int, tokens: int) -> None:
        self._post(("point", point_id, done, total, tokens))

    def point_end(self, point_id: str, done: int, planned: int, reason: str) -> None:
        self._post(("end", point_id, done, planned, reason))


def _draw(
    conn: Connection, spec: BenchmarkSpec, path: str | None, console_kw: dict[str, Any]
) -> None:
    """The child: draw what the pipe says until told to stop (or the parent is gone).
    Ctrl-C is the parent's to handle: it stops the run, which then stops the display."""
    from rich.console import Console

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    out = open(path, "w") if path else contextlib.nullcontext(sys.stdout)  # noqa: SIM115
    with out as file, RunProgress(Console(file=file, **console_kw), spec) as progress:
        while True:
            try:
                msg = conn.recv()
            except (EOFError, OSError):
                return
            if msg[0] == "stop":
                return
            if msg[0] == "stage":
                progress.stage(msg[1])
            elif msg[0] == "end":
                progress.point_end(*msg[1:])
            else:
                progress.point(*msg[1:])


def progress_for(console: Console, spec: BenchmarkSpec) -> RunProgress | ProgressProcess:
    """The run's display: drawn by a child process on a terminal, in this process otherwise
    (a captured or redirected output is not redrawn, so it costs nothing to keep here)."""
    if console.is_terminal:
        return ProgressProcess(spec, width=console.width)
    return RunProgress(console, spec)
