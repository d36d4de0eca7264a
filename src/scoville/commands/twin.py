"""CLI for the digital twin: `scoville simulate` (predicted frontier, bundle) and
`scoville twin serve` (the HTTP twin on 127.0.0.1). Thin: parse, call scoville.twin, print.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from scoville.commands._options import spec_option
from scoville.commands._power import power_table
from scoville.commands.twin_calibration import deployment_lines, fit_cmd, validate_cmd
from scoville.errors import UserError
from scoville.spec.lists import parse_list
from scoville.twin.options import TwinOptions, option_help

app = typer.Typer(add_completion=False)
twin_app = typer.Typer(add_completion=False, help="The digital twin: serve it over HTTP.")
app.add_typer(twin_app, name="twin")
twin_app.command("validate")(validate_cmd)
twin_app.command("fit")(fit_cmd)
console = Console()


def _opt(name: str, flag: str | None = None) -> Any:
    """A typer option whose help is the `TwinOptions` field's description."""
    return typer.Option(flag or f"--{name.replace('_', '-')}", help=option_help(name))


Hw = Annotated[str, _opt("hardware")]
Model = Annotated[str, _opt("model")]
Tp = Annotated[int, _opt("tp")]
Ep = Annotated[int, _opt("ep")]
Prec = Annotated[str, _opt("precision")]
Kv = Annotated[str, _opt("kv")]
Reps = Annotated[int, _opt("replicas")]
Disagg = Annotated[str | None, _opt("disagg")]
Cat = Annotated[list[Path] | None, _opt("catalogue")]
Framework = Annotated[str, _opt("framework")]
DpAttention = Annotated[bool, _opt("dp_attention", "--dp-attention/--no-dp-attention")]
Pp = Annotated[int, _opt("pp")]
Mtp = Annotated[int, _opt("mtp")]
Kernels = Annotated[str, _opt("kernels")]
SoftwareDate = Annotated[str | None, _opt("software_date")]
# Shape and load flags are the spec's (help from its field descriptions; defaults: the twin's
# matrix in spec/defaults.py).
Isl = Annotated[int | None, spec_option("isl")]
Osl = Annotated[int | None, spec_option("osl")]
RangeRatio = Annotated[float | None, spec_option("range_ratio")]
Concurrency = Annotated[str | None, spec_option("concurrency")]
Requests = Annotated[int | None, spec_option("requests_per_point")]
Warmup = Annotated[int | None, spec_option("warmup")]
PowerProfile = Annotated[Path | None, spec_option("power_profile")]
_D = TwinOptions.model_fields


def _conc(text: str) -> list[int]:
    return parse_list(text, "--concurrency", int, minimum=1, example="1,2,4")


def _options(catalogue: list[Path] | None, **values: Any) -> TwinOptions:
    return TwinOptions.build(catalogue=tuple(str(c) for c in catalogue or ()), **values)


# Two-line headers: the table fits 80 columns.
_COLUMNS = (
    ("conc", lambda r: f"{r['level']:g}"),
    ("tok/s\n/GPU", lambda r: f"{r['tput_per_gpu']:,.0f}"),
    ("out tok/s\n/GPU", lambda r: f"{r['output_tput_per_gpu']:,.0f}"),
    ("tok/s\n/user", lambda r: f"{r['median_intvty']:,.1f}"),
    ("TTFT\np50 ms", lambda r: f"{r['median_ttft'] * 1e3:,.1f}"),
    ("TPOT\np50 ms", lambda r: f"{r['median_tpot'] * 1e3:,.2f}"),
    ("bound\nby", lambda r: str(r["bottleneck"])),
    ("KV\nmax", lambda r: f"{r['kv_occupancy_max']:.0%}"),
    ("pre-\nempt", lambda r: str(r["preemptions"])),
)


def _frontier_table(title: str, rows: list[dict[str, Any]]) -> Table:
    table = Table(title=title)
    for col, _fmt in _COLUMNS:
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(*(_cell(fmt, r) for _col, fmt in _COLUMNS))
    return table


def _cell(fmt: Callable[[dict[str, Any]], str], row: dict[str, Any]) -> str:
    try:
        return fmt(row)
    except (KeyError, TypeError):  # a point with no successful request has no latencies
        return "-"


@app.command("simulate")
def simulate_cmd(
    hardware: Hw = _D["hardware"].default,
    model: Model = _D["model"].default,
    tp: Tp = _D["tp"].default,
    ep: Ep = _D["ep"].default,
    precision: Prec = _D["precision"].default,
    kv: Kv = _D["kv"].default,
    replicas: Reps = _D["replicas"].default,
    disagg: Disagg = _D["disagg"].default,
    framework: Framework = _D["framework"].default,
    dp_attention: DpAttention = _D["dp_attention"].default,
    pp: Pp = _D["pp"].default,
    mtp: Mtp = _D["mtp"].default,
    kernels: Kernels = _D["kernels"].default,
    software_date: SoftwareDate = None,
    isl: Isl = None,
    osl: Osl = None,
    range_ratio: RangeRatio = None,
    concurrency: Concurrency = None,
    requests_per_point: Requests = None,
    warmup: Warmup = None,
    power_profile: PowerProfile = None,
    catalogue: Cat = None,
    out: Annotated[Path, typer.Option(help="Results directory.")] = Path("runs"),
    no_bundle: Annotated[bool, typer.Option("--no-bundle", help="Print only.")] = False,
    records: Annotated[
        bool,
        typer.Option(
            "--records",
            help="Also write records.jsonl (every token; about 95 MB at 8k/1k to c256); "
            "`compare --ci` resamples it.",
        ),
    ] = False,
) -> None:
    """Predict the throughput/interactivity frontier of HARDWARE serving MODEL: `scoville run`
    on the twin with its fast executor."""
    import tempfile
    import time

    from scoville.pipeline import run_benchmark
    from scoville.twin.simulate import twin_spec

    t0 = time.perf_counter()
    opts = _options(
        catalogue,
        hardware=hardware,
        model=model,
        tp=tp,
        ep=ep,
        precision=precision,
        kv=kv,
        replicas=replicas,
        disagg=disagg,
        framework=framework,
        dp_attention=dp_attention,
        pp=pp,
        mtp=mtp,
        kernels=kernels,
        software_date=software_date,
        executor="fast",
    )
    cfg = opts.config()
    spec = twin_spec(
        opts,
        cfg,
        shape={"isl_tokens": isl, "osl_tokens": osl, "range_ratio": range_ratio},
        load={
            "concurrency": _conc(concurrency) if concurrency else None,
            "requests_per_point": requests_per_point,
            "warmup_requests": warmup,
        },
        power_profile=power_profile,
    )
    with tempfile.TemporaryDirectory(prefix="scoville-simulate-") as tmp:
        result = run_benchmark(spec, Path(tmp) if no_bundle else out, keep_records=records)
    wall_s = time.perf_counter() - t0
    shape = spec.shape
    title = (
        f"predicted: {opts.url()}  ISL {shape.isl_tokens} / OSL {shape.osl_tokens}  "
        f"({cfg.n_accelerators} accelerator(s))"
    )
    console.print(_frontier_table(title, result.summary["points"]))
    if (power := power_table(result.summary["points"])) is not None:
        console.print(power)
    hw = cfg.hardware
    console.print(f"hardware source: {escape(hw.source)}")
    for field, why in hw.assumed.items():
        console.print(f"[yellow]assumed[/yellow] {field}: {escape(why)}")
    for line in deployment_lines(cfg):
        console.print(line)
    if not no_bundle:
        run_dir = result.run_dir
        console.print(f"bundle: {run_dir}  (report: {run_dir / 'report.html'})")
    console.print(f"done in {wall_s:.2f} s wall (simulation, summary and files)")


@twin_app.command("serve")
def serve_cmd(
    hardware: Hw = _D["hardware"].default,
    model: Model = _D["model"].default,
    tp: Tp = _D["tp"].default,
    ep: Ep = _D["ep"].default,
    precision: Prec = _D["precision"].default,
    kv: Kv = _D["kv"].default,
    replicas: Reps = _D["replicas"].default,
    disagg: Disagg = _D["disagg"].default,
    speedup: Annotated[
        float, typer.Option(help="Time compression: K x faster than simulated.")
    ] = 1.0,
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0 = any free port).")] = 8000,
    fault: Annotated[
        str, typer.Option(help="none, reset, 5xx, 429, stall, malformed, slow.")
    ] = "none",
    fault_every: Annotated[int, typer.Option(help="Inject on every N-th request.")] = 1,
    catalogue: Cat = None,
) -> None:
    """Serve the twin as an OpenAI-compatible streaming endpoint until Ctrl-C."""
    import asyncio

    from scoville.twin.http import TwinHttpServer
    from scoville.twin.sse import Faults

    if speedup <= 0:
        raise UserError("--speedup must be > 0 (e.g. 10 serves ten times faster than simulated).")
    opts = _options(
        catalogue,
        hardware=hardware,
        model=model,
        tp=tp,
        ep=ep,
        precision=precision,
        kv=kv,
        replicas=replicas,
        disagg=disagg,
    )
    cfg = opts.config()
    try:
        faults = Faults.from_json({"mode": fault, "every_n": fault_every})
    except ValueError as e:
        raise UserError(f"Bad --fault/--fault-every: {e}.") from None

    async def main() -> None:
        async with TwinHttpServer(cfg, speedup=speedup, port=port, faults=faults) as base:
            console.print(
                f"{opts.url()} serving at {base}/v1 (metrics {base}/metrics, faults "
                f"{base}/admin/faults); Ctrl-C to stop"
            )
            await asyncio.Event().wait()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        console.print("stopped")


@twin_app.command("explain")
def explain_cmd(
    model: Model = "gpt-oss-120b",
    intvty: Annotated[float, typer.Option(help="Claimed tokens/s/user at batch 1.")] = 1459.0,
    context: Annotated[int, typer.Option(help="Context tokens while decoding.")] = 8704,
    hardware: Hw = "Jalapeno-B0",
    framework: Annotated[
        str, typer.Option(help="Serving-framework profile for the twin's overheads.")
    ] = "vllm",
    catalogue: Cat = None,
) -> None:
    """What a claimed single-user speed implies (HBM bandwidth and FLOP/s per GPU, by TP),
    which of the twin's overheads decide single-user speed, and a verdict."""
    from scoville.twin.catalogue import load_catalogue
    from scoville.twin.profiles import apply_profile, hardware_family, load_profiles
    from scoville.twin.verdict import explain, judge

    if intvty <= 0 or context < 1:
        raise UserError("--intvty must be > 0 and --context >= 1.")
    cat = load_catalogue(catalogue or ())
    hw, m = cat.get_hardware(hardware), cat.get_model(model)
    prof = apply_profile(
        load_profiles(), framework, hw.vendor, family=hardware_family(hw.name)
    ).efficiency
    rows = explain(m, intvty, context, hw, efficiency=prof)
    table = Table(
        title=f"{intvty:g} tok/s/user on {m.name} (context {context}): TPOT "
        f"{1e3 / intvty:.3f} ms; vs {hw.name} ({hw.hbm_tb_s} TB/s)"
    )
    cols = ("TP", "HBM TB/s per GPU", "of peak", "TFLOP/s per GPU", "twin TPOT ms")
    for col in (*cols, "streaming ms", "overheads ms", "collectives ms"):
        table.add_column(col, justify="right")
    for r in rows:
        frac = f"{r.hbm_fraction:.0%}" if r.hbm_fraction is not None else "-"
        twin = f"{r.twin_tpot_s * 1e3:.3f}" if r.twin_tpot_s is not None else "-"
        over = r.twin_step_overhead_s + r.twin_layer_overhead_s
        table.add_row(
            str(r.tp),
            f"{r.hbm_tb_s:.2f}",
            frac,
            f"{r.tflops:.1f}",
            twin,
            f"{r.twin_work_s * 1e3:.3f}",
            f"{over * 1e3:.3f}",
            f"{r.twin_comm_s * 1e3:.3f}",
        )
    console.print(table)
    v = judge(rows)
    console.print(f"what decides single-user speed in the twin ({framework} profile): {v.deciding}")
    console.print(f"verdict: {v.line}")
