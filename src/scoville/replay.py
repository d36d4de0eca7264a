"""Agentic replay, wired end to end: agentic spec -> sessions -> target -> lane driver
(records) -> agentic metrics -> the usual run bundle (`scoville.pipeline.finish_run`).

The agentic counterpart of `scoville.pipeline`: one point per lane count, each with its own
cache-bust nonce, server metrics scraped around the whole replay.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from scoville.analysis.e2e_gate import e2e_gate_marks
from scoville.client.lane_driver import LaneDriver
from scoville.client.lanes import LaneConfig, LanesExecutor
from scoville.client.seam import real_loop_factory
from scoville.client.stop import StopOnSignal
from scoville.errors import SpecError, TokenizerError
from scoville.metrics.agentic import AGENTIC_ONLY, agentic_point
from scoville.pipeline import Measured, finish_run
from scoville.records.model import PointWindow, RequestRecord
from scoville.records.sink import MemorySink
from scoville.spec.agentic import AgenticSpec
from scoville.spec.defaults import AGENTIC_WINDOW_TOKENS, target_kind
from scoville.spec.flags import apply_values
from scoville.spec.load import read_mapping, validate_as
from scoville.spec.model import BenchmarkSpec, LoadSpec, SequenceShape
from scoville.targets.base import Target
from scoville.targets.registry import context_window_tokens, open_target
from scoville.telemetry.session import TelemetryResult, TelemetrySession
from scoville.workload.agentic.build import AgenticWorkload, build_workload, detect_source
from scoville.workload.agentic.prompts import PromptBook, WordVocab
from scoville.workload.tokenizers import local_tokenizer


@dataclass
class ReplayOutcome:
    rows: list[dict[str, Any]]
    notes: list[str]
    run_dir: Path | None = None
    records: list[RequestRecord] = field(default_factory=list)
    windows: list[PointWindow] = field(default_factory=list)
    stopped: str | None = None  # the signal that stopped the replay, e.g. "SIGINT"


def build_spec(trace: str | None, spec_file: Path | None, values: Mapping[str, Any]) -> AgenticSpec:
    """An `AgenticSpec` from a spec file (YAML/TOML/JSON) and/or the command line's typed
    `values` (dotted field path -> value; the command line wins); errors name every field."""
    data = read_mapping(spec_file) if spec_file else {}
    if trace is not None:
        src = detect_source(trace).model_dump(mode="json")
        data["source"] = {**data.get("source", {}), **src}
    data = apply_values(data, values)
    return validate_as(AgenticSpec, data, str(spec_file) if spec_file else "the command line")


def benchmark_spec_for(spec: AgenticSpec, wl: AgenticWorkload) -> BenchmarkSpec:
    """The `BenchmarkSpec` the target opener and the bundle need: same target, labels and
    accelerators; shape = the largest request; concurrency = the lane counts."""
    isl = max(t.input_tokens for s in wl.sessions for _, _, t in s.turns())
    osl = max(t.output_tokens for s in wl.sessions for _, _, t in s.turns())
    return BenchmarkSpec(
        name=spec.name,
        target=spec.target,
        model_name=spec.model_name,
        precision=spec.precision,
        shape=SequenceShape(isl_tokens=isl, osl_tokens=osl),
        load=LoadSpec(concurrency=spec.lanes),
        slo=spec.slo,
        accelerators=spec.accelerators,
        serving=spec.serving,
        seed=spec.seed,
    )


def lane_config(spec: AgenticSpec, k: int, lanes: int, nonce: int) -> LaneConfig:
    """The driver settings of point `k` (its own marker nonce, so points never share cache)."""
    timestamps = spec.schedule == "timestamps"
    return LaneConfig(
        lanes=lanes,
        window_s=spec.window_s,
        point_id="ts" if timestamps else "",
        api=spec.target.api,
        start_min_ratio=spec.warmup.start_min_ratio,
        start_max_ratio=spec.warmup.start_max_ratio,
        primers=spec.warmup.primers,
        cache_bust=spec.cache_bust and not timestamps,
        live=spec.assistant_turns == "live",
        seed=spec.seed,
        run_nonce=(nonce + k) % 2**32,
        ignore_eos=spec.target.ignore_eos,
        validity=spec.validity,
        warmup_per_lane=spec.warmup.requests_per_lane,
    )


def lanes_executor(spec: AgenticSpec, target: Target) -> LanesExecutor | None:
    """The target's own lanes executor (the twin's event engine) where it can run the spec:
    recorded assistant turns (it builds no text); None = the lane driver."""
    if spec.assistant_turns == "live":
        return None
    return target.lanes_executor


async def drive_points(
    spec: AgenticSpec, wl: AgenticWorkload, target: Target, nonce: int, stopped: list[str]
) -> tuple[list[RequestRecord], list[PointWindow], TelemetryResult | None]:
    """One lane-driver point per lane count, one after another, on the target's clock, with
    the server's Prometheus metrics scraped around them (when it has an endpoint). The first
    SIGINT/SIGTERM stops the replay: the signal's name goes to `stopped`, the points that
    finished are returned (the stopped point's records too, without a window)."""
    fast = lanes_executor(spec, target)
    tok = target.tokenizer or local_tokenizer(spec.target.tokenizer, target.model)
    if tok is None and fast is None:
        raise TokenizerError(
            "Agentic replay needs the target's tokenizer to make exact prompts; pass "
            "target.tokenizer (e.g. 'tiktoken:cl100k_base' or a tokenizer.json path)."
        )
    book = PromptBook(WordVocab.for_tokenizer(tok), wl.sessions) if tok and not fast else None
    sink = MemorySink()
    timestamps = spec.schedule == "timestamps"
    session = None
    if target.metrics_url is not None:
        session = TelemetrySession(
            metrics_url=target.metrics_url, clock=target.clock, monitor_client=False
        )
        await session.start()
    try:
        async with StopOnSignal() as stop:
            try:
                for k, lanes in enumerate((1,) if timestamps else spec.lanes):
                    cfg = lane_config(spec, k, lanes, nonce)
                    if fast is not None:
                        run = fast.run_timestamps if timestamps else fast.run_lanes
                        await run(wl.sessions, cfg, sink)
                        continue
                    assert book is not None
                    driver = LaneDriver(
                        wl.sessions, book, target.server, target.clock, sink, cfg, tok
                    )
                    await (driver.run_timestamps() if timestamps else driver.run())
            except asyncio.CancelledError:
                if not stop.absorb():
                    raise
            if stop.signal is not None:
                stopped.append(stop.signal.name)
        telemetry = await session.stop() if session is not None else None
    finally:
        await target.close()
    return sink.records, sink.windows, telemetry


def agentic_rows(
    spec: AgenticSpec,
    wl: AgenticWorkload,
    records: list[RequestRecord],
    windows: list[PointWindow],
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """Per-point agentic rows, and the fields each adds to the foundation's summary row."""
    slo = spec.slo.ttft_ms / 1e3 if spec.slo.ttft_ms else None
    trace = {
        "trace_hit_rate_tokens": wl.trace_hits.token_hit_rate,
        "trace_hit_rate_blocks": wl.trace_hits.block_hit_rate,
        "context_scale_factor": wl.scale_factor,
        "assistant_turns": spec.assistant_turns,
    }
    live = spec.validity.min_stream_liveness
    rows = [agentic_point(records, w, spec.accelerators.count, slo, live) | trace for w in windows]
    extra = {
        r["point_id"]: {k: r[k] for k in AGENTIC_ONLY}
        | trace
        | {"agentic_valid": r["valid"], "agentic_reason": "; ".join(r["invalid_reasons"]) or None}
        for r in rows
    }
    return rows, extra


def with_e2e_gate(rows: list[dict[str, Any]], points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Agentic rows with `on_e2e_frontier`: AgentX's rule, a point may appear on an agentic
    frontier only if it is on the E2E-normalised frontier of its run's summary rows."""
    marks = e2e_gate_marks(points, "output_tput_per_accelerator")
    keep = {str(p.get("point_id")) for p, ok in zip(points, marks, strict=True) if ok}
    return [r | {"on_e2e_frontier": str(r.get("point_id")) in keep} for r in rows]


def run_replay(
    spec: AgenticSpec,
    out_dir: Path,
    nonce: int | None = None,
    opener: Callable[[BenchmarkSpec], Target] | None = None,
) -> ReplayOutcome:
    """Build the workload, open the target (`opener`, default the target registry), run every
    point and write the bundle, with `agentic.json` beside it."""
    window = spec.context.target_window_tokens
    if window is None:
        window = AGENTIC_WINDOW_TOKENS[target_kind(spec.target.url)] or context_window_tokens(
            spec.target.url
        )
    wl = build_workload(spec, window)
    bspec = benchmark_spec_for(spec, wl)
    nonce = secrets.randbits(32) if nonce is None else nonce
    notes = [*wl.notes, f"agentic spec {spec.content_hash()}; marker nonce {nonce}"]
    stopped: list[str] = []
    target = (opener or open_target)(bspec)
    if lanes_executor(spec, target) is not None:
        notes.append("lanes simulated on the target's event engine (no HTTP, no prompt text)")
    with asyncio.Runner(loop_factory=target.loop_factory or real_loop_factory()) as runner:
        records, windows, telemetry = runner.run(drive_points(spec, wl, target, nonce, stopped))
    if stopped:
        notes.append(
            f"stopped by {stopped[0]}: the points that finished are summarised; the stopped "
            "point's records are in records.jsonl"
        )
    rows, extra = agentic_rows(spec, wl, records, windows)
    warm = Counter(r.point_id for r in records if r.phase == "warmup")
    source = target.source(windows, agentic=spec.to_dict(), warmup_requests=dict(warm))
    source = replace(source, extra={**source.extra, **extra})
    measured = Measured(records, windows, telemetry)
    result = finish_run(bspec, measured, out_dir, source, notes)
    run_dir = result.run_dir
    rows = with_e2e_gate(rows, result.summary["points"])
    (run_dir / "agentic.json").write_text(
        json.dumps({"spec": spec.to_dict(), "rows": rows, "notes": notes}, indent=1)
    )
    return ReplayOutcome(rows, notes, run_dir, records, windows, stopped[0] if stopped else None)


__all__ = ["ReplayOutcome", "SpecError", "build_spec", "run_replay"]
