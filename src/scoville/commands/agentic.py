"""`scoville replay`: agentic session replay (AgentX-style) against any target, one point per
lane count, written as the usual run bundle with agentic fields on every summary row.

Thin: parse, build the `AgenticSpec`, call `run_replay` (which wires workload -> target ->
lane driver -> metrics -> bundle), print a table. Heavy modules are imported inside functions.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from scoville.errors import SpecError, TokenizerError

if TYPE_CHECKING:
    from scoville.client.lanes import LaneConfig
    from scoville.records.model import PointWindow, RequestRecord
    from scoville.spec.agentic import AgenticSpec
    from scoville.spec.model import BenchmarkSpec
    from scoville.targets.base import Target
    from scoville.workload.agentic.build import AgenticWorkload

app = typer.Typer()

EMBEDDED_WINDOW_TOKENS = 2048  # context per slot the embedded SmolLM2 server is started with


@dataclass
class ReplayOutcome:
    rows: list[dict[str, Any]]
    notes: list[str]
    run_dir: Path | None = None
    records: list[RequestRecord] = field(default_factory=list)
    windows: list[PointWindow] = field(default_factory=list)


def read_spec_file(path: Path) -> dict[str, Any]:
    import yaml

    if not path.is_file():
        raise SpecError(f"Spec file {path} does not exist.")
    text = path.read_text(encoding="utf-8")
    data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    if not isinstance(data, dict):
        raise SpecError(f"Spec file {path} must hold a mapping of fields.")
    return data


def build_spec(trace: str | None, spec_file: Path | None, overrides: dict[str, Any]) -> AgenticSpec:
    """An `AgenticSpec` from a spec file and/or the command line (the command line wins)."""
    from pydantic import ValidationError

    from scoville.spec.agentic import AgenticSpec
    from scoville.workload.agentic.build import detect_source

    data = read_spec_file(spec_file) if spec_file else {}
    if trace is not None:
        src = detect_source(trace).model_dump(mode="json")
        data["source"] = {**data.get("source", {}), **src}
    for dotted, value in overrides.items():
        node = data
        *path, last = dotted.split(".")
        for key in path:
            node = node.setdefault(key, {})
        node[last] = value
    try:
        return AgenticSpec.model_validate(data)
    except ValidationError as exc:
        where = spec_file or "the command line"
        first = exc.errors()[0]
        loc = ".".join(str(x) for x in first["loc"])
        at = f"{loc}: " if loc else ""
        raise SpecError(f"Invalid agentic spec from {where}: {at}{first['msg']}.") from None


def benchmark_spec_for(spec: AgenticSpec, wl: AgenticWorkload) -> BenchmarkSpec:
    """The `BenchmarkSpec` the target opener and the bundle need: same target, labels and
    accelerators; shape = the largest request; concurrency = the lane counts."""
    from scoville.spec.model import BenchmarkSpec, LoadSpec, SequenceShape

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


async def start_server_scrape(target: Target) -> Any:
    """Scrape the server's Prometheus /metrics (prefix-cache hits and queries, KV usage,
    running/waiting) during the run, when the target has an endpoint and the telemetry
    package is in the build; else None."""
    if target.metrics_url is None or importlib.util.find_spec("scoville.telemetry.session") is None:
        return None
    from scoville.telemetry.session import (  # type: ignore[import-not-found, unused-ignore]
        TelemetrySession,
    )

    session = TelemetrySession(
        metrics_url=target.metrics_url, clock=target.clock, monitor_client=False
    )
    await session.start()
    return session


def lane_config(spec: AgenticSpec, k: int, lanes: int, nonce: int) -> LaneConfig:
    """The driver settings of point `k` (its own marker nonce, so points never share cache)."""
    from scoville.client.lanes import LaneConfig

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
    )


async def drive_points(
    spec: AgenticSpec, wl: AgenticWorkload, target: Target, nonce: int
) -> tuple[list[RequestRecord], list[PointWindow], Any]:
    """One lane-driver point per lane count, one after another, on the target's clock.
    Returns the records, the windows and the server-metrics telemetry (or None)."""
    from scoville.client.lanes import LaneDriver
    from scoville.records.sink import MemorySink
    from scoville.workload.agentic.prompts import PromptBook, WordVocab
    from scoville.workload.tokenizers import local_tokenizer

    tok = target.tokenizer or local_tokenizer(spec.target.tokenizer, target.model)
    if tok is None:
        raise TokenizerError(
            "Agentic replay needs the target's tokenizer to make exact prompts; pass "
            "target.tokenizer (e.g. 'tiktoken:cl100k_base' or a tokenizer.json path)."
        )
    book = PromptBook(WordVocab.for_tokenizer(tok), wl.sessions)
    sink = MemorySink()
    timestamps = spec.schedule == "timestamps"
    telemetry = None
    try:
        scrape = await start_server_scrape(target)
        for k, lanes in enumerate((1,) if timestamps else spec.lanes):
            cfg = lane_config(spec, k, lanes, nonce)
            driver = LaneDriver(wl.sessions, book, target.server, target.clock, sink, cfg, tok)
            await (driver.run_timestamps() if timestamps else driver.run())
        telemetry = await scrape.stop() if scrape is not None else None
    finally:
        await target.close()
    return sink.records, sink.windows, telemetry


def _open_target(bspec: BenchmarkSpec, opener: Callable[[BenchmarkSpec], Target] | None) -> Target:
    if opener is not None:
        return opener(bspec)
    from scoville.targets.registry import (  # type: ignore[import-not-found, unused-ignore]
        open_target,
    )

    target: Target = open_target(bspec)
    return target


def agentic_rows(
    spec: AgenticSpec,
    wl: AgenticWorkload,
    records: list[RequestRecord],
    windows: list[PointWindow],
    telemetry: Any,
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """Per-point agentic rows, and the fields each adds to the foundation's summary row."""
    from scoville.metrics.agentic import AGENTIC_ONLY, agentic_point

    slo = spec.slo.ttft_ms / 1e3 if spec.slo.ttft_ms else None
    trace = {
        "trace_hit_rate_tokens": wl.trace_hits.token_hit_rate,
        "trace_hit_rate_blocks": wl.trace_hits.block_hit_rate,
        "context_scale_factor": wl.scale_factor,
        "assistant_turns": spec.assistant_turns,
    }
    rows = [agentic_point(records, w, spec.accelerators.count, slo) | trace for w in windows]
    extra = {
        r["point_id"]: {k: r[k] for k in AGENTIC_ONLY} | trace | {"agentic_valid": r["valid"]}
        for r in rows
    }
    if telemetry is not None:  # server_* columns: the server's own cache and queue figures
        fields = telemetry.point_fields(windows, records, spec.accelerators.count)
        for pid, cols in fields.items():
            extra.setdefault(pid, {}).update(
                {k: v for k, v in cols.items() if k.startswith("server_")}
            )
    return rows, extra


def run_replay(
    spec: AgenticSpec,
    out_dir: Path,
    nonce: int | None = None,
    opener: Callable[[BenchmarkSpec], Target] | None = None,
) -> ReplayOutcome:
    """Build the workload, open the target (`opener`, default the target registry), run every
    point, write the bundle (`scoville.pipeline.finish_run`, else plain files)."""
    from scoville.client import seam
    from scoville.workload.agentic.build import build_workload

    window = spec.context.target_window_tokens
    if window is None and spec.target.url == "embedded":
        window = EMBEDDED_WINDOW_TOKENS
    wl = build_workload(spec, window)
    bspec = benchmark_spec_for(spec, wl)
    nonce = secrets.randbits(32) if nonce is None else nonce
    notes = [*wl.notes, f"agentic spec {spec.content_hash()}; marker nonce {nonce}"]
    target = _open_target(bspec, opener)
    info = {"kind": target.kind, "model": target.model, **target.info}
    # uvloop for real targets where the foundation offers it (stamps frames sooner)
    real_loop = getattr(seam, "real_loop_factory", lambda: None)
    with asyncio.Runner(loop_factory=target.loop_factory or real_loop()) as runner:
        records, windows, telemetry = runner.run(drive_points(spec, wl, target, nonce))
    rows, extra = agentic_rows(spec, wl, records, windows, telemetry)
    out = ReplayOutcome(rows, notes, None, records, windows)
    if importlib.util.find_spec("scoville.pipeline") is None:
        # the foundation's pipeline is not in this build: write the raw files
        out.run_dir = _write_plain(out_dir, spec, records, windows, rows, notes, info)
        return out
    from scoville.pipeline import finish_run  # type: ignore[import-not-found, unused-ignore]

    info["agentic"] = spec.to_dict()
    out.run_dir = finish_run(bspec, records, windows, out_dir, info, notes, extra).run_dir
    if telemetry is not None:
        (out.run_dir / "telemetry.json").write_text(json.dumps(telemetry.to_json_dict()))
    (out.run_dir / "agentic.json").write_text(
        json.dumps({"spec": spec.to_dict(), "rows": rows, "notes": notes}, indent=1)
    )
    return out


def _write_plain(
    out_dir: Path,
    spec: AgenticSpec,
    records: list[RequestRecord],
    windows: list[PointWindow],
    rows: list[dict[str, Any]],
    notes: list[str],
    info: dict[str, Any],
) -> Path:
    from scoville.records.sink import RecordSink

    run_dir = out_dir / f"{spec.name}-{spec.content_hash()}"
    with RecordSink(run_dir / "records.jsonl") as sink:
        for r in records:
            sink.write(r)
        for w in windows:
            sink.write_window(w)
    (run_dir / "agentic.json").write_text(
        json.dumps(
            {"spec": spec.to_dict(), "rows": rows, "notes": notes, "target": info},
            indent=1,
            default=str,
        )
    )
    return run_dir


def _fmt(v: Any, unit: str = "") -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.3g}{unit}"
    return f"{v}{unit}"


@app.command("replay")
def replay(
    trace: Annotated[
        str | None,
        typer.Argument(
            help=(
                "'synthetic', 'mooncake-conversation', 'mooncake-synthetic', a Mooncake "
                ".jsonl or an AgentX/WEKA .json/.jsonl/directory. Default: the spec's source."
            )
        ),
    ] = None,
    spec_file: Annotated[
        Path | None, typer.Option("--spec", help="Agentic spec (YAML/JSON).")
    ] = None,
    target: Annotated[
        str | None, typer.Option(help="embedded | http://HOST:PORT | twin:...")
    ] = None,
    lanes: Annotated[str | None, typer.Option(help="Lane counts, e.g. 1,2,4,8.")] = None,
    window_s: Annotated[float | None, typer.Option(help="Measured window per point (s).")] = None,
    scale: Annotated[float | None, typer.Option(help="Context scale factor in (0, 1].")] = None,
    window_tokens: Annotated[int | None, typer.Option(help="Target context window.")] = None,
    max_sessions: Annotated[int | None, typer.Option(help="Use the first N sessions.")] = None,
    max_request_tokens: Annotated[
        int | None, typer.Option(help="Drop sessions with a request over this many tokens.")
    ] = None,
    live: Annotated[bool, typer.Option(help="Thread live model output into prompts.")] = False,
    no_cache_bust: Annotated[bool, typer.Option(help="No per-play cache-bust marker.")] = False,
    seed: Annotated[int | None, typer.Option(help="Seed (generation, start points).")] = None,
    schedule: Annotated[
        str | None, typer.Option(help="'lanes' (closed loop) or 'timestamps' (recorded times).")
    ] = None,
    time_scale: Annotated[
        float | None, typer.Option(help="Multiply recorded gaps and timestamps by this.")
    ] = None,
    out: Annotated[Path, typer.Option(help="Directory for run bundles.")] = Path("runs"),
) -> None:
    """Replay agentic sessions in lanes and report what agents feel."""
    flags = {
        "schedule": schedule,
        "source.time_scale": time_scale,
        "target.url": target,
        "window_s": window_s,
        "seed": seed,
        "context.scale_factor": scale,
        "source.max_sessions": max_sessions,
        "context.max_request_tokens": max_request_tokens,
        "context.target_window_tokens": window_tokens,
        "assistant_turns": "live" if live else None,
        "cache_bust": False if no_cache_bust else None,
    }
    ov: dict[str, Any] = {k: v for k, v in flags.items() if v is not None}
    if lanes:
        try:
            ov["lanes"] = [int(x) for x in lanes.split(",") if x.strip()]
        except ValueError:
            raise SpecError(f"--lanes takes integers separated by commas, got '{lanes}'.") from None
    spec = build_spec(trace, spec_file, ov)
    print_outcome(spec, run_replay(spec, out))


COLUMNS = (  # (header, row field, unit)
    ("lanes", "lanes", ""),
    ("req/s", "req_per_s", ""),
    ("out tok/s/acc", "output_tput_per_accelerator", ""),
    ("intvty p90-ITL", "intvty_agentx", ""),
    ("TTFT hit", "median_ttft_hit", " s"),
    ("TTFT miss", "median_ttft_miss", " s"),
    ("cache meas.", "cache_hit_rate_measured", ""),
    ("cache theo.", "cache_hit_rate_theoretical", ""),
)


def print_outcome(spec: AgenticSpec, res: ReplayOutcome) -> None:
    from rich.console import Console
    from rich.table import Table

    con = Console()
    for n in res.notes:
        con.print(f"[dim]{n}[/dim]")
    table = Table(title=f"agentic replay: {spec.name}")
    for header, _, _ in COLUMNS:
        table.add_column(header)
    table.add_column("valid")
    for r in res.rows:
        verdict = "yes" if r["valid"] else ("diagnostic" if r["diagnostic"] else "no")
        table.add_row(*(_fmt(r[field], unit) for _, field, unit in COLUMNS), verdict)
    con.print(table)
    con.print(f"bundle: {res.run_dir}")
