"""CLI for the results store: `scoville store add|query|runs`, `scoville history`,
`scoville check`.

Thin: parse, call scoville.store / scoville.analysis, print. The store path comes from
--store, $SCOVILLE_STORE, the config file, or the user's data directory (never the cwd).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    import pyarrow as pa

    from scoville.analysis.history import LeftOut, Series
    from scoville.analysis.regression import CheckReport
    from scoville.store.results import ResultsStore

app = typer.Typer(no_args_is_help=True)
store_app = typer.Typer(no_args_is_help=True, help="The results store (DuckDB over Parquet).")
app.add_typer(store_app, name="store")

StoreOpt = Annotated[
    Path | None,
    typer.Option(
        "--store", help="Store directory (default: $SCOVILLE_STORE, config, ~/.local/share)."
    ),
]


def _open(store: Path | None) -> ResultsStore:
    from scoville.store.results import ResultsStore, store_path

    return ResultsStore(store_path(store))


def _print_table(table: pa.Table, title: str | None = None, limit: int = 200) -> None:
    from rich.console import Console
    from rich.table import Table

    out = Table(title=title)
    for name in table.column_names:
        out.add_column(name, overflow="fold")
    for row in table.slice(0, limit).to_pylist():
        out.add_row(*(_cell(v) for v in row.values()))
    console = Console()
    console.print(out)
    if table.num_rows > limit:
        console.print(f"[dim]{table.num_rows - limit} more rows (use --csv for all)[/dim]")


def _cell(v: object) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.4g}" if abs(v) < 1e4 else f"{v:,.0f}"
    return str(v)


@store_app.command("add")
def add_cmd(
    paths: Annotated[
        list[Path], typer.Argument(help="Run directories, folders of runs, or result files.")
    ],
    store: StoreOpt = None,
) -> None:
    """Add runs (and `scoville import` output, InferenceX / AIPerf files) to the store."""
    from scoville.store.results import add_paths

    results = _open(store)
    for e in add_paths(results, paths):
        typer.echo(
            f"added {e.run_id}: {e.n_points} points, {e.n_requests} requests "
            f"({e.labels.get('system')}/{e.labels.get('model')}, {e.run_utc})"
        )
    typer.echo(f"store: {results.root}")


@store_app.command("query")
def query_cmd(
    sql: Annotated[str, typer.Argument(help="SQL over the views runs, points, requests.")],
    store: StoreOpt = None,
    csv: Annotated[bool, typer.Option("--csv", help="Print CSV (all rows).")] = False,
) -> None:
    """Run SQL (DuckDB dialect) over the store, e.g. "SELECT run_id, model FROM runs"."""
    table = _open(store).query(sql)
    if csv:
        from scoville.bundle.export import to_csv

        sys.stdout.write(to_csv(table.to_pylist()))
        return
    _print_table(table)


@store_app.command("runs")
def runs_cmd(store: StoreOpt = None) -> None:
    """List the stored runs, oldest first."""
    table = _open(store).query(
        "SELECT run_id, system, model, framework, left(spec_hash, 8) AS spec, "
        "left(target_fingerprint, 8) AS target, scoville_version AS version, n_points AS "
        "points, n_requests AS requests FROM runs ORDER BY run_utc, run_id"
    )
    _print_table(table, title="stored runs")


@app.command("history")
def history_cmd(
    model: Annotated[str, typer.Option(help="Model label (case-insensitive).")],
    system: Annotated[str, typer.Option(help="System label (case-insensitive).")],
    metric: Annotated[str, typer.Option(help="A point metric, e.g. tput_per_gpu.")] = (
        "tput_per_gpu"
    ),
    at_interactivity: Annotated[
        float | None,
        typer.Option(help="Read each run's frontier at this interactivity (tok/s/user)."),
    ] = None,
    point: Annotated[
        str | None, typer.Option(help="Or read the metric at one point id, e.g. c16.")
    ] = None,
    isl: Annotated[int | None, typer.Option(help="Only runs of this ISL (tokens).")] = None,
    osl: Annotated[int | None, typer.Option(help="Only runs of this OSL (tokens).")] = None,
    range_ratio: Annotated[
        float | None, typer.Option(help="Only runs of this length range ratio.")
    ] = None,
    precision: Annotated[
        str | None, typer.Option(help="Only runs of this precision class, e.g. fp8, fp4.")
    ] = None,
    chart: Annotated[Path | None, typer.Option(help="Write the trend as an SVG chart.")] = None,
    store: StoreOpt = None,
) -> None:
    """A metric's trend over the stored runs of one model and system, change points marked:
    one series per workload shape (runs of different shapes are not like for like)."""
    from scoville.analysis.history import ShapeFilter, histories
    from scoville.errors import UserError
    from scoville.store.trend import history_runs

    if (at_interactivity is None) == (point is None):
        raise UserError("Give exactly one of --at-interactivity X or --point ID.")
    runs = history_runs(_open(store), model, system)
    shape = ShapeFilter(isl, osl, range_ratio, precision)
    series, left = histories(runs, metric, at_interactivity, point, shape)
    if not series:
        shapes = sorted({lo.shape for lo in left})
        raise UserError(
            f"No stored run of {model} on {system} is of the shape asked for; the stored "
            f"shapes are: {' | '.join(shapes)}. Change or drop --isl/--osl/--range-ratio/"
            "--precision."
        )
    if all(h.status in ("empty", "missing") for s in series for h in s.points):
        raise UserError(
            f"No stored run of {model} on {system} has a value of {metric!r}. Field names are "
            "those of summary rows (tput_per_gpu, output_tput_per_gpu, tput_per_kw, ...)."
        )
    _print_histories(series, left, metric, at_interactivity, point)
    if chart is not None:
        from scoville.report.trend import history_svg

        chart.write_text(history_svg(series, metric, model, system), encoding="utf-8")
        typer.echo(f"chart: {chart}")


def _print_histories(
    series: list[Series], left: list[LeftOut], metric: str, at_x: float | None, point: str | None
) -> None:
    """One table per shape, then plainly: which runs were kept apart or left out, and why."""
    from rich.console import Console
    from rich.markup import escape

    console = Console()
    n_runs = sum(len(s.points) for s in series)
    if len(series) > 1:
        console.print(
            f"[yellow]note: these {n_runs} runs are of {len(series)} shapes that are not like "
            "for like; each shape is its own series below, its trend and change points from "
            "its own runs only. Pick one with --isl/--osl/--range-ratio/--precision.[/yellow]",
            highlight=False,
        )
    for s in series:
        _print_history(s, metric, at_x, point)
        if s.apart:
            console.print(f"[dim]apart from the first series: {escape('; '.join(s.apart))}[/dim]")
    by_shape: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for lo in left:
        by_shape.setdefault((lo.shape, lo.reasons), []).append(lo.run_id)
    for (shape, reasons), ids in by_shape.items():
        which = ids[0] if len(ids) == 1 else f"{ids[0]} ... {ids[-1]}"
        console.print(
            f"[yellow]left out {len(ids)} run{'s' * (len(ids) > 1)} of {escape(shape)} "
            f"({escape('; '.join(reasons))}): {which}[/yellow]",
            highlight=False,
        )


def _print_history(s: Series, metric: str, at_x: float | None, point: str | None) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    where = f"at interactivity {at_x:g} tok/s/user" if at_x is not None else f"at point {point}"
    t = Table(title=f"{metric} {where}\n{escape(s.shape)} ({len(s.points)} runs)")
    for col in ("run", "time (UTC)", metric, "reading", "change"):
        t.add_column(col)
    for h in s.points:
        shown = _cell(h.value) if h.value is not None else "-"
        if h.value is None and h.bound is not None:
            shown = f">= {_cell(h.bound)}"
        t.add_row(h.run_id, h.run_utc[:19], shown, h.status, "[bold]level shift[/]" * h.change)
    Console().print(t)


@app.command("check")
def check_cmd(
    run: Annotated[str, typer.Argument(help="The candidate: a run directory or stored run id.")],
    baseline: Annotated[
        list[str],
        typer.Option(
            "--baseline",
            "-b",
            help="A run directory, a stored run id, 'latest' (the newest stored run of the same "
            "configuration and shape), or SQL returning run_id (its newest run). Repeat it with "
            "identical reruns of the baseline to measure run-to-run noise: the first is the "
            "baseline, the others' changes from it set each line's noise bound.",
        ),
    ],
    min_effect: Annotated[
        float, typer.Option(help="Smallest relative change that counts (0.05 = 5 %).")
    ] = 0.05,
    resamples: Annotated[int, typer.Option(help="Bootstrap resamples.")] = 1000,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
    markdown: Annotated[
        Path | None,
        typer.Option(help="Append a Markdown summary here (default: $GITHUB_STEP_SUMMARY)."),
    ] = None,
    junit: Annotated[Path | None, typer.Option(help="Write JUnit XML here.")] = None,
    store: StoreOpt = None,
) -> None:
    """Is RUN worse than its baseline beyond noise? Exit 0 (no regression) or 4 (regression)."""
    from scoville.analysis.regression import Rule, check
    from scoville.analysis.run_noise import with_run_noise
    from scoville.errors import UserError
    from scoville.report.gate import summary_line
    from scoville.store.sides import resolve

    if not 0 <= min_effect < 1 or resamples < 100:
        raise UserError("--min-effect must lie in [0, 1) and --resamples be at least 100.")
    results = _open(store)
    cand = resolve(results, run)
    base, *reruns = [resolve(results, ref, like=cand) for ref in baseline]
    reruns = [r for r in reruns if r.run_id not in (base.run_id, cand.run_id)]
    rule = Rule(min_effect, 0.95, resamples, seed)
    nulls = [check(rerun, base, rule) for rerun in reruns]
    report = with_run_noise(check(cand, base, rule), nulls)
    _print_check(report)
    _write_ci_outputs(report, markdown, junit)
    typer.echo(summary_line(report))
    if report.regressed:
        raise typer.Exit(4)


def _write_ci_outputs(report: CheckReport, markdown: Path | None, junit: Path | None) -> None:
    """Markdown appended to --markdown or $GITHUB_STEP_SUMMARY; JUnit XML to --junit."""
    import os

    from scoville.report.gate import to_junit, to_markdown

    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    md_path = markdown or (Path(step_summary) if step_summary else None)
    if md_path is not None:
        with md_path.open("a", encoding="utf-8") as fh:
            fh.write(to_markdown(report))
    if junit is not None:
        junit.write_text(to_junit(report), encoding="utf-8")


def _print_check(report: CheckReport) -> None:
    from rich.console import Console
    from rich.table import Table

    from scoville.report.gate import interval_text

    style = {"regression": "red", "improvement": "green", "few samples": "yellow"}
    t = Table(title=f"{report.candidate} vs baseline {report.baseline}")
    for col in ("metric", "at", "baseline", "candidate", "change", "95 % CI", "verdict"):
        t.add_column(col)
    for ln in report.lines:
        change = "-" if ln.change is None else f"{ln.change * 100:+.1f} %"
        verdict = f"[{style.get(ln.verdict, 'default')}]{ln.verdict}[/]"
        t.add_row(
            ln.metric,
            ln.where,
            _cell(ln.baseline),
            _cell(ln.candidate),
            change,
            interval_text(ln),
            verdict + (f" ({ln.note})" if ln.note else ""),
        )
    Console().print(t)
    for note in report.notes:
        Console().print(f"[yellow]note: {note}[/yellow]")


@app.command("knee")
def knee_cmd(
    paths: Annotated[list[Path], typer.Argument(help="Run directories or result files.")],
    latency: Annotated[str, typer.Option(help="Latency metric that must climb.")] = "median_e2e",
    flat: Annotated[
        float, typer.Option(help="Scaling efficiency below which throughput has stopped rising.")
    ] = 0.25,
    climb: Annotated[float, typer.Option(help="Relative latency rise that counts.")] = 0.10,
) -> None:
    """Where each configuration's load sweep stops paying: throughput flat, latency climbing."""
    from rich.console import Console
    from rich.table import Table

    from scoville.analysis.knee import knees
    from scoville.store.source import read_source

    rows = [r for p in paths for r in read_source(p).rows]
    t = Table(title=f"knee of the load sweep (efficiency < {flat:g}, {latency} +{climb:.0%})")
    for col in ("configuration", "knee", "tput_per_gpu", latency, "next step", "levels"):
        t.add_column(col)
    for k in knees(rows, latency_metric=latency, flat=flat, climb=climb):
        nxt = "-"
        if k.efficiency_after is not None and k.latency_rise_after is not None:
            nxt = f"efficiency {k.efficiency_after:.2f}, latency {k.latency_rise_after:+.0%}"
        t.add_row(
            k.group.label(),
            k.point_id or "not reached",
            _cell(k.throughput),
            _cell(k.latency),
            nxt,
            str(k.n_levels),
        )
    Console().print(t)
