"""The command line: parse, call the pipeline, print. No logic lives here.

User mistakes (`UserError`) are printed as one paragraph without a traceback, exit code 2.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from scoville.commands import agentic as agentic_commands
from scoville.commands import analysis as analysis_commands
from scoville.commands import claims as claims_commands
from scoville.commands import economics as economics_commands
from scoville.commands import quality as quality_commands
from scoville.commands import soak as soak_commands
from scoville.commands import store as store_commands
from scoville.commands import telemetry as telemetry_commands
from scoville.commands import twin as twin_commands
from scoville.commands._console import console as make_console
from scoville.commands._options import spec_option
from scoville.commands._result import EXIT_STORAGE, finish
from scoville.errors import StorageError, UserError
from scoville.spec.flags import RUN_FLAGS

if TYPE_CHECKING:
    from scoville.spec.model import BenchmarkSpec

app = typer.Typer(
    add_completion=False,
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help is plain text: brackets in field descriptions stay
    help="scoville: measure LLM inference servers and audit the claims made about them.",
)
# Each area's commands live in scoville/commands/<area>.py and are mounted at top level.
for _area_app in (
    analysis_commands.app,
    telemetry_commands.app,
    twin_commands.app,
    agentic_commands.app,
    store_commands.app,
    economics_commands.app,
    soak_commands.app,
    quality_commands.app,
):
    app.add_typer(_area_app)
claims_commands.mount(analysis_commands.claims_app)
console = make_console()
err_console = make_console(stderr=True)

SpecOpt = Annotated[Path | None, typer.Option("--spec", help="Spec file (.yaml/.toml/.json).")]
SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override, e.g. load.concurrency=1,2,4 (repeatable)."),
]


# Flags that set spec fields: the table is scoville.spec.flags.RUN_FLAGS, help from the field.
TargetOpt = Annotated[str | None, spec_option("target")]
ModelOpt = Annotated[str | None, spec_option("model")]
ApiOpt = Annotated[str | None, spec_option("api")]
TokenizerOpt = Annotated[str | None, spec_option("tokenizer")]
ConcurrencyOpt = Annotated[str | None, spec_option("concurrency")]
RatesOpt = Annotated[str | None, spec_option("rates")]
IslOpt = Annotated[int | None, spec_option("isl")]
OslOpt = Annotated[int | None, spec_option("osl")]
RangeRatioOpt = Annotated[float | None, spec_option("range_ratio")]
RequestsOpt = Annotated[int | None, spec_option("requests_per_point")]
WarmupOpt = Annotated[int | None, spec_option("warmup")]
MarginOpt = Annotated[float | None, spec_option("target_margin")]
MarginStatsOpt = Annotated[str | None, spec_option("margin_stats")]
SeedOpt = Annotated[int | None, spec_option("seed")]
PowerProfileOpt = Annotated[Path | None, spec_option("power_profile")]


def _resolve(spec: Path | None, sets: list[str] | None, given: dict[str, object]) -> BenchmarkSpec:
    """The frozen spec a command line resolves to: file, then --set, then the flags."""
    from scoville.spec.flags import run_values
    from scoville.spec.load import load_spec

    return load_spec(spec, list(sets or []), run_values(given))


@app.command()
def run(
    spec: SpecOpt = None,
    set_: SetOpt = None,
    target: TargetOpt = None,
    model: ModelOpt = None,
    api: ApiOpt = None,
    tokenizer: TokenizerOpt = None,
    concurrency: ConcurrencyOpt = None,
    rates: RatesOpt = None,
    isl: IslOpt = None,
    osl: OslOpt = None,
    range_ratio: RangeRatioOpt = None,
    requests_per_point: RequestsOpt = None,
    warmup: WarmupOpt = None,
    target_margin: MarginOpt = None,
    margin_stats: MarginStatsOpt = None,
    seed: SeedOpt = None,
    power_profile: PowerProfileOpt = None,
    out: Annotated[Path, typer.Option(help="Results directory.")] = Path("runs"),
    workers: Annotated[
        str | None,
        typer.Option(
            help="Client processes per point: N (local), ray, ray:N or ray://HOST:PORT?workers=N."
        ),
    ] = None,
    envelope: Annotated[
        Path | None,
        typer.Option(
            help="A `scoville calibrate` envelope; points past it are flagged (default: "
            "OUT/scoville-calibration.json if present, where `scoville calibrate` writes it)."
        ),
    ] = None,
) -> None:
    """Run a benchmark sweep and write a bundle with report.html (embedded target by default)."""
    given = {k: v for k, v in locals().items() if k in RUN_FLAGS}
    from scoville.commands._progress import progress_for
    from scoville.pipeline import run_benchmark

    frozen = _resolve(spec, set_, given)
    rate_list = frozen.load.request_rates_per_s
    rates_text = "; rates " + ", ".join(f"{r:g}" for r in rate_list) + " req/s" if rate_list else ""
    console.print(
        f"spec {frozen.content_hash()}: target {frozen.target.url}, ISL "
        f"{frozen.shape.isl_tokens} / OSL {frozen.shape.osl_tokens} (range ratio "
        f"{frozen.shape.range_ratio}), concurrency {', '.join(map(str, frozen.load.concurrency))}"
        f"{rates_text}",
        highlight=False,
    )
    default_env = out / "scoville-calibration.json"
    env = envelope or (default_env if default_env.is_file() else None)
    with progress_for(console, frozen) as progress:
        result = run_benchmark(
            frozen,
            out,
            progress.point,
            workers,
            env,
            on_stage=progress.stage,
            on_point_end=progress.point_end,
        )
    finish(console, result)


@app.command("serve-embedded")
def serve_embedded(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1.")] = 8080,
    parallel: Annotated[int, typer.Option(help="Concurrent slots.")] = 8,
    ctx_per_slot: Annotated[int, typer.Option(help="Context tokens per slot.")] = 2048,
) -> None:
    """Serve the embedded llama.cpp + SmolLM2-135M-Instruct alone (OpenAI API on 127.0.0.1)."""
    from scoville.targets.embedded import EmbeddedConfig, serve_forever

    serve_forever(EmbeddedConfig(port=port, parallel=parallel, ctx_per_slot=ctx_per_slot))


@app.command()
def report(
    run_dirs: Annotated[list[Path], typer.Argument(help="Run directories (several = comparison).")],
    out: Annotated[
        Path | None,
        typer.Option(
            help="HTML file (default: in the run, or comparison.html beside the first run); for png/svg, a folder "
            "(default: charts/ in the run, or beside the first run)."
        ),
    ] = None,
    format_: Annotated[
        str,
        typer.Option(
            "--format",
            help="html (one interactive page), png or svg (a file per chart, for slides).",
        ),
    ] = "html",
    tco: Annotated[
        Path | None,
        typer.Option(
            help="TCO file (YAML, scoville.tco/1): adds an economics section ($/accelerator-"
            "hour, $/M tokens at interactivity tiers, tokens per MW)."
        ),
    ] = None,
) -> None:
    """Rebuild report.html from one or more run bundles, or export each chart as PNG/SVG."""
    from scoville.bundle.run import find_runs
    from scoville.errors import UserError as _UE
    from scoville.pipeline import write_charts, write_report
    from scoville.resume import summarize_stopped

    if format_ not in ("html", "png", "svg"):
        raise _UE(f"Unknown report format '{format_}'; use html, png or svg.")
    below = [c for d in run_dirs if d.is_dir() for c in sorted(d.iterdir()) if c.is_dir()]
    for d in [*run_dirs, *below]:  # a stopped or killed run has records but no summary yet
        stopped = not (d / "summary.json").exists() and (d / "spec.json").exists()
        if stopped and (d / "records.jsonl").exists():
            console.print(f"{d}: no summary (the run stopped early); summarising its records")
            summarize_stopped(d)
    runs = find_runs(run_dirs)
    one = len(runs) == 1
    if format_ == "html":
        dest = out or (
            runs[0].path / "report.html" if one else runs[0].path.parent / "comparison.html"
        )
        console.print(f"report: {write_report([r.path for r in runs], dest, tco=tco)}")
        return
    folder = out or (runs[0].path / "charts" if one else runs[0].path.parent / "charts")
    fmt: Literal["png", "svg"] = "png" if format_ == "png" else "svg"
    for path in write_charts([r.path for r in runs], fmt, folder):
        console.print(f"chart: {path}")


@app.command()
def resume(
    run_dir: Annotated[Path, typer.Argument(help="The directory of a stopped run.")],
    workers: Annotated[
        str | None, typer.Option(help="Client processes per point (default: as the run had).")
    ] = None,
) -> None:
    """Continue a stopped sweep from its first incomplete point (same spec, same prompts)."""
    from scoville.resume import resume_run

    if not run_dir.is_dir():
        raise UserError(f"{run_dir} is not a directory; pass the run directory `run` printed.")
    finish(console, resume_run(run_dir, None, workers))


@app.command()
def export(
    run_dir: Annotated[Path, typer.Argument(help="A run directory.")],
    format_: Annotated[
        str, typer.Option("--format", help="inferencex, aiperf or csv.")
    ] = "inferencex",
) -> None:
    """Print a run's points as InferenceX rows (JSON, seconds), AIPerf exports or CSV."""
    from scoville.errors import UserError as _UE
    from scoville.pipeline import export_rows

    if format_ not in ("inferencex", "aiperf", "csv"):
        raise _UE(f"Unknown export format '{format_}'; use inferencex, aiperf or csv.")
    sys.stdout.write(export_rows(run_dir, format_) + "\n")


@app.command("spec")
def spec_cmd(
    spec: SpecOpt = None,
    set_: SetOpt = None,
    target: TargetOpt = None,
    model: ModelOpt = None,
    api: ApiOpt = None,
    tokenizer: TokenizerOpt = None,
    concurrency: ConcurrencyOpt = None,
    rates: RatesOpt = None,
    isl: IslOpt = None,
    osl: OslOpt = None,
    range_ratio: RangeRatioOpt = None,
    requests_per_point: RequestsOpt = None,
    warmup: WarmupOpt = None,
    target_margin: MarginOpt = None,
    margin_stats: MarginStatsOpt = None,
    seed: SeedOpt = None,
    power_profile: PowerProfileOpt = None,
    schema: Annotated[
        bool, typer.Option("--schema", help="Print the JSON Schema instead.")
    ] = False,
) -> None:
    """Print the spec a `run` command line resolves to (defaults for the target's kind + file +
    --set + flags), frozen, with its hash. Takes the same flags as `run`."""
    import json

    from scoville.spec.model import BenchmarkSpec

    given = {k: v for k, v in locals().items() if k in RUN_FLAGS}
    if schema:
        sys.stdout.write(json.dumps(BenchmarkSpec.model_json_schema(), indent=2) + "\n")
        return
    frozen = _resolve(spec, set_, given)
    sys.stdout.write(
        json.dumps({"content_hash": frozen.content_hash(), "spec": frozen.to_dict()}, indent=2)
        + "\n"
    )


def main() -> None:
    try:
        app()
    except UserError as exc:
        err_console.print(f"[bold red]error:[/bold red] {exc}", highlight=False)
        sys.exit(2)
    except StorageError as exc:
        err_console.print(f"[bold red]stopped:[/bold red] {exc}", highlight=False)
        sys.exit(EXIT_STORAGE)
    except KeyboardInterrupt:
        err_console.print("stopped: records measured so far are on disk in the run directory.")
        sys.exit(130)


if __name__ == "__main__":
    main()
