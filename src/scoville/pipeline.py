"""The one place that wires the stages, top to bottom:

spec -> target -> workload (exact prompts) -> driver (records on disk as they complete)
     -> metrics (summary rows) -> store (bundle) -> report (report.html).
"""

from __future__ import annotations

import asyncio
import random
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scoville.client.driver import PointPlan, run_point
from scoville.client.plan import build_plans, to_request
from scoville.client.seam import real_loop_factory
from scoville.errors import TargetError
from scoville.metrics.compute import Declared, summarize
from scoville.quality.gate import refuse_unmeasured_quality
from scoville.records.model import PointWindow, RequestRecord
from scoville.records.sink import RecordSink, read_records
from scoville.report.html import render
from scoville.spec.model import AcceleratorSpec, BenchmarkSpec
from scoville.store.bundle import (
    load_run,
    new_run_dir,
    write_json,
    write_manifest,
    write_spec,
    write_summary,
)
from scoville.targets.base import Target
from scoville.targets.registry import open_target
from scoville.telemetry.annotate import annotate_rows, timeline
from scoville.telemetry.calibrate import Envelope, load_envelope
from scoville.telemetry.scaleout import WorkersSpec, parse_workers, run_point_scaled
from scoville.telemetry.session import TelemetryResult, TelemetrySession
from scoville.telemetry.workers import WorkerResult, WorkerTarget
from scoville.workload.fixed import Prompt, exact_prompt

OnProgress = Callable[[str, int, int], None]  # (point_id, done, total)


@dataclass
class RunResult:
    run_dir: Path
    summary: dict[str, Any]


def labels_of(
    spec: BenchmarkSpec, model: str, defaults: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The labels that group points into configurations. `defaults` (facts a target knows,
    e.g. the embedded model's quantisation) fill labels the spec leaves "unknown"."""
    labels = {
        "system": spec.accelerators.kind,
        "model": spec.model_name or model,
        "precision": spec.precision,
        "framework": spec.serving.framework,
        "spec_decode": spec.serving.speculative_decoding,
        "disagg": spec.serving.disaggregated,
    }
    for key, value in (defaults or {}).items():
        if labels.get(key) in ("unknown", None):
            labels[key] = value
    return labels


def with_target_accelerators(
    spec: BenchmarkSpec, target_info: dict[str, Any], notes: list[str]
) -> BenchmarkSpec:
    """A spec whose accelerators are left at the default takes the target's own (the twin
    knows it serves with TP=8 on H200s); a spec that declares them keeps its declaration."""
    acc = target_info.get("accelerator_defaults")
    if not acc or spec.accelerators != AcceleratorSpec():
        return spec
    update = {k: v for k, v in acc.items() if v is not None}
    notes.append(f"accelerators from the target: {update}")
    return spec.model_copy(update={"accelerators": spec.accelerators.model_copy(update=update)})


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
    total, done = len(plan.warmup) + len(plan.measured), 0

    def tick(_r: RequestRecord) -> None:
        nonlocal done
        done += 1
        if on_progress:
            on_progress(plan.point_id, done, total)

    return tick


def _worker_target(target: Target, spec: BenchmarkSpec) -> WorkerTarget:
    base_url = getattr(target.server, "base_url", None)
    if base_url is None:
        raise TargetError(
            f"--workers needs an HTTP target; a {target.kind} target runs in "
            "this process only. Drop --workers."
        )
    return WorkerTarget(
        base_url, target.model, spec.target.api_key_env, spec.target.request_timeout_s
    )


async def _run_scaled(
    target: Target,
    spec: BenchmarkSpec,
    plan: PointPlan,
    sink: RecordSink,
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
    sink: RecordSink,
    on_progress: OnProgress | None,
    notes: list[str],
    workers: WorkersSpec | None = None,
    work_dir: Path | None = None,
) -> Driven:
    """Probe, build every point's prompts, then run the points one after another, with
    telemetry (power, server metrics, client integrity) recorded around the sweep."""
    workers = workers or WorkersSpec("inline")
    driven = Driven()
    try:
        overhead, note = await template_overhead(target, spec)
        notes.append(note)
        if target.tokenizer is None:
            raise TargetError("The target has no tokenizer; exact-length prompts need one.")
        salt = secrets.token_hex(8)  # fresh prompt text per run: no cache hits across runs
        notes.append(f"prompt-text salt {salt} (lengths follow the seed; text is fresh per run)")
        plans: Sequence[PointPlan] = build_plans(
            spec, target.tokenizer if target.wants_text else None, overhead, salt
        )
        session = None
        if target.kind != "twin":
            session = TelemetrySession.auto(
                metrics_url=target.metrics_url,
                clock=target.clock,
                declared_power_w=spec.accelerators.power_w_per_accelerator,
                n_accelerators=spec.accelerators.count,
            )
            await session.start()
        try:
            for plan in plans:
                if workers.kind == "inline":
                    driven.windows.append(
                        await run_point(
                            target.server,
                            target.clock,
                            plan,
                            sink,
                            target.tokenizer,
                            _ticker(plan, on_progress),
                        )
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
) -> RunResult:
    """Measure `spec` and write its bundle; records reach disk even if the run is stopped.

    `workers` spreads each point over client processes: "4" (local), "ray", "ray:8",
    "ray://head:10001?workers=16"; None or "1" keeps the client in this process.
    `envelope` is a `scoville calibrate` result: points beyond it are flagged."""
    refuse_unmeasured_quality(spec)  # a quality target the run does not check is refused
    workers_spec = parse_workers(workers)
    env = load_envelope(envelope) if envelope is not None else None  # fail before measuring
    target = open_target(spec)
    run_dir = new_run_dir(out_dir, spec)
    write_spec(run_dir, spec)
    started = datetime.now(UTC).isoformat()
    notes: list[str] = [f"tokenizer: {target.tokenizer.name if target.tokenizer else 'none'}"]
    sink = RecordSink(run_dir / "records.jsonl")
    interrupted = False
    driven = Driven()
    try:
        with asyncio.Runner(loop_factory=target.loop_factory or real_loop_factory()) as runner:
            driven = runner.run(
                drive(target, spec, sink, on_progress, notes, workers_spec, run_dir / "workers")
            )
    except KeyboardInterrupt:
        interrupted = True
        notes.append("interrupted: only completed points are summarised")
    finally:
        sink.close()
        write_manifest(
            run_dir,
            {"kind": target.kind, "model": target.model, **target.info},
            started,
            {"client_workers": workers or "1"},
        )
    records, windows = read_records(run_dir / "records.jsonl")
    defaults = target.info.get("label_defaults")
    if defaults:
        notes.append(f"labels from the target: {defaults}")
    spec = with_target_accelerators(spec, target.info, notes)
    extra = target.point_extras(windows) if target.point_extras else None
    if env is not None:
        notes.append(f"client envelope from {envelope}")
    result = summarize_run(
        run_dir,
        spec,
        records,
        windows,
        target.model,
        notes,
        extra,
        telemetry=driven.telemetry,
        workers=driven.workers,
        label_defaults=defaults,
        envelope=env,
    )
    if interrupted:
        raise KeyboardInterrupt(str(run_dir))
    return result


def summarize_run(
    run_dir: Path,
    spec: BenchmarkSpec,
    records: Sequence[RequestRecord],
    windows: Sequence[PointWindow],
    model: str,
    notes: list[str],
    extra: dict[str, Any] | None = None,
    telemetry: TelemetryResult | None = None,
    workers: dict[str, list[WorkerResult]] | None = None,
    label_defaults: dict[str, Any] | None = None,
    envelope: Envelope | None = None,
) -> RunResult:
    """Metrics (+ telemetry columns) -> summary.json, telemetry.json -> report.html."""
    labels = labels_of(spec, model, label_defaults)
    shape = {
        "isl": spec.shape.isl_tokens,
        "osl": spec.shape.osl_tokens,
        "range_ratio": spec.shape.range_ratio,
    }
    rows = summarize(records, windows, declared_of(spec), {**labels, **shape})
    if extra:
        for row in rows:
            row.update(extra.get(row["point_id"], {}))
    if telemetry is not None:
        write_json(run_dir / "telemetry.json", telemetry.to_json_dict())
        rows = annotate_rows(
            rows,
            telemetry,
            windows,
            records,
            spec.accelerators.count,
            workers=workers or None,
            envelope=envelope,
        )
    sections = {}
    if telemetry is not None and telemetry.server is not None:
        sections["server_timeline"] = timeline(telemetry.server, records)
    summary = write_summary(run_dir, spec, rows, labels, notes, sections)
    write_report([run_dir], run_dir / "report.html")
    return RunResult(run_dir, summary)


def finish_run(
    spec: BenchmarkSpec,
    records: Sequence[RequestRecord],
    windows: Sequence[PointWindow],
    out_dir: Path,
    target_info: dict[str, Any],
    notes: Sequence[str] = (),
    extra: dict[str, Any] | None = None,
    telemetry: TelemetryResult | None = None,
) -> RunResult:
    """Write a bundle for records made elsewhere (the twin's fast path, agentic replay).

    `extra` maps point_id -> fields added to that point's summary row; `telemetry` adds
    telemetry.json, the telemetry columns and the server timeline."""
    run_dir = new_run_dir(out_dir, spec)
    write_spec(run_dir, spec)
    started = datetime.now(UTC).isoformat()
    with RecordSink(run_dir / "records.jsonl") as sink:
        for r in records:
            sink.write(r)
        for w in windows:
            sink.write_window(w)
    write_manifest(run_dir, target_info, started)
    model = str(target_info.get("model", spec.target.model or "unknown"))
    notes = list(notes)
    spec = with_target_accelerators(spec, target_info, notes)
    return summarize_run(
        run_dir,
        spec,
        records,
        windows,
        model,
        notes,
        extra,
        telemetry=telemetry,
        label_defaults=target_info.get("label_defaults"),
    )


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
    from scoville.store.export import to_csv

    bundle = load_run(run_dir)
    if fmt == "csv":
        return to_csv(bundle.summary["points"])
    return json.dumps(rows_to_inferencex(bundle.summary["points"]), indent=2)


__all__ = ["RunResult", "export_rows", "finish_run", "run_benchmark", "write_json", "write_report"]
