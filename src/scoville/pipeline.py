"""The one place that wires the stages, top to bottom:

spec -> target -> workload (exact prompts) -> driver (records on disk as they complete)
     -> metrics (summary rows) -> bundle (run directory) -> report (report.html).
"""

from __future__ import annotations

import asyncio
import random
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scoville.bundle.files import new_run_dir, write_json, write_manifest, write_spec
from scoville.bundle.run import load_run
from scoville.bundle.summary import SummaryDoc, summary_doc, write_summary
from scoville.client.driver import PointPlan
from scoville.client.plan import build_plans, to_request
from scoville.client.scale.dispatch import WorkersSpec, parse_workers, run_point_scaled
from scoville.client.scale.workers import WorkerResult, WorkerTarget
from scoville.client.seam import real_loop_factory
from scoville.client.selftest.calibrate import Envelope, load_envelope
from scoville.errors import TargetError
from scoville.metrics.compute import Declared, summarize
from scoville.metrics.row import SummaryRow
from scoville.records.model import PointWindow, RequestRecord
from scoville.records.sink import MemorySink, RecordSink, Sink, read_records
from scoville.report.html import render
from scoville.spec.model import AcceleratorSpec, BenchmarkSpec
from scoville.targets.base import RunSource, Target
from scoville.targets.registry import open_target
from scoville.telemetry.annotate import telemetry_columns, timeline
from scoville.telemetry.session import TelemetryResult, TelemetrySession
from scoville.workload.fixed import Prompt, exact_prompt

# (point_id, requests done, requests in the point, output tokens done): once per completed
# request, never per chunk, so a progress display costs the measuring loop nothing per token
OnProgress = Callable[[str, int, int, int], None]
OnStage = Callable[[str], None]  # one line: what the run is doing now (start, probe, ...)


@dataclass
class RunResult:
    run_dir: Path
    summary: SummaryDoc


def labels_of(spec: BenchmarkSpec, source: RunSource) -> dict[str, Any]:
    """The labels that group points into configurations. Labels the target knows (e.g. the
    embedded model's quantisation) fill those the spec leaves "unknown"."""
    labels = {
        "system": spec.accelerators.kind,
        "model": spec.model_name or source.model,
        "precision": spec.precision,
        "framework": spec.serving.framework,
        "spec_decode": spec.serving.speculative_decoding,
        "disagg": spec.serving.disaggregated,
    }
    for key, value in source.labels.items():
        if labels.get(key) in ("unknown", None):
            labels[key] = value
    return labels


def with_target_accelerators(
    spec: BenchmarkSpec, source: RunSource, notes: list[str]
) -> BenchmarkSpec:
    """A spec whose accelerators are left at the default takes the target's own (the twin
    knows it serves with TP=8 on H200s); a spec that declares them keeps its declaration."""
    acc = source.accelerators
    if acc is None or spec.accelerators != AcceleratorSpec():
        return spec
    notes.append(f"accelerators from the target: {acc.kind} x{acc.count}")
    return spec.model_copy(update={"accelerators": acc})


def declared_of(spec: BenchmarkSpec) -> Declared:
    slo = spec.slo
    return Declared(
        n_accelerators=spec.accelerators.count,
        power_w_per_accelerator=spec.accelerators.power_w_per_accelerator,
        power_boundary=spec.accelerators.power_boundary,
        slo_ttft_s=slo.ttft_ms / 1e3 if slo.ttft_ms else None,
        slo_tpot_s=slo.tpot_ms / 1e3 if slo.tpot_ms else None,
        slo_e2e_s=slo.e2e_ms / 1e3 if slo.e2e_ms else None,
    )


async def template_overhead(target: Target, spec: BenchmarkSpec) -> tuple[int, str]:
    """Tokens the server adds around a prompt (chat template, BOS): one probe request.

    Sends a 32-token text with max_tokens=1 and compares the server's usage.prompt_tokens
    with the local count. Returns (overhead, note)."""
    if target.tokenizer is None:
        return 0, "no tokenizer: prompt lengths not verified"
    text = exact_prompt(target.tokenizer, 32, random.Random(spec.seed + 7919))
    probe = to_request(Prompt(text, 32, 1), "probe", spec)
    ex = await target.server.generate(probe)
    if ex.error is not None:
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
    """What driving a sweep produced besides the records on disk."""

    windows: list[PointWindow] = field(default_factory=list)
    telemetry: TelemetryResult | None = None
    workers: dict[str, list[WorkerResult]] = field(default_factory=dict)


def _ticker(plan: PointPlan, on_progress: OnProgress | None) -> Callable[[RequestRecord], None]:
    total, done, tokens = len(plan.warmup) + len(plan.measured), 0, 0

    def tick(r: RequestRecord) -> None:
        nonlocal done, tokens
        done += 1
        tokens += r.output_tokens
        if on_progress:
            on_progress(plan.point_id, done, total, tokens)

    return tick


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
    records, window, results = await asyncio.to_thread(
        run_point_scaled, _worker_target(target, spec), plan, workers, work_dir
    )
    tick = _ticker(plan, on_progress)
    for r in records:
        sink.write(r)
        tick(r)
    sink.write_window(window)
    driven.workers[plan.point_id] = list(results)
    return window


async def drive(
    target: Target,
    spec: BenchmarkSpec,
    sink: Sink,
    on_progress: OnProgress | None,
    notes: list[str],
    workers: WorkersSpec | None = None,
    work_dir: Path | None = None,
    on_stage: OnStage | None = None,
) -> Driven:
    """Probe, build every point's prompts, then run the points one after another, with
    telemetry (power, server metrics, client integrity) recorded around the sweep."""
    workers = workers or WorkersSpec("inline")
    driven = Driven()
    stage = on_stage or (lambda _msg: None)
    try:
        stage("probe: one 1-token request measures the server's prompt template")
        overhead, note = await template_overhead(target, spec)
        notes.append(note)
        if target.tokenizer is None:
            raise TargetError("The target has no tokenizer; exact-length prompts need one.")
        salt = secrets.token_hex(8)  # fresh prompt text per run: no cache hits across runs
        stage("building exact-length prompts")
        notes.append(f"prompt-text salt {salt} (lengths follow the seed; text is fresh per run)")
        plans: Sequence[PointPlan] = build_plans(
            spec, target.tokenizer if target.wants_text else None, overhead, salt
        )
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
            executor = target.point_executor()
            for plan in plans:
                if workers.kind == "inline":
                    driven.windows.append(
                        await executor.run_point(plan, sink, _ticker(plan, on_progress))
                    )
                else:
                    driven.windows.append(
                        await _run_scaled(
                            target,
                            spec,
                            plan,
                            sink,
                            workers,
                            work_dir or Path("."),
                            driven,
                            on_progress,
                        )
                    )
        finally:
            if session is not None:
                driven.telemetry = await session.stop()
        return driven
    finally:
        await target.close()


def run_benchmark(
    spec: BenchmarkSpec,
    out_dir: Path,
    on_progress: OnProgress | None = None,
    workers: str | None = None,
    envelope: Path | None = None,
    keep_records: bool = True,
    on_stage: OnStage | None = None,
) -> RunResult:
    """Measure `spec` and write its bundle; records reach disk even if the run is stopped.
    `keep_records=False` keeps them in memory only (no records.jsonl; the summary and
    report never need it).

    `workers` spreads each point over client processes: "4" (local), "ray", "ray:8",
    "ray://head:10001?workers=16"; None or "1" keeps the client in this process.
    `envelope` is a `scoville calibrate` result: points beyond it are flagged. `on_stage`
    hears one line per stage (target start, probe, prompts); `on_progress` each request."""
    workers_spec = parse_workers(workers)
    env = load_envelope(envelope) if envelope is not None else None  # fail before measuring
    if on_stage is not None:
        on_stage(f"starting target {spec.target.url}")
    target = open_target(spec)
    run_dir = new_run_dir(out_dir, spec)
    write_spec(run_dir, spec)
    started = datetime.now(UTC).isoformat()
    notes: list[str] = [f"tokenizer: {target.tokenizer.name if target.tokenizer else 'none'}"]
    sink: RecordSink | MemorySink = (
        RecordSink(run_dir / "records.jsonl") if keep_records else MemorySink()
    )
    interrupted = False
    driven = Driven()
    try:
        with asyncio.Runner(loop_factory=target.loop_factory or real_loop_factory()) as runner:
            driven = runner.run(
                drive(
                    target,
                    spec,
                    sink,
                    on_progress,
                    notes,
                    workers_spec,
                    run_dir / "workers",
                    on_stage,
                )
            )
    except KeyboardInterrupt:
        interrupted = True
        notes.append("interrupted: only completed points are summarised")
    finally:
        sink.close()
        write_manifest(
            run_dir,
            target.manifest(),
            started,
            {"client_workers": workers or "1"},
        )
    if isinstance(sink, MemorySink):
        records, windows = sink.records, sink.windows
    else:
        records, windows = read_records(run_dir / "records.jsonl")
    measured = Measured(records, windows, driven.telemetry, driven.workers)
    if env is not None:
        notes.append(f"client envelope from {envelope}")
    result = summarize_run(run_dir, spec, measured, target.source(windows), notes, env)
    if interrupted:
        raise KeyboardInterrupt(str(run_dir))
    return result


@dataclass(frozen=True, slots=True)
class Measured:
    """What a sweep produced: its records and point windows, the telemetry recorded around
    it, and each point's client-worker results (when it was spread over processes)."""

    records: Sequence[RequestRecord]
    windows: Sequence[PointWindow]
    telemetry: TelemetryResult | None = None
    workers: Mapping[str, list[WorkerResult]] = field(default_factory=dict)


def summarize_run(
    run_dir: Path,
    spec: BenchmarkSpec,
    measured: Measured,
    source: RunSource,
    notes: list[str],
    envelope: Envelope | None = None,
) -> RunResult:
    """Metrics (+ telemetry columns) -> summary.json, telemetry.json -> report.html."""
    if source.labels:
        notes.append("labels from the target: " + _pairs(source.labels))
    spec = with_target_accelerators(spec, source, notes)
    labels = labels_of(spec, source)
    shape = {
        "isl": spec.shape.isl_tokens,
        "osl": spec.shape.osl_tokens,
        "range_ratio": spec.shape.range_ratio,
    }
    records, windows, telemetry = measured.records, measured.windows, measured.telemetry
    rows = summarize(records, windows, declared_of(spec), {**labels, **shape})
    rows = [_with_verdicts(row, source.extra.get(row.point_id, {})) for row in rows]
    if telemetry is not None:
        write_json(run_dir / "telemetry.json", telemetry.to_json_dict())
        columns = telemetry_columns(
            telemetry,
            windows,
            records,
            spec.accelerators.count,
            workers=dict(measured.workers) or None,
            envelope=envelope,
        )
        rows = [_with_verdicts(row, columns.get(row.point_id, {})) for row in rows]
    server = telemetry.server if telemetry is not None else None
    summary = summary_doc(
        run_dir.name,
        [row.to_dict() for row in rows],
        spec_hash=spec.content_hash(),
        labels=labels,
        notes=notes,
        range_ratio=spec.shape.range_ratio,
        server_timeline=timeline(server, records) if server is not None else None,
    )
    write_summary(run_dir, summary)
    write_report([run_dir], run_dir / "report.html")
    return RunResult(run_dir, summary)


# Columns a later stage adds that can distrust a point: (verdict column, its one-line reason).
_VERDICTS = (("valid_client", "client_reason"), ("agentic_valid", "agentic_reason"))


def _with_verdicts(row: SummaryRow, columns: Mapping[str, Any]) -> SummaryRow:
    """The row with a later stage's columns; a point the client (telemetry) or the agentic
    rules distrust is not valid, and its `invalid_reason` says why."""
    row = row.with_columns(columns)
    for verdict, reason in _VERDICTS:
        if columns.get(verdict) is False:
            row = row.distrusted(str(columns.get(reason) or verdict.replace("_", " ")))
    return row


def _pairs(mapping: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in mapping.items())


def finish_run(
    spec: BenchmarkSpec,
    measured: Measured,
    out_dir: Path,
    source: RunSource,
    notes: Sequence[str] = (),
) -> RunResult:
    """Write a bundle for records made elsewhere (the twin's fast path, agentic replay):
    records.jsonl, spec, manifest (`source.manifest`), then `summarize_run`."""
    run_dir = new_run_dir(out_dir, spec)
    write_spec(run_dir, spec)
    started = datetime.now(UTC).isoformat()
    with RecordSink(run_dir / "records.jsonl") as sink:
        for r in measured.records:
            sink.write(r)
        for w in measured.windows:
            sink.write_window(w)
    write_manifest(run_dir, dict(source.manifest), started)
    return summarize_run(run_dir, spec, measured, source, list(notes))


def write_report(run_dirs: Sequence[Path], out_path: Path, title: str | None = None) -> Path:
    """(Re)build report.html from one or more run bundles."""
    runs = []
    for d in run_dirs:
        b = load_run(d)
        runs.append({"summary": b.summary, "spec": b.spec, "manifest": b.manifest})
    default = "scoville report" if len(runs) == 1 else f"scoville comparison of {len(runs)} runs"
    out_path.write_text(render(runs, title or default), encoding="utf-8")
    return out_path


def export_rows(run_dir: Path, fmt: str) -> str:
    """`inferencex` (JSON rows, seconds) or `csv` of a run's points."""
    import json

    from scoville.analysis.importers import rows_to_inferencex
    from scoville.bundle.export import to_csv

    bundle = load_run(run_dir)
    if fmt == "csv":
        return to_csv(bundle.summary["points"])
    return json.dumps(rows_to_inferencex(bundle.summary["points"]), indent=2)


__all__ = ["Measured", "RunResult", "export_rows", "finish_run", "run_benchmark", "write_report"]
