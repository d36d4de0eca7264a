"""`scoville soak`: a steady load on a fleet of replicas behind scoville's router, with a
fault schedule; prints recovery times, replica health and the accounting. Thin: parse, call
`scoville.fleet`, print.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from scoville.commands._console import console as make_console

app = typer.Typer(rich_markup_mode=None)


@app.command("soak")
def soak_cmd(
    spec: Annotated[
        Path | None, typer.Option("--spec", help="Soak spec (.yaml/.toml/.json).")
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override, e.g. duration_s=600 or replicas=3 (repeatable)."),
    ] = None,
    out: Annotated[Path, typer.Option(help="Directory for the run directory.")] = Path("runs"),
    summarize: Annotated[
        Path | None, typer.Option(help="Re-summarise an existing soak run directory instead.")
    ] = None,
) -> None:
    """Soak a fleet (HTTP twin or embedded llama.cpp replicas) under a fault schedule."""
    import asyncio

    from scoville.fleet.soak import run_soak
    from scoville.fleet.spec import load_soak_spec
    from scoville.fleet.summary import summarize_soak

    console = make_console()
    if summarize is not None:
        _print(console, summarize, summarize_soak(summarize))
        return
    soak = load_soak_spec(spec, set_)
    run_dir = out / f"soak-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"
    console.print(f"run directory: {run_dir} (Ctrl-C stops; then --summarize {run_dir})")
    tally = asyncio.run(run_soak(soak, run_dir, console.print))
    console.print(
        f"sent {tally.sent}: ok {tally.ok}, failed {tally.failed}, cancelled {tally.cancelled}"
    )
    _print(console, run_dir, summarize_soak(run_dir))


def _print(console: Any, run_dir: Path, s: dict[str, Any]) -> None:
    from scoville.figures import num

    for f in s["faults"]:
        rec = f.get("recovery_s")
        said = f"recovered in {num(rec)} s" if rec is not None else "not recovered in the soak"
        if "lost_until_recovered" in f:
            said += f", {f['lost_until_recovered']} requests lost"
        if f.get("note"):
            said += f" ({f['note']})"
        console.print(f"fault {f['fault']} {f['kind']} at {num(f.get('started_s'))} s: {said}")
    for r in s["replicas"]:
        verdict = "DEGRADED" if r["degraded"] else "ok"
        console.print(
            f"replica {r['replica']}: {r['n_ok']} ok, {r['n_failed']} failed, median "
            f"{num(r['median_ms'])} ms, A={num(r['effect_a'])} -> {verdict}"
        )
    a = s["accounting"]
    console.print(
        f"accounting: sent {a['sent']} = ok {a['ok']} + failed {a['failed']} + cancelled "
        f"{a['cancelled']} ({'adds up' if a['adds_up'] else 'DOES NOT ADD UP'}); "
        f"router retried {a['router_retried']}"
    )
    console.print(f"soak: {run_dir}  (page: {run_dir / 'soak.html'})")
