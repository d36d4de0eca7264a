"""The TCO file and the economics of a configuration at named interactivity tiers.

A TCO file (YAML, `scoville.tco/1`) states per system what an accelerator costs to own and run
(`cost.TcoInputs`) or to rent (`cost.PriceTier`), the interactivity tiers to read, a token
price and a quality pass rate. `economics` reads each tier off the monotone throughput
frontier (never extrapolated) and derives $/M tokens, tokens and agents per MW, revenue and
margin per GW.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from scoville.analysis.cost import PriceTier, TcoInputs, usd_per_million_tokens
from scoville.analysis.frontier import frontier_of, read_at
from scoville.analysis.profile import read_yaml, validation_message
from scoville.analysis.rows import Row
from scoville.errors import DataError, UserError

TCO_SCHEMA = "scoville.tco/1"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SystemTco(_Frozen):
    """What one accelerator of a system costs (USD), per accelerator."""

    accelerator_capex_usd: float = Field(ge=0, description="Purchase price of one accelerator.")
    system_capex_usd: float = Field(ge=0, description="Host, chassis and rack share.")
    network_capex_usd: float = Field(ge=0, description="NICs, switches and optics share.")
    amortisation_years: float = Field(gt=0, description="Depreciation period (years).")
    power_w: float = Field(gt=0, description="W per accelerator at the boundary paid for.")
    power_boundary: str = Field("node-wall", description="What power_w covers.")
    power_price_usd_per_kwh: float = Field(ge=0)
    pue: float = Field(1.0, ge=1, description="Facility PUE (>= 1).")
    utilisation: float = Field(1.0, gt=0, le=1, description="Paid fraction of hours.")
    operations_usd_per_year: float = Field(0.0, ge=0, description="Staff, space, software.")
    source: str = ""

    def inputs(self) -> TcoInputs:
        return TcoInputs(
            self.accelerator_capex_usd,
            self.system_capex_usd,
            self.network_capex_usd,
            self.amortisation_years,
            self.power_w,
            self.power_price_usd_per_kwh,
            self.pue,
            self.utilisation,
            self.operations_usd_per_year,
            self.source,
        )


class Price(_Frozen):
    name: str
    usd_per_accelerator_hour: float = Field(gt=0)
    source: str = ""


class TcoFile(_Frozen):
    schema_: str = Field(TCO_SCHEMA, alias="schema")
    tiers_tok_s_user: tuple[float, ...] = Field((20.0, 50.0, 100.0), min_length=1)
    price_usd_per_m_output_tokens: float | None = Field(
        None, gt=0, description="What a buyer pays per million output tokens (revenue)."
    )
    quality_pass_rate: float | None = Field(
        None, gt=0, le=1, description="Share of tasks that pass the quality check, when measured."
    )
    latency_slo_s: float | None = Field(None, gt=0, description="E2E SLO for a qualified task.")
    systems: dict[str, SystemTco] = Field(default_factory=dict)
    prices: dict[str, tuple[Price, ...]] = Field(
        default_factory=dict, description="Market prices per system instead of (or with) TCO."
    )

    def for_system(self, system: str) -> tuple[SystemTco | None, tuple[Price, ...]]:
        want = system.strip().lower()
        tco = next((v for k, v in self.systems.items() if k.lower() == want), None)
        prices = next((v for k, v in self.prices.items() if k.lower() == want), ())
        return tco, prices


def load_tco(path: Path) -> TcoFile:
    """A TCO file; a missing or negative field or a PUE below 1 is a DataError naming it."""
    doc = read_yaml(path, "TCO file")
    try:
        tco = TcoFile.model_validate(doc)
    except ValidationError as e:
        raise DataError(validation_message(e, f"TCO file {path}")) from e
    if any(t <= 0 for t in tco.tiers_tok_s_user):
        raise DataError(f"TCO file {path}: tiers_tok_s_user must all be > 0.")
    return tco


@dataclass(frozen=True, slots=True)
class TierCost:
    """Economics of one configuration at one interactivity tier (per accelerator)."""

    tier_tok_s_user: float
    status: str  # the frontier reading's status; numbers only when measured/interpolated
    tput_per_acc: float | None  # total tok/s per accelerator at the tier
    output_tput_per_acc: float | None
    input_tput_per_acc: float | None
    usd_per_m_total: float | None
    usd_per_m_input: float | None
    usd_per_m_output: float | None
    tokens_per_s_per_mw: float | None  # total tokens, facility power
    agents_per_mw: float | None  # concurrent users served at the tier per MW
    revenue_usd_per_gw_hour: float | None
    margin_usd_per_gw_hour: float | None
    bound_tput_per_acc: float | None = None  # below the range: the first point's (a floor)


@dataclass(frozen=True, slots=True)
class Economics:
    system: str
    basis: str  # "TCO" or the price tier's name
    usd_per_accelerator_hour: float
    facility_w_per_accelerator: float | None  # power_w x PUE; None for a bare price tier
    tiers: tuple[TierCost, ...]
    notes: tuple[str, ...] = ()


def _read(rows: Sequence[Row], y: str, tier: float) -> tuple[str, float | None, float | None]:
    r = read_at(frontier_of(rows, "median_intvty", y), tier)
    return r.status, r.value, r.bound


def tier_cost(
    rows: Sequence[Row],
    tier: float,
    usd_per_acc_hour: float,
    facility_w: float | None,
    price_out: float | None,
) -> TierCost:
    """One tier: throughputs read off the frontier at `tier` tok/s/user, then the money.

    tokens/s per MW = tok/s/acc x 1e6 / facility W per accelerator; agents per MW = output
    tok/s per MW / tier; revenue per GW-hour = output tok/s/acc x accelerators per GW x 3600
    / 1e6 x $/M output; margin = revenue - accelerators per GW x $/accelerator-hour.
    """
    status, total, bound = _read(rows, "tput_per_gpu", tier)
    out = _read(rows, "output_tput_per_gpu", tier)[1]
    inp = _read(rows, "input_tput_per_gpu", tier)[1]

    def usd(v: float | None) -> float | None:
        return usd_per_million_tokens(usd_per_acc_hour, v) if v and v > 0 else None

    per_mw = agents = revenue = margin = None
    if total and facility_w:
        per_mw = total * 1e6 / facility_w
        agents = (out or 0) * 1e6 / facility_w / tier if out else None
        if out and price_out is not None:
            acc_per_gw = 1e9 / facility_w
            revenue = out * acc_per_gw * 3600 / 1e6 * price_out
            margin = revenue - acc_per_gw * usd_per_acc_hour
    return TierCost(
        tier, status, total, out, inp, usd(total), usd(inp), usd(out), per_mw, agents,
        revenue, margin, bound,
    )  # fmt: skip


def economics(rows: Sequence[Row], system: str, tco: TcoFile) -> list[Economics]:
    """One `Economics` per cost basis stated for `system` (its TCO, then each price tier)."""
    own, prices = tco.for_system(system)
    if own is None and not prices:
        known = ", ".join(sorted({*tco.systems, *tco.prices})) or "(none)"
        raise UserError(
            f"The TCO file states no costs for {system!r} (it has: {known}). Add "
            f"systems.{system} (capex, amortisation, power) or prices.{system}."
        )
    bases: list[tuple[str, float, float | None, tuple[str, ...]]] = []
    if own is not None:
        inp = own.inputs()
        note = (
            f"capex ${inp.capex_usd_per_hour():.3f}/h + energy ${inp.energy_usd_per_hour():.3f}/h "
            f"({own.power_w:g} W {own.power_boundary} x PUE {own.pue:g}) + operations "
            f"${own.operations_usd_per_year / 8760:.3f}/h, / utilisation {own.utilisation:g}"
        )
        own_notes = (note, own.source) if own.source else (note,)
        bases.append(("TCO", inp.usd_per_accelerator_hour(), own.power_w * own.pue, own_notes))
    facility = own.power_w * own.pue if own else None
    for p in prices:
        tier = PriceTier(p.name, p.usd_per_accelerator_hour, p.source)
        bases.append((tier.name, tier.usd_per_accelerator_hour, facility, (tier.source,)))
    out = []
    for name, usd_h, fac_w, notes in bases:
        tiers = tuple(
            tier_cost(rows, t, usd_h, fac_w, tco.price_usd_per_m_output_tokens)
            for t in tco.tiers_tok_s_user
        )
        out.append(Economics(system, name, usd_h, fac_w, tiers, tuple(n for n in notes if n)))
    return out


def tco_prices(path: Path, rows: Sequence[Row]) -> dict[str, float]:
    """$ per accelerator-hour at TCO for every system in `rows` the TCO file costs."""
    tco = load_tco(path)
    out: dict[str, float] = {}
    for system in {str(r.get("system", "")) for r in rows}:
        own, _ = tco.for_system(system)
        if own is not None:
            out[system] = own.inputs().usd_per_accelerator_hour()
    return out


@dataclass(frozen=True, slots=True)
class TaskCost:
    """The cost of one measured point's tasks (requests): everything in its window is paid."""

    point_id: str
    intvty_tok_s_user: float | None
    n_tasks: int
    n_qualified: float  # met the SLO (x the quality pass rate, an expected count, when given)
    usd_per_task: float | None
    usd_per_qualified_task: float | None
    quality_pass_rate: float | None = None  # the rate applied (None: quality not measured)
    quality_source: str = "not measured"  # "measured (quality.json)", "declared (TCO file)"


MEASURED, DECLARED, NOT_MEASURED = "measured (quality.json)", "declared (TCO file)", "not measured"


def pass_rate_of(row: Row, declared: float | None) -> tuple[float | None, str]:
    """The quality pass rate a point's tasks are scaled by, and where it came from: the run's
    own quality pass (the row's `quality_pass_rate`) over a rate declared in the TCO file;
    neither: not measured (tasks qualify on latency alone, and it is said so)."""
    measured = row.get("quality_pass_rate")
    if isinstance(measured, (int, float)) and not isinstance(measured, bool):
        return float(measured), MEASURED
    if declared is not None:
        return declared, DECLARED
    return None, NOT_MEASURED


def task_costs(
    run_dir: Path,
    rows: Sequence[Row],
    usd_per_acc_hour: float,
    latency_slo_s: float | None,
    quality_pass_rate: float | None,
) -> list[TaskCost]:
    """$/qualified task per point of a run with records.jsonl (`cost.cost_per_qualified_task`):
    a task qualifies when it finished within `latency_slo_s`; a quality pass rate p (the
    run's measured one, else `quality_pass_rate` from the TCO file; per task unknown) scales
    the qualified count by p (`pass_rate_of`)."""
    from scoville.analysis.cost import cost_per_qualified_task, outcomes_from_records
    from scoville.records.sink import read_records

    path = run_dir / "records.jsonl"
    if not path.exists():
        return []
    records, windows = read_records(path)
    by_row = {str(r.get("point_id")): r for r in rows}
    out = []
    for w in windows:
        row = by_row.get(w.point_id)
        if row is None or row.get("valid") is False or w.end_ns <= w.start_ns:
            continue
        mine = [r for r in records if r.point_id == w.point_id]
        n_acc = int(row.get("n_accelerators") or 1)
        q = cost_per_qualified_task(
            outcomes_from_records(mine), usd_per_acc_hour, n_acc,
            (w.end_ns - w.start_ns) / 1e9, latency_slo_s, require_quality=False,
        )  # fmt: skip
        rate, source = pass_rate_of(row, quality_pass_rate)
        qualified = q.n_qualified * (1.0 if rate is None else rate)
        per_q = q.total_usd / qualified if qualified else None
        intvty = row.get("median_intvty")
        x = float(intvty) if isinstance(intvty, (int, float)) else None
        out.append(
            TaskCost(w.point_id, x, q.n_tasks, qualified, q.usd_per_task, per_q, rate, source)
        )
    return out
