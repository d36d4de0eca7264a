"""`scoville replay`: agentic session replay (AgentX-style) against any target, one point per
lane count, written as the usual run bundle with agentic fields on every summary row.

Thin: parse the options, call `scoville.replay.run_replay`, print a table.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from scoville.spec.lists import parse_list

if TYPE_CHECKING:
    from scoville.replay import ReplayOutcome
    from scoville.spec.agentic import AgenticSpec

app = typer.Typer()


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
        ov["lanes"] = parse_list(lanes, "--lanes", int, minimum=1, example="1,2,4,8")
    from scoville.replay import build_spec, run_replay

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
