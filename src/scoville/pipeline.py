"""The one place that wires the stages, top to bottom:

spec -> target -> workload (exact prompts) -> driver (records on disk as they complete)
     -> metrics (summary rows) -> bundle (run directory) -> report (report.html).
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scoville.analysis.boundaries import with_boundary_columns
from scoville.bundle.files import finite, new_run_dir, write_json, write_manifest, write_spec
from scoville.bundle.lifecycle import Lifecycle
from scoville.bundle.quality import read_quality, write_quality
from scoville.bundle.run import load_run
from scoville.bundle.summary import SummaryDoc, summary_doc, write_summary
from scoville.client.scale.dispatch import parse_workers
from scoville.client.scale.workers import WorkerResult
from scoville.client.seam import real_loop_factory
from scoville.client.selftest.calibrate import Envelope, load_envelope
from scoville.errors import StorageError, UserError
from scoville.metrics.compute import Declared, summarize
from scoville.metrics.row import SummaryRow
from scoville.metrics.samples import margin_note
from scoville.qualify import quality_step
from scoville.quality.inrun import columns as quality_columns
from scoville.records.model import PointWindow, RequestRecord
from scoville.records.sink import MemorySink, RecordSink, scan_records
from scoville.report.export import ChartFormat, export_charts
from scoville.report.html import render, report_runs
from scoville.spec.model import AcceleratorSpec, BenchmarkSpec
from scoville.sweep import (
    DriveArgs,
    Driven,
    OnPointEnd,
    OnProgress,
    OnStage,
    Sweep,
    check_stopping,
    drive,
)
from scoville.targets.base import RunSource, Target
from scoville.targets.registry import open_target
from scoville.telemetry.annotate import telemetry_columns, timeline
from scoville.telemetry.session import TelemetryResult


@dataclass
class RunResult:
    run_dir: Path
    summary: SummaryDoc
    stopped: str | None = None  # the signal that stopped the sweep, e.g. "SIGINT"


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
        validity=spec.validity,
        stopping=spec.load if spec.load.target_margin is not None else None,
    )


def run_benchmark(
    spec: BenchmarkSpec,
    out_dir: Path,
    on_progress: OnProgress | None = None,
    workers: str | None = None,
    envelope: Path | None = None,
    keep_records: bool = True,
    on_stage: OnStage | None = None,
    on_point_end: OnPointEnd | None = None,
) -> RunResult:
    """Measure `spec` and write its bundle; records reach disk as they complete.
    `keep_records=False` keeps them in memory only (no records.jsonl; the summary and
    report never need it).

    `workers` spreads each point over client processes: "4" (local), "ray", "ray:8",
    "ray://head:10001?workers=16"; None or "1" keeps the client in this process.
    `envelope` is a `scoville calibrate` result: points beyond it are flagged. `on_stage`
    hears one line per stage (target start, probe, prompts); `on_progress` each request;
    `on_point_end` a point that stopped before its plan (its target margin reached).

    The manifest is written before the first request (status "running", the prompt salt)
    and again at the end. A SIGINT/SIGTERM stops the sweep and what completed is summarised
    (`RunResult.stopped`); a probe that fails leaves no run directory behind."""
    # A quality pass that cannot work (the twin, no bar, a bad data file) is refused here.
    quality = quality_step(spec, on_stage)
    workers_spec = parse_workers(workers)
    check_stopping(spec, workers_spec)  # a margin no point could reach is refused up front
    env = load_envelope(envelope) if envelope is not None else None  # fail before measuring
    if on_stage is not None:
        on_stage(f"starting target {spec.target.url}")
    target = open_target(spec)
    run_dir = new_run_dir(out_dir, spec)
    sweep = Sweep(secrets.token_hex(8))
    life = Lifecycle(run_dir, target.manifest(), {"client_workers": workers or "1"})
    write_spec(run_dir, spec)
    life.start(sweep.salt)
    notes: list[str] = [f"tokenizer: {target.tokenizer.name if target.tokenizer else 'none'}"]
    sink: RecordSink | MemorySink = (
        RecordSink(run_dir / "records.jsonl") if keep_records else MemorySink()
    )
    args = DriveArgs(on_progress, notes, workers_spec, run_dir / "workers", sweep, on_stage)
    args = replace(args, on_point_end=on_point_end)
    if quality is not None:
        args = replace(args, after_sweep=quality.after_sweep)
    driven = drive_sync(target, spec, sink, life, args)
    records, windows, torn = read_back(sink, run_dir)
    notes.extend(torn)
    if env is not None:
        notes.append(f"client envelope from {envelope}")
    q_doc = quality.doc if quality is not None else None
    measured = Measured(records, windows, driven.telemetry, driven.workers, q_doc)
    result = summarize_run(run_dir, spec, measured, target.source(windows), notes, env)
    result.stopped = driven.stopped
    return result


def drive_sync(
    target: Target,
    spec: BenchmarkSpec,
    sink: RecordSink | MemorySink,
    life: Lifecycle,
    args: DriveArgs,
) -> Driven:
    """`drive` in its event loop, with the run's lifecycle around it: a failed probe removes
    the run directory; a stop or a full disk is written to the manifest."""
    try:
        with asyncio.Runner(loop_factory=target.loop_factory or real_loop_factory()) as runner:
            driven = runner.run(drive(target, spec, sink, args))
    except UserError:  # the probe failed, the shape does not fit: nothing was measured
        sink.close()
        life.abandon(sink.count)
        raise
    except StorageError as exc:
        sink.close()
        raise life.storage_error(exc) from None
    except KeyboardInterrupt:  # a second signal forced the stop
        sink.close()
        life.end("stopped (forced by a second signal)")
        raise
    sink.close()
    status = "complete" if driven.stopped is None else f"stopped by {driven.stopped}"
    life.end(status, template_overhead_tokens=driven.overhead_tokens)
    if driven.stopped:
        args.notes.append(
            f"stopped by {driven.stopped}: in-flight requests were recorded as cancelled; "
            "the last point is partial (never valid); `scoville resume` continues the sweep"
        )
    return driven


def read_back(
    sink: RecordSink | MemorySink, run_dir: Path
) -> tuple[list[RequestRecord], list[PointWindow], list[str]]:
    """The run's records and windows (from memory, or from records.jsonl, with a note when
    its last line is torn)."""
    if isinstance(sink, MemorySink):
        return sink.records, sink.windows, []
    read = scan_records(run_dir / "records.jsonl")
    return list(read.records), list(read.windows), read.notes()


@dataclass(frozen=True, slots=True)
class Measured:
    """What a sweep produced: its records and point windows, the telemetry recorded around
    it, and each point's client-worker results (when it was spread over processes)."""

    records: Sequence[RequestRecord]
    windows: Sequence[PointWindow]
    telemetry: TelemetryResult | None = None
    workers: Mapping[str, list[WorkerResult]] = field(default_factory=dict)
    quality: dict[str, Any] | None = None  # the quality pass's document (quality.json)


def summarize_run(
    run_dir: Path,
    spec: BenchmarkSpec,
    measured: Measured,
    source: RunSource,
    notes: list[str],
    envelope: Envelope | None = None,
) -> RunResult:
    """Metrics (+ telemetry columns) -> summary.json, telemetry.json -> report.html, and the
    results store when one is configured."""
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
    rows = with_quality(run_dir, spec, rows, measured.quality, notes)
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
    rows = with_boundary_columns(rows, spec.power_profile, notes)  # per kW at each boundary
    margin = margin_note([row.to_dict() for row in rows], spec.load)
    notes.extend([margin] if margin else [])
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
    from scoville.store.results import add_if_configured  # duckdb/pyarrow only when needed

    add_if_configured(run_dir)  # into $SCOVILLE_STORE / the configured store, if any
    return RunResult(run_dir, summary)


# Columns a later stage adds that can distrust a point: (verdict column, its one-line reason,
# the tag its line in `invalid_reasons` starts with).
_VERDICTS = (
    ("valid_client", "client_reason", "client"),
    ("agentic_valid", "agentic_reason", "agentic"),
)


def _with_verdicts(row: SummaryRow, columns: Mapping[str, Any]) -> SummaryRow:
    """The row with a later stage's columns; a point the client (telemetry) or the agentic
    rules distrust is not valid, and a tagged line of its `invalid_reasons` says why."""
    row = row.with_columns(columns)
    for verdict, reason, tag in _VERDICTS:
        if columns.get(verdict) is False:
            why = str(columns.get(reason) or verdict.replace("_", " "))
            row = row.distrusted(f"{tag}: {why}")
    return row


def with_quality(
    run_dir: Path,
    spec: BenchmarkSpec,
    rows: list[SummaryRow],
    doc: dict[str, Any] | None,
    notes: list[str],
) -> list[SummaryRow]:
    """quality.json (this pass's, or one the bundle already holds) and its status on every
    row; a run whose spec asked for a pass it did not complete is 'not measured', said so."""
    doc = doc if doc is not None else read_quality(run_dir)
    if doc is None:
        if spec.quality.task is not None:
            notes.append("quality: not measured (the sweep stopped before the quality pass)")
        return rows
    write_quality(run_dir, doc)
    rate = doc.get("pass_rate") or {}
    shown = f"{rate['estimate']:.3f} [{rate['lo']:.3f}, {rate['hi']:.3f}]" if rate else "-"
    notes.append(f"quality: {doc['status']} ({doc['reason']}); pass rate {shown}, 95 % Wilson")
    return [row.with_quality(quality_columns(doc)) for row in rows]


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


def write_report(
    run_dirs: Sequence[Path], out_path: Path, title: str | None = None, tco: Path | None = None
) -> Path:
    """(Re)build report.html from one or more run bundles; with a TCO file (`analysis.tco`)
    it gains an economics section."""
    from scoville.analysis.tco import load_tco
    from scoville.report.economics import report_sections

    tco_file = load_tco(tco) if tco is not None else None  # a bad file fails before rendering
    runs = report_runs([load_run(d) for d in run_dirs])
    default = "scoville report" if len(runs) == 1 else f"scoville comparison of {len(runs)} runs"
    sections = report_sections(runs, tco_file, str(tco or ""))
    out_path.write_text(render(runs, title or default, sections), encoding="utf-8")
    return out_path


def write_charts(run_dirs: Sequence[Path], fmt: ChartFormat, out_dir: Path) -> list[Path]:
    """Each chart of the report of these runs as a PNG or SVG file in `out_dir`."""
    return export_charts(report_runs([load_run(d) for d in run_dirs]), fmt, out_dir)


def export_rows(run_dir: Path, fmt: str) -> str:
    """`inferencex` (JSON rows, seconds), `aiperf` (one profile export per point) or `csv`."""
    import json

    from scoville.analysis.importers import rows_to_inferencex
    from scoville.bundle.export import to_csv

    bundle = load_run(run_dir)
    if fmt == "csv":
        return to_csv(bundle.summary["points"])
    if fmt == "aiperf":
        from scoville.analysis.aiperf_export import rows_to_aiperf

        return json.dumps(finite(rows_to_aiperf(bundle.summary["points"])), indent=2)
    return json.dumps(finite(rows_to_inferencex(bundle.summary["points"])), indent=2)


__all__ = ["Measured", "RunResult", "export_rows", "finish_run", "run_benchmark", "write_report"]
