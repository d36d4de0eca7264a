"""The command line: parse, call the pipeline, print. No logic lives here.

User mistakes (`UserError`) are printed as one paragraph without a traceback, exit code 2.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from scoville.commands import agentic as agentic_commands
from scoville.commands import analysis as analysis_commands
from scoville.commands import quality as quality_commands
from scoville.commands import telemetry as telemetry_commands
from scoville.commands import twin as twin_commands
from scoville.errors import UserError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    help="scoville: measure LLM inference servers and audit the claims made about them.",
)
# Each area's commands live in scoville/commands/<area>.py and are mounted at top level.
for _area_app in (
    analysis_commands.app,
    telemetry_commands.app,
    twin_commands.app,
    agentic_commands.app,
    quality_commands.app,
):
    app.add_typer(_area_app)
console = Console()
err_console = Console(stderr=True)

SpecOpt = Annotated[Path | None, typer.Option("--spec", help="Spec file (.yaml/.toml/.json).")]
SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override, e.g. load.concurrency=1,2,4 (repeatable)."),
]


def _overrides(sets: list[str] | None, **flags: object) -> list[str]:
    out = list(sets or [])
    for key, value in flags.items():
        if value is not None:
            out.append(f"{key}={value}")
    return out


def _point_table(summary: dict[str, object]) -> Table:
    table = Table(title=f"run {summary['run_id']}")
    for col in (
        "point",
        "ok/sent",
        "TTFT p50 ms",
        "TPOT p50 ms",
        "E2E p50 s",
        "intvty p50 tok/s/user",
        "tok/s/accel",
        "out tok/s/accel",
        "valid",
    ):
        table.add_column(col, justify="right")
    for r in summary["points"]:  # type: ignore[attr-defined]

        def f(key: str, scale: float = 1.0, d: int = 1, row: dict[str, object] = r) -> str:
            v = row.get(key)
            return f"{float(v) * scale:,.{d}f}" if isinstance(v, (int, float)) else "-"

        table.add_row(
            str(r["point_id"]),
            f"{r['n_ok']}/{r['n_sent']}",
            f("median_ttft", 1e3),
            f("median_tpot", 1e3, 2),
            f("median_e2e", 1, 3),
            f("median_intvty"),
            f("tput_per_gpu"),
            f("output_tput_per_gpu"),
            "yes" if r["valid"] else "[red]NO[/red]",
        )
    return table


@app.command()
def run(
    spec: SpecOpt = None,
    set_: SetOpt = None,
    target: Annotated[
        str | None, typer.Option(help="'embedded' (default), http://HOST:PORT or twin:HW/MODEL.")
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model name at the target.")] = None,
    api: Annotated[str | None, typer.Option(help="completions or chat.")] = None,
    tokenizer: Annotated[
        str | None, typer.Option(help="auto, server, tiktoken:NAME or a tokenizer.json path.")
    ] = None,
    concurrency: Annotated[str | None, typer.Option(help="Comma list, e.g. 1,2,4,8.")] = None,
    rates: Annotated[
        str | None,
        typer.Option(
            help="Open-loop request rates (req/s), e.g. 0.5,1,2; alone, they replace the concurrency sweep."
        ),
    ] = None,
    isl: Annotated[int | None, typer.Option(help="Input tokens per request.")] = None,
    osl: Annotated[int | None, typer.Option(help="Output tokens per request.")] = None,
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
            help="A `scoville calibrate` envelope; points past it are flagged (default: ./scoville-calibration.json if present)."
        ),
    ] = None,
) -> None:
    """Run a benchmark sweep and write a bundle with report.html (embedded target by default)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from scoville.pipeline import run_benchmark
    from scoville.spec.load import load_spec

    frozen = load_spec(
        spec,
        _overrides(
            set_,
            **{
                "target.url": target,
                "target.model": model,
                "target.api": api,
                "target.tokenizer": tokenizer,
                "load.concurrency": "[]" if rates and concurrency is None else concurrency,
                "load.request_rates_per_s": rates,
                "shape.isl_tokens": isl,
                "shape.osl_tokens": osl,
            },
        ),
    )
    console.print(
        f"spec {frozen.content_hash()}: target {frozen.target.url}, ISL "
        f"{frozen.shape.isl_tokens} / OSL {frozen.shape.osl_tokens} (range ratio "
        f"{frozen.shape.range_ratio}), points {list(frozen.load.concurrency)}"
        f"{' rates ' + str(list(frozen.load.request_rates_per_s)) if frozen.load.request_rates_per_s else ''}"
    )
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    ) as progress:
        tasks: dict[str, object] = {}

        def on_progress(point_id: str, done: int, total: int) -> None:
            if point_id not in tasks:
                tasks[point_id] = progress.add_task(f"point {point_id}", total=total)
            progress.update(tasks[point_id], completed=done)  # type: ignore[arg-type]

        default_env = Path("scoville-calibration.json")
        env = envelope or (default_env if default_env.is_file() else None)
        result = run_benchmark(frozen, out, on_progress, workers, env)
    console.print(_point_table(result.summary))
    for note in result.summary.get("notes", []):
        console.print(f"[dim]{note}[/dim]")
    bad = [p for p in result.summary["points"] if not p["valid"]]
    if bad:
        console.print(
            f"[yellow]{len(bad)} point(s) invalid (over 5 % failed requests): "
            f"{', '.join(p['point_id'] for p in bad)}; errors: "
            f"{[p['errors'] for p in bad]}. Records are in "
            f"{result.run_dir / 'records.jsonl'}.[/yellow]"
        )
    console.print(f"report: {result.run_dir / 'report.html'}")
    if bad:
        raise typer.Exit(3)


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
        Path | None, typer.Option(help="Output HTML (default: in the run, or comparison.html).")
    ] = None,
) -> None:
    """Rebuild report.html from one or more run bundles."""
    from scoville.pipeline import write_report
    from scoville.store.bundle import find_runs

    runs = find_runs(run_dirs)
    dest = out or (runs[0].path / "report.html" if len(runs) == 1 else Path("comparison.html"))
    console.print(f"report: {write_report([r.path for r in runs], dest)}")


@app.command()
def export(
    run_dir: Annotated[Path, typer.Argument(help="A run directory.")],
    format_: Annotated[str, typer.Option("--format", help="inferencex or csv.")] = "inferencex",
) -> None:
    """Print a run's points as InferenceX result rows (JSON, seconds) or CSV."""
    from scoville.errors import UserError as _UE
    from scoville.pipeline import export_rows

    if format_ not in ("inferencex", "csv"):
        raise _UE(f"Unknown export format '{format_}'; use inferencex or csv.")
    sys.stdout.write(export_rows(run_dir, format_) + "\n")


@app.command("spec")
def spec_cmd(
    spec: SpecOpt = None,
    set_: SetOpt = None,
    schema: Annotated[bool, typer.Option(help="Print the JSON Schema instead.")] = False,
) -> None:
    """Print the resolved, frozen spec (defaults + file + overrides) and its hash."""
    import json

    from scoville.spec.load import load_spec
    from scoville.spec.model import BenchmarkSpec

    if schema:
        sys.stdout.write(json.dumps(BenchmarkSpec.model_json_schema(), indent=2) + "\n")
        return
    frozen = load_spec(spec, list(set_ or []))
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
    except KeyboardInterrupt:
        err_console.print("stopped: records measured so far are on disk in the run directory.")
        sys.exit(130)


if __name__ == "__main__":
    main()
