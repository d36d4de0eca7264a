"""What `run` and `resume` print when a run ends (the point table, the per-kW table, notes,
the invalid points and why) and the exit code it ends with."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from scoville.commands._power import power_table
from scoville.figures import num, ok_of_sent

if TYPE_CHECKING:
    from scoville.bundle.summary import SummaryDoc
    from scoville.pipeline import RunResult

# Exit codes of run and resume (README "Exit codes"): 0 every point valid; 2 bad input; 3 a
# point is invalid; 4 a file of the run could not be written; 5 every point valid but the
# run's quality pass found the target not qualified; 130 / 143 stopped by SIGINT / SIGTERM.
EXIT_INVALID, EXIT_STORAGE, EXIT_UNQUALIFIED = 3, 4, 5
EXIT_STOPPED = {"SIGINT": 130, "SIGTERM": 143}


def finish(console: Console, result: RunResult) -> None:
    """Print a run's table, notes and invalid points, its directory; exit with its code."""
    console.print(_point_table(result.summary))
    if (power := power_table(result.summary["points"])) is not None:
        console.print(power)
    _few_samples_note(console, result.summary)
    for note in result.summary.get("notes", []):
        console.print(f"[dim]{escape(str(note))}[/dim]", highlight=False)
    bad = [p for p in result.summary["points"] if not p["valid"]]
    for p in bad:
        why = "; ".join(p.get("invalid_reasons") or ["invalid"])
        console.print(f"[yellow]point {p['point_id']} invalid: {why}[/yellow]", highlight=False)
    if bad:
        console.print(
            f"errors per invalid point: {[p['errors'] for p in bad]}; records in "
            f"{result.run_dir / 'records.jsonl'}",
            highlight=False,
        )
    console.print(f"run directory: {result.run_dir}", highlight=False)
    console.print(f"report: {result.run_dir / 'report.html'}", highlight=False)
    if result.stopped:
        console.print(
            f"[yellow]stopped by {result.stopped}: what completed is summarised above; "
            f"`scoville resume {result.run_dir}` measures the rest.[/yellow]",
            highlight=False,
        )
        raise typer.Exit(EXIT_STOPPED.get(result.stopped, 130))
    if bad:
        raise typer.Exit(EXIT_INVALID)
    if any(p.get("quality_status") == "not qualified" for p in result.summary["points"]):
        raise typer.Exit(EXIT_UNQUALIFIED)  # the quality line above says why


# (header, row key, scale): short two-line headers and no vertical rules keep the table
# within 80 columns; figures are `num` (thousands separated from 100 up, else 3 digits)
_POINT_COLUMNS = (
    ("TTFT\np50 ms", "median_ttft", 1e3),
    ("TPOT\np50 ms", "median_tpot", 1e3),
    ("E2E\np50 s", "median_e2e", 1.0),
    ("tok/s\n/user", "median_intvty", 1.0),
    ("tok/s\n/accel", "tput_per_gpu", 1.0),
    ("out tok/s\n/accel", "output_tput_per_gpu", 1.0),
)


def _scaled(v: object, scale: float) -> object:
    return v * scale if isinstance(v, int | float) and not isinstance(v, bool) else None


def _point_table(summary: SummaryDoc) -> Table:
    """One line per point; invalid points say why below the table (`finish`)."""
    table = Table(title=f"run {summary['run_id']}", box=box.SIMPLE_HEAD)
    table.add_column("point", justify="right")
    table.add_column("ok/\nsent", justify="right")
    for header, *_ in _POINT_COLUMNS:
        table.add_column(header, justify="right")
    table.add_column("valid", justify="right")
    for r in summary["points"]:
        figures = [num(_scaled(r.get(key), scale)) for _h, key, scale in _POINT_COLUMNS]
        valid = "yes" if r["valid"] else "[red]NO[/red]" + _why(r)
        table.add_row(str(r["point_id"]), ok_of_sent(r), *figures, valid)
    return table


def _few_samples_note(console: Console, summary: SummaryDoc) -> None:
    """Name the points whose percentiles come from too few samples for a 95 % interval."""
    few = [
        f"{p['point_id']} (n={p.get('n_ttft')})" for p in summary["points"] if p.get("few_samples")
    ]
    if few:
        console.print(
            f"[yellow]percentiles from too few samples for a 95 % interval at {', '.join(few)} "
            "(a p99 needs 368): named in each point's few_samples in summary.json, exports "
            "and the report.[/yellow]"
        )


def _why(row: dict[str, object]) -> str:
    """The tags of the reasons a point is invalid, for the table (the reasons in full are
    printed below it)."""
    reasons = row.get("invalid_reasons")
    if not isinstance(reasons, list) or not reasons:
        return ""
    return " (" + ", ".join(str(r).split(":")[0] for r in reasons) + ")"
