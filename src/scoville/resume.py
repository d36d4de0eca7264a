"""Bundles a run left behind: `resume_run` continues a stopped sweep from its first incomplete
point (same spec, same prompt salt, same template overhead, so the same prompts), and
`summarize_stopped` summarises whatever a stopped or killed run left on disk.

A point is complete when records.jsonl holds its window and the window is not partial. On
resume the records of incomplete points are set aside (`records.before-resume-N.jsonl`, never
deleted) and the new ones appended after the complete points' lines.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scoville.bundle.files import read_json
from scoville.bundle.lifecycle import MANIFEST_FILE, Lifecycle
from scoville.bundle.quality import QUALITY_FILE
from scoville.bundle.summary import SUMMARY_FILE
from scoville.client.scale.dispatch import parse_workers
from scoville.errors import DataError, UserError
from scoville.pipeline import (
    Measured,
    RunResult,
    drive_sync,
    read_back,
    summarize_run,
)
from scoville.qualify import quality_step
from scoville.records.model import Mode, PointWindow, RequestRecord
from scoville.records.sink import RecordSink, scan_records
from scoville.spec.load import validate_as
from scoville.spec.model import BenchmarkSpec
from scoville.sweep import DriveArgs, OnProgress, Sweep
from scoville.targets.base import RunSource
from scoville.targets.registry import open_target

RECORDS_FILE = "records.jsonl"


def stored_spec(run_dir: Path) -> BenchmarkSpec:
    """The run's frozen spec, checked against the hash it was stored with."""
    if not (run_dir / "spec.json").is_file():
        raise DataError(
            f"{run_dir} holds no spec.json: it is not a directory written by `scoville run`."
        )
    doc = read_json(run_dir / "spec.json")
    if not isinstance(doc, dict) or not isinstance(doc.get("spec"), dict):
        raise DataError(f"{run_dir / 'spec.json'}: 'spec' must be an object.")
    spec = validate_as(BenchmarkSpec, doc["spec"], str(run_dir / "spec.json"))
    if spec.content_hash() != doc.get("content_hash"):
        raise DataError(
            f"{run_dir / 'spec.json'}: the spec hashes to {spec.content_hash()}, not the "
            f"stored {doc.get('content_hash')!r} (edited, or written by another version); "
            "start a new run instead."
        )
    return spec


def _manifest(run_dir: Path) -> dict[str, Any]:
    path = run_dir / MANIFEST_FILE
    doc = read_json(path) if path.is_file() else {}
    return doc if isinstance(doc, dict) else {}


def _refuse_if_running(run_dir: Path, manifest: dict[str, Any]) -> None:
    """A run whose manifest says "running" and whose process is alive is not resumed."""
    pid = manifest.get("pid")
    if manifest.get("status") != "running" or not isinstance(pid, int) or pid == os.getpid():
        return
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return  # killed: resume it
    except PermissionError:
        pass  # alive, someone else's
    raise UserError(
        f"{run_dir} is still being measured by process {pid} (its manifest says running). "
        "Stop it first (Ctrl-C, or kill it); then `scoville resume` continues it."
    )


def complete_points(run_dir: Path) -> set[str]:
    """Points whose window is on disk and not partial."""
    path = run_dir / RECORDS_FILE
    if not path.is_file():
        return set()
    return {w.point_id for w in scan_records(path).windows if not w.partial}


def _set_aside(run_dir: Path, keep: set[str]) -> str | None:
    """Move records.jsonl aside and write back only the lines of the `keep` points."""
    path = run_dir / RECORDS_FILE
    if not path.is_file():
        return None
    n = 1
    while (aside := run_dir / f"records.before-resume-{n}.jsonl").exists():
        n += 1
    path.rename(aside)
    read = scan_records(aside)
    with RecordSink(path) as sink:
        for r in read.records:
            if r.point_id in keep:
                sink.write(r)
        for w in read.windows:
            if w.point_id in keep and not w.partial:
                sink.write_window(w)
    return aside.name


def resume_run(
    run_dir: Path, on_progress: OnProgress | None = None, workers: str | None = None
) -> RunResult:
    """Continue the sweep of `run_dir` from its first incomplete point (see the module)."""
    spec = stored_spec(run_dir)
    manifest = _manifest(run_dir)
    salt = manifest.get("prompt_salt")
    if not isinstance(salt, str):
        raise DataError(
            f"{run_dir / MANIFEST_FILE} holds no prompt salt (written by an older scoville, "
            "or not a run directory): the prompts cannot be made again; start a new run."
        )
    _refuse_if_running(run_dir, manifest)
    done = complete_points(run_dir)
    overhead = manifest.get("template_overhead_tokens")
    sweep = Sweep(salt, overhead if isinstance(overhead, int) else None, frozenset(done))
    workers = workers or str(manifest.get("client_workers") or "1")
    workers_spec = parse_workers(workers)
    # A quality pass the run owes and has not written yet runs after the resumed sweep.
    quality = None if (run_dir / QUALITY_FILE).exists() else quality_step(spec)
    target = open_target(spec)
    aside = _set_aside(run_dir, done)
    with contextlib.suppress(FileNotFoundError):
        (run_dir / SUMMARY_FILE).unlink()  # rewritten below; a stale one must not survive
    life = Lifecycle(run_dir, target.manifest(), {"client_workers": workers})
    life.start(salt, resumed_from=sorted(done), records_set_aside=aside)
    notes = [f"resumed: {len(done)} complete point(s) kept: {', '.join(sorted(done)) or 'none'}"]
    if aside:
        notes.append(f"records before the resume are kept in {aside}")
    sink = RecordSink(run_dir / RECORDS_FILE)
    after = quality.after_sweep if quality is not None else None
    args = DriveArgs(on_progress, notes, workers_spec, run_dir / "workers", sweep, None, after)
    driven = drive_sync(target, spec, sink, life, args)
    records, windows, torn = read_back(sink, run_dir)
    notes.extend(torn)
    doc = quality.doc if quality is not None else None
    measured = Measured(records, windows, driven.telemetry, driven.workers, doc)
    result = summarize_run(run_dir, spec, measured, target.source(windows), notes)
    result.stopped = driven.stopped
    return result


def summarize_stopped(run_dir: Path) -> RunResult:
    """Summarise a run that stopped before writing its summary (killed, disk full): the
    records on disk up to the last complete line, the target's facts from the manifest
    written at the start. The partial point is kept, marked partial."""
    spec = stored_spec(run_dir)
    manifest = _manifest(run_dir)
    path = run_dir / RECORDS_FILE
    if not path.is_file():
        raise DataError(f"{run_dir} holds no records.jsonl: nothing was measured.")
    read = scan_records(path)
    windows = list(read.windows)
    seen = {w.point_id for w in windows}
    windows += _unclosed_windows(spec, read.records, seen)
    found = manifest.get("target")
    target: dict[str, Any] = found if isinstance(found, dict) else {}
    source = RunSource(
        model=str(target.get("model", "unknown")),
        manifest=target,
        labels=dict(target.get("label_defaults") or {}),
    )
    notes = [
        f"summarised from records on disk; the run's status was "
        f"{manifest.get('status', 'unknown')!r}",
        *read.notes(),
    ]
    return summarize_run(run_dir, spec, Measured(list(read.records), windows), source, notes)


def _unclosed_windows(
    spec: BenchmarkSpec, records: Sequence[RequestRecord], closed: set[str]
) -> list[PointWindow]:
    """Partial windows for points with measured records on disk but no window (the process
    was killed mid-point): from the first measured send to the last measured end."""
    levels: dict[str, tuple[Mode, float]] = {
        f"c{c}": ("concurrency", c) for c in spec.load.concurrency
    }
    levels |= {f"r{r:g}": ("rate", r) for r in spec.load.request_rates_per_s}
    out = []
    for pid, (mode, level) in levels.items():
        rs = [r for r in records if r.point_id == pid and r.phase == "measure"]
        if pid in closed or not rs:
            continue
        start_ns = min(r.start_ns for r in rs)
        end_ns = max(r.end_ns for r in rs)
        note = f"partial: the process ended after {len(rs)} measured records"
        out.append(
            PointWindow(pid, start_ns, end_ns, mode, level, len(rs), notes=(note,), partial=True)
        )
    return out
