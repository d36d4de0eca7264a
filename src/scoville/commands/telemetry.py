"""CLI commands of the telemetry area: `scoville calibrate` and `scoville power probe`.

Thin: parse options, call `scoville.telemetry`, print with rich. Heavy imports stay inside
the command functions so `scoville --help` stays fast.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from scoville.commands._console import console as make_console
from scoville.figures import fixed
from scoville.spec.lists import parse_list

app = typer.Typer(add_completion=False)
power_app = typer.Typer(add_completion=False, help="Power measurement sources on this machine.")
app.add_typer(power_app, name="power")
console = make_console()


def _levels(text: str) -> tuple[int, ...]:
    return tuple(
        parse_list(text, "--levels", int, minimum=1, rising=True, example="1,2,4,8,16,32,64")
    )


LEVEL_COLUMNS = ("streams", "offer/s", "got/s", "e50", "e99", "lag99", "cpu", "srv99", "verdict")


def _level_table() -> tuple[Table, Callable[[Any], None]]:
    """The calibration table and the callback adding one level to it (and printing progress)."""
    table = Table(
        title="client calibration, one process",
        title_justify="left",
        caption="offer/got: chunks/s; e50/e99: client stamp - server write, p50/p99 ms; "
        "lag99: event-loop lag p99 ms; cpu: cores; srv99: server lateness p99 ms",
        caption_justify="left",
    )
    for col in LEVEL_COLUMNS:
        table.add_column(col, justify="right")

    def row(lv: Any) -> None:
        verdict = "ok" if lv.passed else "[red]" + ",".join(lv.flags) + "[/red]"
        cells = (lv.offered_chunks_per_s, lv.achieved_chunks_per_s)
        table.add_row(
            str(lv.streams),
            *(fixed(c, 0) for c in cells),
            fixed(lv.ts_err_p50_ms, 3),
            fixed(lv.ts_err_p99_ms, 3),
            fixed(lv.loop_lag_p99_ms, 2),
            fixed(lv.client_cpu_share, 2),
            fixed(lv.server_lag_p99_ms, 2),
            verdict,
        )
        console.print(f"  {lv.streams} streams: {'ok' if lv.passed else ','.join(lv.flags)}")

    return table, row


@app.command("calibrate")
def calibrate_cmd(
    levels: Annotated[str, typer.Option(help="Stream counts to try, rising.")] = (
        "1,2,4,8,16,32,64,128,256"
    ),
    itl_ms: Annotated[float, typer.Option(help="Reference inter-token interval (ms).")] = 10.0,
    ttft_ms: Annotated[float, typer.Option(help="Reference time to first token (ms).")] = 20.0,
    tokens: Annotated[int, typer.Option(help="Output tokens per request.")] = 100,
    requests_per_stream: Annotated[int, typer.Option(help="Requests per stream per level.")] = 2,
    max_ts_err_ms: Annotated[
        float, typer.Option(help="Absolute p99 timestamp-error limit (ms).")
    ] = 1.0,
    out: Annotated[
        Path,
        typer.Option(
            help="Where to write the envelope (JSON); `scoville run --out runs` reads "
            "runs/scoville-calibration.json by default."
        ),
    ] = Path("runs") / "scoville-calibration.json",
) -> None:
    """Measure this client's capacity and timestamp error against a reference server with a
    known emission schedule, and print the envelope inside which results are trustworthy."""
    import asyncio

    stream_levels = _levels(levels)

    from scoville.client.selftest.calibrate import (
        Criteria,
        calibrate,
        reference_process,
        save_envelope,
    )

    table, row = _level_table()
    criteria = Criteria(ts_err_p99_ms=max_ts_err_ms)
    with reference_process(ttft_ms / 1e3, itl_ms / 1e3) as url:
        env = asyncio.run(
            calibrate(
                url,
                stream_levels,
                ttft_ms / 1e3,
                itl_ms / 1e3,
                tokens,
                requests_per_stream,
                criteria,
                on_level=row,
            )
        )
    console.print(table)
    save_envelope(env, out)
    floor = env.floor_ts_err_p99_ms
    console.print(
        f"[bold]envelope:[/bold] up to {env.max_streams} concurrent streams and "
        f"{env.max_chunks_per_s:,.0f} chunks/s per client process "
        f"(limited by: {env.limited_by}); timestamp floor p99 "
        f"{fixed(floor, 3)} ms. Written to {out}."
    )


@power_app.command("probe")
def power_probe(
    seconds: Annotated[float, typer.Option(help="How long to sample.")] = 2.0,
    rate_hz: Annotated[float, typer.Option(help="Samples per second.")] = 10.0,
    redfish_url: Annotated[
        str | None,
        typer.Option(help="BMC base URL; credentials from SCOVILLE_REDFISH_USER/_PASSWORD."),
    ] = None,
) -> None:
    """List the power sources usable here, sample them briefly and print mean power."""
    from scoville.telemetry.probe import probe_power

    probe = probe_power(seconds, rate_hz, redfish_url)
    for name, reason in probe.unavailable.items():
        console.print(f"[dim]{name}: unavailable: {reason}[/dim]")
    if not probe.devices:
        console.print("No power source is usable here; runs will report declared power only.")
        return
    table = Table(title=f"power over {seconds:g} s")
    for col in ("boundary", "device", "source", "samples", "mean W", "method", "valid"):
        table.add_column(col)
    for d in probe.devices:
        table.add_row(
            d.boundary,
            d.device,
            d.source,
            str(d.n_samples),
            fixed(d.mean_w, 1),
            d.method,
            "yes" if not d.flags else ",".join(d.flags),
        )
    console.print(table)
