"""Driving a sweep: probe the target, build each point's plan, run the points one after
another through the target's executor, with telemetry around them; the first SIGINT/SIGTERM
stops it with every in-flight request recorded (`cancelled`) and the last point partial.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from scoville.client.driver import PointPlan
from scoville.client.executor import Executor
from scoville.client.plan import build_plans, rate_point_sizes, to_request
from scoville.client.scale.dispatch import WorkersSpec, run_point_scaled, scaled_session
from scoville.client.scale.workers import WorkerResult, WorkerTarget
from scoville.client.stop import StopOnSignal
from scoville.errors import SpecError, TargetError
from scoville.metrics.samples import MarginTracker, refuse_unreachable_margin, stop_rule_for
from scoville.records.model import ErrorKind, PointWindow, RequestRecord
from scoville.records.sink import Sink
from scoville.spec.model import BenchmarkSpec
from scoville.targets.base import Target
from scoville.telemetry.session import TelemetryResult, TelemetrySession
from scoville.workload.fixed import Prompt, exact_prompt

# (point_id, requests done, requests in the point, output tokens done): once per completed
# request, never per chunk, so a progress display costs the measuring loop nothing per token
OnProgress = Callable[[str, int, int, int], None]
OnStage = Callable[[str], None]  # one line: what the run is doing now (probe, prompts, ...)
# (point_id, requests sent, requests planned, why): a point that ended before its plan did
# (its target margin was reached), so a display ends its bar complete and drops the unsent
OnPointEnd = Callable[[str, int, int, str], None]


async def template_overhead(target: Target, spec: BenchmarkSpec) -> tuple[int, str]:
    """Tokens the server adds around a prompt (chat template, BOS): one probe request.

    Sends a 32-token text with max_tokens=1 and compares the server's usage.prompt_tokens
    with the local count. Returns (overhead, note). A stream that ends well with no output
    token (the model's first token ended it) still counts: the probe needs the server's
    prompt count, not an output."""
    if target.tokenizer is None:
        return 0, "no tokenizer: prompt lengths not verified"
    text = exact_prompt(target.tokenizer, 32, random.Random(spec.seed + 7919))
    probe = to_request(Prompt(text, 32, 1), "probe", spec)
    ex = await target.server.generate(probe)
    ended_at_once = ex.error is ErrorKind.EMPTY and ex.prompt_tokens is not None
    if ex.error is not None and not ended_at_once:
        raise TargetError(
            f"The target failed a 1-token probe request before the sweep "
            f"({ex.error.value}: {ex.error_detail[:200]}). Check that "
            f"model '{target.model}' is served and accepts {spec.target.api} "
            "requests."
        )
    if ex.prompt_tokens is None:
        return 0, "server reports no usage: prompt lengths are local counts, not verified"
    return ex.prompt_tokens - 32, f"template overhead {ex.prompt_tokens - 32} tokens (measured)"


@dataclass
class Driven:
    """What driving a sweep produced besides the records on disk (`stopped`: the signal
    that stopped it, e.g. "SIGINT"; `overhead_tokens`: the probe's template overhead)."""

    windows: list[PointWindow] = field(default_factory=list)
    telemetry: TelemetryResult | None = None
    workers: dict[str, list[WorkerResult]] = field(default_factory=dict)
    stopped: str | None = None
    overhead_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class Sweep:
    """How a sweep's prompts are made and which points it runs: `salt` is the prompt-text
    salt (fresh per run, kept in the manifest so a resumed run sends the same prompts);
    `overhead_tokens` a known template overhead (None: measure it with the probe); `skip`
    the points already complete (a resumed run)."""

    salt: str
    overhead_tokens: int | None = None
    skip: frozenset[str] = frozenset()


class _Ticker:
    """Counts a point's completed requests and output tokens for `on_progress`."""

    def __init__(self, plan: PointPlan, on_progress: OnProgress | None) -> None:
        self.point_id, self.on_progress = plan.point_id, on_progress
        self.total, self.done, self.tokens = len(plan.warmup) + len(plan.measured), 0, 0

    def start(self) -> None:
        """The point begins: its bar appears at 0, so its elapsed time and rate count from its
        start, not from its first completed request."""
        if self.on_progress:
            self.on_progress(self.point_id, 0, self.total, 0)

    def __call__(self, r: RequestRecord) -> None:
        self.done += 1
        self.tokens += r.output_tokens
        if self.on_progress:
            self.on_progress(self.point_id, self.done, self.total, self.tokens)


def check_stopping(spec: BenchmarkSpec, workers: WorkersSpec) -> None:
    """Refuse, before anything is measured, a target margin no point could reach within its
    cap, and one asked of client workers (they run a point's whole plan)."""
    load = spec.load
    if load.target_margin is None:
        return
    if workers.kind != "inline":
        raise SpecError(
            "load.target_margin stops a point from the client that measures it; it cannot "
            "stop client workers spread over processes. Drop --workers, or drop the margin."
        )
    caps = [spec.requests_for(c) for c in load.concurrency]
    caps += [rate_point_sizes(spec, r)[0] for r in load.request_rates_per_s]
    refuse_unreachable_margin(load, caps)


async def _run_inline(
    executor: Executor, spec: BenchmarkSpec, plan: PointPlan, sink: Sink, args: DriveArgs
) -> PointWindow:
    """One point in this process; with a target margin, until the margin is reached or every
    planned (cap) request is sent: one `MarginTracker` per point sees each record."""
    tick = _Ticker(plan, args.on_progress)
    tick.start()
    rule = stop_rule_for(spec.load, len(plan.measured))
    if rule is None:
        return await executor.run_point(plan, sink, tick)
    tracker = MarginTracker(rule)

    def seen(r: RequestRecord) -> None:
        tracker.observe(r)
        tick(r)

    window = await executor.run_point(plan, sink, seen, tracker.reached)
    if tick.done < tick.total and not window.partial and args.on_point_end is not None:
        reason = f"margin reached at {tick.done} of {tick.total}"
        args.on_point_end(plan.point_id, tick.done, tick.total, reason)
    return window


def _worker_target(target: Target, spec: BenchmarkSpec) -> WorkerTarget:
    if target.base_url is None:
        raise TargetError(
            f"--workers needs an HTTP target; {spec.target.url} runs in "
            "this process only. Drop --workers."
        )
    return WorkerTarget(
        target.base_url, target.model, spec.target.api_key_env, spec.target.request_timeout_s
    )


async def _run_scaled(
    target: Target,
    spec: BenchmarkSpec,
    plan: PointPlan,
    sink: Sink,
    workers: WorkersSpec,
    work_dir: Path,
    driven: Driven,
    on_progress: OnProgress | None,
) -> PointWindow:
    """One point over several client processes (local or Ray); records merged into `sink`."""
    tick = _Ticker(plan, on_progress)
    tick.start()
    records, window, results = await asyncio.to_thread(
        run_point_scaled, _worker_target(target, spec), plan, workers, work_dir
    )
    for r in records:
        sink.write(r)
        tick(r)
    sink.write_window(window)
    driven.workers[plan.point_id] = list(results)
    return window


async def _plans(
    target: Target, spec: BenchmarkSpec, args: DriveArgs, driven: Driven
) -> list[PointPlan]:
    """Probe the target (template overhead), then every point's plan not yet complete."""
    sweep, notes = args.sweep, args.notes
    stage = args.on_stage or (lambda _msg: None)
    stage("probe: one 1-token request measures the server's prompt template")
    overhead, note = await template_overhead(target, spec)
    notes.append(note)
    if sweep.overhead_tokens is not None and sweep.overhead_tokens != overhead:
        notes.append(
            f"template overhead now {overhead}, was {sweep.overhead_tokens}: the stored "
            "value is used so resumed points send the same prompts"
        )
        overhead = sweep.overhead_tokens
    driven.overhead_tokens = overhead
    check_context(target, spec, overhead)
    if target.tokenizer is None:
        raise TargetError("The target has no tokenizer; exact-length prompts need one.")
    notes.append(f"prompt-text salt {sweep.salt} (lengths follow the seed; text is fresh per run)")
    stage("building exact-length prompts")
    plans: Sequence[PointPlan] = build_plans(
        spec, target.tokenizer if target.wants_text else None, overhead, sweep.salt
    )
    return [p for p in plans if p.point_id not in sweep.skip]


def check_context(target: Target, spec: BenchmarkSpec, overhead_tokens: int) -> None:
    """Refuse a shape the target's context window cannot hold (when the target states it)."""
    window = target.context_tokens
    isl, osl = spec.shape.isl_tokens, spec.shape.osl_tokens
    if window is not None and isl + osl + overhead_tokens > window:
        raise TargetError(
            f"shape.isl_tokens {isl} + shape.osl_tokens {osl} + {overhead_tokens} template "
            f"tokens = {isl + osl + overhead_tokens} exceed the context window of "
            f"'{target.model}' ({window} tokens per request, as the server states). Lower "
            "--isl or --osl, or serve the model with a longer context."
        )


@dataclass(frozen=True, slots=True)
class DriveArgs:
    """What `drive` needs besides the target, spec and sink: the progress callback, the
    run's notes (appended to), the client workers, their work directory, the sweep."""

    on_progress: OnProgress | None
    notes: list[str]
    workers: WorkersSpec
    work_dir: Path
    sweep: Sweep
    on_stage: OnStage | None = None
    # Work on the still-open target once the sweep ends unstopped (the run's quality pass).
    after_sweep: Callable[[Target], Awaitable[None]] | None = None
    on_point_end: OnPointEnd | None = None


async def drive(target: Target, spec: BenchmarkSpec, sink: Sink, args: DriveArgs) -> Driven:
    """Probe, build every point's prompts, then run the points one after another, with
    telemetry (power, server metrics, client integrity) recorded around the sweep, then
    `args.after_sweep` on the still-open target (the quality pass). The first
    SIGINT/SIGTERM stops the sweep: in-flight requests are recorded as cancelled, the point
    is kept marked partial, and `Driven.stopped` names the signal."""
    driven = Driven()
    try:
        async with StopOnSignal() as stop:
            try:
                await _sweep(target, spec, sink, args, driven)
                if args.after_sweep is not None and stop.signal is None:
                    await args.after_sweep(target)
            except asyncio.CancelledError:
                if not stop.absorb():
                    raise
            if stop.signal is not None:
                driven.stopped = stop.signal.name
        return driven
    finally:
        await target.close()


async def _sweep(
    target: Target, spec: BenchmarkSpec, sink: Sink, args: DriveArgs, driven: Driven
) -> None:
    plans = await _plans(target, spec, args, driven)
    session = None
    if target.has_telemetry:
        session = TelemetrySession.auto(
            metrics_url=target.metrics_url,
            clock=target.clock,
            declared_power_w=spec.accelerators.power_w_per_accelerator,
            n_accelerators=spec.accelerators.count,
        )
        await session.start()
    try:
        with scaled_session(args.workers):
            await _points(target, spec, sink, args, plans, driven)
    finally:
        if session is not None:
            driven.telemetry = await session.stop()


async def _points(
    target: Target,
    spec: BenchmarkSpec,
    sink: Sink,
    args: DriveArgs,
    plans: Sequence[PointPlan],
    driven: Driven,
) -> None:
    executor = target.point_executor()
    for plan in plans:
        if args.workers.kind == "inline":
            window = await _run_inline(executor, spec, plan, sink, args)
        else:
            window = await _run_scaled(
                target, spec, plan, sink, args.workers, args.work_dir, driven, args.on_progress
            )
        driven.windows.append(window)
