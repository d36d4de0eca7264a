"""`scoville replay`: agentic replay (AgentX-style agent sessions) against any target, one
point per lane count, written as the usual run bundle with agentic fields on every summary row.

Thin: parse the options, call `scoville.replay.run_replay`, print a table.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from scoville.commands._console import console
from scoville.commands._options import spec_option
from scoville.figures import num
from scoville.spec.flags import REPLAY_FLAGS, flag_values

if TYPE_CHECKING:
    from scoville.replay import ReplayOutcome
    from scoville.spec.agentic import AgenticSpec

app = typer.Typer(rich_markup_mode=None)


def _opt(name: str) -> Any:
    from scoville.spec.agentic import AgenticSpec

    return spec_option(name, AgenticSpec, REPLAY_FLAGS)


# Flags that set AgenticSpec fields (table: scoville.spec.flags.REPLAY_FLAGS).
TargetOpt = Annotated[str | None, _opt("target")]
LanesOpt = Annotated[str | None, _opt("lanes")]
WindowOpt = Annotated[float | None, _opt("window_s")]
ScaleOpt = Annotated[float | None, _opt("scale")]
WindowTokensOpt = Annotated[int | None, _opt("window_tokens")]
MaxSessionsOpt = Annotated[int | None, _opt("max_sessions")]
MaxRequestOpt = Annotated[int | None, _opt("max_request_tokens")]
LiveOpt = Annotated[bool, _opt("live")]
NoCacheBustOpt = Annotated[bool, _opt("no_cache_bust")]
SeedOpt = Annotated[int | None, _opt("seed")]
ScheduleOpt = Annotated[str | None, _opt("schedule")]
TimeScaleOpt = Annotated[float | None, _opt("time_scale")]
WarmupPerLaneOpt = Annotated[int | None, _opt("warmup_per_lane")]


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
    target: TargetOpt = None,
    lanes: LanesOpt = None,
    window_s: WindowOpt = None,
    scale: ScaleOpt = None,
    window_tokens: WindowTokensOpt = None,
    max_sessions: MaxSessionsOpt = None,
    max_request_tokens: MaxRequestOpt = None,
    live: LiveOpt = False,
    no_cache_bust: NoCacheBustOpt = False,
    seed: SeedOpt = None,
    schedule: ScheduleOpt = None,
    time_scale: TimeScaleOpt = None,
    warmup_per_lane: WarmupPerLaneOpt = None,
    out: Annotated[Path, typer.Option(help="Directory for run bundles.")] = Path("runs"),
) -> None:
    """Agentic replay: replay agent sessions in lanes and report what agents feel."""
    values = flag_values(REPLAY_FLAGS, locals())
    from scoville.replay import build_spec, run_replay

    spec = build_spec(trace, spec_file, values)
    outcome = run_replay(spec, out)
    valid = print_outcome(spec, outcome)
    if outcome.stopped:  # 130 / 143, as `run` (README "Exit codes")
        raise typer.Exit({"SIGINT": 130, "SIGTERM": 143}.get(outcome.stopped, 130))
    if not valid:
        raise typer.Exit(3)


COLUMNS = (  # (header, row field, unit); two-line headers keep the table within 80 columns
    ("lanes", "lanes", ""),
    ("req/s", "req_per_s", ""),
    ("out tok/s\n/accel", "output_tput_per_accelerator", ""),
    ("intvty\np90 ITL", "intvty_agentx", ""),
    ("TTFT\nhit s", "median_ttft_hit", ""),
    ("TTFT\nmiss s", "median_ttft_miss", ""),
    ("cache\nmeas.", "cache_hit_rate_measured", ""),
    ("cache\ntheo.", "cache_hit_rate_theoretical", ""),
)


def print_outcome(spec: AgenticSpec, res: ReplayOutcome) -> bool:
    """Print the notes, the table and a reason line per invalid point; True if all valid."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    con = console()
    for n in res.notes:
        con.print(f"[dim]{escape(n)}[/dim]", highlight=False)
    table = Table(title=f"agentic replay: {spec.name}", box=box.SIMPLE_HEAD)
    for header, _, _ in COLUMNS:
        table.add_column(header, justify="right")
    table.add_column("valid", justify="right")
    table.add_column("E2E\nfront.", justify="right")  # AgentX: agentic frontiers only from it
    for r in res.rows:
        verdict = "yes" if r["valid"] else ("diag." if r["diagnostic"] else "NO")
        front = "yes" if r.get("on_e2e_frontier") else "no"
        table.add_row(*(num(r[field], unit) for _, field, unit in COLUMNS), verdict, front)
    con.print(table)
    if any(r["valid"] and not r.get("on_e2e_frontier") for r in res.rows):
        con.print(
            "[dim]E2E front. no: off the E2E-normalised frontier, so never on an agentic "
            "frontier (AgentX's rule)[/dim]",
            highlight=False,
        )
    bad = [r for r in res.rows if not r["valid"]]
    for r in bad:
        for reason in r.get("invalid_reasons") or ["invalid"]:
            con.print(
                f"[yellow]{r['lanes']:g} lanes: {escape(str(reason))}[/yellow]", highlight=False
            )
    con.print(f"bundle: {res.run_dir}")
    return not bad
