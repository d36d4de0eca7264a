"""CLI for economics: `scoville cost RUNS... --tco FILE`, `scoville cost silicon` and
`scoville capacity`. Thin: parse, call scoville.analysis, print with rich (or JSON).
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

if TYPE_CHECKING:
    from rich.console import Console

    from scoville.analysis.tco import Economics, TaskCost


class _RunsByDefault(TyperGroup):
    """`scoville cost RUNS...` means `scoville cost runs RUNS...`; `cost silicon` stays."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["runs", *args]
        return super().parse_args(ctx, args)


app = typer.Typer()
cost_app = typer.Typer(
    cls=_RunsByDefault,
    no_args_is_help=True,
    help="What tokens and accelerators cost: `cost RUNS... --tco FILE`, `cost silicon`.",
)
app.add_typer(cost_app, name="cost")


def _console() -> Console:
    from rich.console import Console

    return Console()


def _money(v: float | None, d: int = 3) -> str:
    if v is None:
        return "-"
    sign = "-" if v < 0 else ""
    return sign + (f"${abs(v):,.0f}" if abs(v) >= 1000 else f"${abs(v):.{d}f}")


def _n(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


@cost_app.command("runs")
def cost_runs_cmd(
    paths: Annotated[list[Path], typer.Argument(help="Run directories or result files.")],
    tco: Annotated[Path, typer.Option("--tco", help="TCO file (YAML, scoville.tco/1).")],
    build: Annotated[
        list[str] | None,
        typer.Option(
            help="Build instead of buy: SYSTEM=CHIP takes SYSTEM's accelerator capex from "
            "`cost silicon --chip CHIP` (repeatable)."
        ),
    ] = None,
    volume: Annotated[int | None, typer.Option(help="Build volume for --build (NRE).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """$/accelerator-hour -> $/M tokens (total/input/output) at interactivity tiers, tokens
    and agents per MW, revenue and margin per GW, $ per qualified task."""
    from scoville.analysis.profile import load_rows_with_runs
    from scoville.analysis.rows import group_rows
    from scoville.analysis.tco import economics, load_tco, task_costs

    tco_file = _with_silicon(load_tco(tco), build or [], volume)
    out: list[dict[str, Any]] = []
    console = None if as_json else _console()
    for path in paths:
        groups = group_rows(load_rows_with_runs([path]))
        if not groups:
            from scoville.errors import UserError

            raise UserError(f"{path} holds no points to cost.")
        for key, rows in groups.items():
            for econ in economics(rows, key.system, tco_file):
                tasks = (
                    task_costs(path, rows, econ.usd_per_accelerator_hour,
                               tco_file.latency_slo_s, tco_file.quality_pass_rate)
                    if path.is_dir() else []
                )  # fmt: skip
                out.append(
                    {"label": key.label(), **asdict(econ), "tasks": [asdict(t) for t in tasks]}
                )
                if console is not None:
                    _print_economics(console, key.label(), econ, tasks)
    if as_json:
        typer.echo(json.dumps(out, indent=2, default=str))


def _with_silicon(tco_file: Any, build: list[str], volume: int | None) -> Any:
    """The TCO file with each built system's accelerator capex from the silicon model."""
    from scoville.analysis.silicon import load_silicon_catalogue
    from scoville.errors import UserError

    cat = load_silicon_catalogue()
    systems = dict(tco_file.systems)
    for spec in build:
        system, eq, chip = spec.partition("=")
        own, _ = tco_file.for_system(system)
        if not eq or own is None:
            raise UserError(
                f"--build {spec!r}: give SYSTEM=CHIP with SYSTEM costed under systems: in the "
                "TCO file (power, amortisation, opex); the chip's cost replaces its capex."
            )
        cost = cat.estimate(chip, volume)
        key = next(k for k in systems if k.lower() == system.lower())
        usd = cost.usd_per_good_accelerator
        note = f"accelerator capex ${usd:,.0f}: built ({chip}, silicon model)"
        systems[key] = own.model_copy(
            update={"accelerator_capex_usd": cost.usd_per_good_accelerator, "source": note}
        )
    return tco_file.model_copy(update={"systems": systems})


def _print_economics(console: Console, label: str, e: Economics, tasks: list[TaskCost]) -> None:
    from rich.table import Table

    t = Table(
        title=f"{label}: {e.basis} ${e.usd_per_accelerator_hour:.3f} per accelerator-hour",
        caption="; ".join(e.notes) or None,
    )
    cols = ("tok/s/user", "frontier", "tok/s/acc", "$/M total", "$/M input", "$/M output",
            "tok/s per MW", "agents per MW", "revenue $/GW-h", "margin $/GW-h")  # fmt: skip
    for c in cols:
        t.add_column(c, justify="right")
    for tc in e.tiers:
        t.add_row(
            f"{tc.tier_tok_s_user:g}",
            tc.status + (f" (>= {_n(tc.bound_tput_per_acc)})" if tc.bound_tput_per_acc else ""),
            _n(tc.tput_per_acc), _money(tc.usd_per_m_total),
            _money(tc.usd_per_m_input), _money(tc.usd_per_m_output), _n(tc.tokens_per_s_per_mw),
            _n(tc.agents_per_mw), _money(tc.revenue_usd_per_gw_hour),
            _money(tc.margin_usd_per_gw_hour),
        )  # fmt: skip
    console.print(t)
    if tasks:
        best = min(
            (x for x in tasks if x.usd_per_qualified_task is not None),
            key=lambda x: x.usd_per_qualified_task or 0.0,
            default=None,
        )
        if best is not None:
            rate = best.quality_pass_rate
            q = (
                f" x quality pass rate {rate:.3g}, {best.quality_source}"
                if rate is not None
                else "; quality not measured: tasks qualify on latency alone"
            )
            console.print(
                f"  cheapest qualified task: {_money(best.usd_per_qualified_task, 5)} at point "
                f"{best.point_id} ({_n(best.intvty_tok_s_user)} tok/s/user; "
                f"{best.n_qualified:g} of {best.n_tasks} tasks qualified{q})"
            )


@cost_app.command("silicon")
def cost_silicon_cmd(
    chip: Annotated[
        list[str] | None, typer.Option("--chip", help="Catalogue chip (repeatable); none = list.")
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override an input, e.g. defect_density_per_cm2=0.2."),
    ] = None,
    volume: Annotated[int | None, typer.Option(help="Units over which NRE is amortised.")] = None,
    spread: Annotated[float, typer.Option(help="Tornado: each input moved by +-spread.")] = 0.2,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """What a good accelerator (and a system) costs to build, with a tornado table."""
    from scoville.analysis.silicon import cost_of, load_silicon_catalogue, tornado
    from scoville.errors import UserError

    cat = load_silicon_catalogue()
    if not chip:
        typer.echo("chips in the silicon catalogue: " + ", ".join(cat.chips()))
        return
    if not 0 < spread < 1:
        raise UserError("--spread must be in (0, 1), e.g. 0.2 for +-20 %.")
    overrides: dict[str, str] = {}
    for s in set_ or []:
        key, eq, value = s.partition("=")
        if not eq or not key:
            raise UserError(f"--set {s!r} should look like FIELD=VALUE, e.g. wafer_usd=25000.")
        overrides[key.strip()] = value.strip()
    if volume is not None:
        overrides["volume"] = str(volume)
    docs = []
    for name in chip:
        x, notes = cat.inputs(name, overrides)
        cost = cost_of(name, x, notes)
        bars = tornado(name, x, spread)
        docs.append({**asdict(cost), "tornado": [asdict(b) for b in bars]})
        if not as_json:
            _print_silicon(_console(), cost, bars, spread)
    if as_json:
        typer.echo(json.dumps(docs, indent=2, default=str))


def _print_silicon(console: Console, c: Any, bars: list[Any], spread: float) -> None:
    from rich.markup import escape
    from rich.table import Table

    x = c.inputs
    t = Table(title=f"{c.chip}: cost to build (estimate)")
    t.add_column("step")
    t.add_column("value", justify="right")
    t.add_column("how")
    usable = x.wafer_diameter_mm - 2 * x.edge_exclusion_mm
    rows = [
        ("gross dies per wafer", f"{c.gross_dies_per_wafer}",
         f"{x.die_area_mm2:g} mm2 on {x.wafer_diameter_mm:g} mm ({usable:g} mm usable)"),
        ("die yield", f"{c.die_yield:.1%}",
         f"{x.yield_model}, D0 {x.defect_density_per_cm2:g}/cm2 x {x.die_area_mm2 / 100:g} cm2"),
        ("good die", _money(c.usd_per_good_die, 0), f"wafer ${x.wafer_usd:,.0f} / good dies"),
        ("HBM", _money(c.usd_hbm, 0), f"{x.hbm_gb:g} GB x ${x.hbm_usd_per_gb:g}/GB"),
        ("packaged (good)", _money(c.usd_per_packaged, 0),
         f"({x.dies} die + HBM + ${x.packaging_usd:,.0f} packaging) / yield {x.packaging_yield:g}"),
        ("NRE per unit", _money(c.usd_nre_per_unit, 0),
         f"${x.nre_usd:,.0f} / {x.volume:,} units"),
        ("good accelerator", _money(c.usd_per_good_accelerator, 0),
         f"+ test ${x.test_usd:,.0f} + board ${x.board_usd:,.0f} + NRE share"),
        ("system", _money(c.usd_per_system, 0),
         f"{x.accelerators_per_system} x (accelerator + ${x.system_share_usd:,.0f} share)"),
    ]  # fmt: skip
    for r in rows:
        t.add_row(*r)
    console.print(t)
    tor = Table(title=f"sensitivity: the {len(bars)} inputs that move it most (+-{spread:.0%})")
    for col in ("input", "low", "high", "$ at low", "$ at high", "swing"):
        tor.add_column(col, justify="right")
    for b in bars:
        money = (_money(v, 0) for v in (b.usd_at_low, b.usd_at_high, b.swing_usd))
        tor.add_row(b.field, f"{b.low_value:,.4g}", f"{b.high_value:,.4g}", *money)
    console.print(tor)
    for n in c.notes:
        console.print(f"[dim]{escape(n)}[/dim]")


@app.command("capacity")
def capacity_cmd(
    paths: Annotated[list[Path], typer.Argument(help="Run directories or result files.")],
    budget_mw: Annotated[float, typer.Option("--budget-mw", help="Facility power budget (MW).")],
    power_profile: Annotated[
        Path, typer.Option(help="Power profile YAML (TDP, shares, PUE, rack limits).")
    ],
    tier: Annotated[float, typer.Option(help="Interactivity tier (tok/s/user).")] = 50.0,
    accelerators_per_rack: Annotated[int | None, typer.Option(help="Rack slots.")] = None,
    rack_power_kw: Annotated[float | None, typer.Option(help="Power delivery per rack.")] = None,
    rack_cooling_kw: Annotated[float | None, typer.Option(help="Cooling per rack.")] = None,
    racks: Annotated[int | None, typer.Option(help="Racks the site has (floor space).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Accelerators and racks a power budget holds, tok/s at a tier, and what limits it."""
    from rich.table import Table

    from scoville.analysis.capacity import Site, capacity
    from scoville.analysis.profile import load_profile, load_rows_with_runs, profile_for
    from scoville.analysis.rows import group_rows
    from scoville.errors import UserError

    prof_file = load_profile(power_profile)
    results = []
    for key, rows in group_rows(load_rows_with_runs(paths)).items():
        entry, prof = prof_file.entry(key.system), profile_for(prof_file, key.system)
        if entry is None or prof is None:
            raise UserError(f"The power profile has no entry for {key.system!r}; add one.")
        site = Site(
            budget_mw,
            accelerators_per_rack or entry.accelerators_per_rack or 8,
            rack_power_kw or entry.rack_power_kw,
            rack_cooling_kw or entry.rack_cooling_kw,
            racks,
        )
        results.append((key.label(), capacity(rows, key.system, prof, site, tier)))
    if as_json:
        docs = [{"label": lbl, **asdict(c)} for lbl, c in results]
        typer.echo(json.dumps(docs, indent=2))
        return
    t = Table(title=f"capacity of {budget_mw:g} MW at {tier:g} tok/s/user")
    cols = ("configuration", "facility W/acc", "accelerators", "racks (per rack)", "limit",
            "tok/s/acc", "tok/s", "users")  # fmt: skip
    for col in cols:
        t.add_column(col, justify="right")
    for lbl, c in results:
        t.add_row(
            lbl, f"{c.facility_w_per_accelerator:,.0f}", f"{c.accelerators:,}",
            f"{c.racks:,} ({c.per_rack}, {c.per_rack_limit})", c.limit,
            _n(c.tput_per_acc) if c.tput_per_acc else c.tier_status, _n(c.tokens_per_s),
            _n(c.users_at_tier),
        )  # fmt: skip
    console = _console()
    console.print(t)
    for lbl, c in results:
        console.print(f"[dim]{lbl}: facility W = {c.facility_how}[/dim]")
