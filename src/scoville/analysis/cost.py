"""Economics: $ per accelerator-hour (a TCO model or a price tier), $ per million tokens and
the cost per qualified task.

Formulas (all per accelerator):
  TCO $/h = [(accelerator + system + network capex) / (life_years x 8760)
             + W/1000 x PUE x $/kWh + operations $/yr / 8760] / utilisation
  $/M tokens = $/h / (tokens/s x 3600 / 1e6)            (InferenceX's formula)
  $/qualified task = window cost of all accelerators / tasks that met the SLO and quality
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from scoville.analysis.rows import Row, num
from scoville.records.model import RequestRecord

HOURS_PER_YEAR = 8760.0


@dataclass(frozen=True, slots=True)
class TcoInputs:
    """Documented TCO inputs, per accelerator. `power_w` is at the boundary you pay for
    (node wall per accelerator is the honest choice; PUE is applied on top)."""

    accelerator_capex_usd: float
    system_capex_usd: float  # host, chassis, rack share
    network_capex_usd: float  # NICs, switches, optics share
    depreciation_years: float
    power_w: float
    power_price_usd_per_kwh: float
    pue: float = 1.0
    utilisation: float = 1.0  # fraction of hours doing paid work, (0, 1]
    operations_usd_per_year: float = 0.0  # staff, maintenance, space, software
    source: str = ""

    def __post_init__(self) -> None:
        if not 0 < self.utilisation <= 1:
            raise ValueError("utilisation must be in (0, 1]")
        if self.depreciation_years <= 0 or self.pue < 1:
            raise ValueError("depreciation_years must be > 0 and pue >= 1")

    def capex_usd_per_hour(self) -> float:
        capex = self.accelerator_capex_usd + self.system_capex_usd + self.network_capex_usd
        return capex / (self.depreciation_years * HOURS_PER_YEAR)

    def energy_usd_per_hour(self) -> float:
        return self.power_w / 1000.0 * self.pue * self.power_price_usd_per_kwh

    def usd_per_accelerator_hour(self) -> float:
        """Cost of one *utilised* accelerator-hour (idle hours are paid by the busy ones)."""
        hourly = (
            self.capex_usd_per_hour()
            + self.energy_usd_per_hour()
            + self.operations_usd_per_year / HOURS_PER_YEAR
        )
        return hourly / self.utilisation


@dataclass(frozen=True, slots=True)
class PriceTier:
    """A market price per accelerator-hour, e.g. hyperscaler / neocloud / rental."""

    name: str
    usd_per_accelerator_hour: float
    source: str = ""


def usd_per_million_tokens(usd_per_accelerator_hour: float, tokens_per_s_per_acc: float) -> float:
    """$ / (tokens/s/accelerator x 3600 / 1e6): the InferenceX cost formula."""
    if tokens_per_s_per_acc <= 0:
        raise ValueError("throughput must be > 0")
    return usd_per_accelerator_hour / (tokens_per_s_per_acc * 3600.0 / 1e6)


@dataclass(frozen=True, slots=True)
class TokenCosts:
    total_usd_per_m: float | None
    input_usd_per_m: float | None
    output_usd_per_m: float | None


def row_token_costs(row: Row, usd_per_accelerator_hour: float) -> TokenCosts:
    """$/M total, input and output tokens for one point ROW (None where throughput is 0/absent).

    Each divides the whole accelerator-hour by one token kind, as InferenceX does: they are
    alternative views of the same cost, not shares of it."""

    def one(key: str) -> float | None:
        v = num(row, key)
        return usd_per_million_tokens(usd_per_accelerator_hour, v) if v and v > 0 else None

    return TokenCosts(one("tput_per_gpu"), one("input_tput_per_gpu"), one("output_tput_per_gpu"))


@dataclass(frozen=True, slots=True)
class TaskOutcome:
    """One task (a request or an agentic session): did it finish, how long, was it right."""

    ok: bool
    latency_s: float | None
    quality_ok: bool | None = None  # None: not judged


@dataclass(frozen=True, slots=True)
class QualifiedCost:
    n_tasks: int
    n_qualified: int
    n_failed: int
    n_too_slow: int
    n_wrong: int
    total_usd: float
    usd_per_task: float | None
    usd_per_qualified_task: float | None


def cost_per_qualified_task(
    outcomes: Iterable[TaskOutcome],
    usd_per_accelerator_hour: float,
    n_accelerators: int,
    window_s: float,
    latency_slo_s: float | None,
    require_quality: bool = True,
) -> QualifiedCost:
    """Everything run in the window is paid for; only tasks that finished, met the latency SLO
    and (when `require_quality`) passed the quality check count. An unjudged task does not
    count when quality is required."""
    total_usd = usd_per_accelerator_hour * n_accelerators * window_s / 3600.0
    n = failed = slow = wrong = 0
    for o in outcomes:
        n += 1
        if not o.ok:
            failed += 1
        elif latency_slo_s is not None and (o.latency_s is None or o.latency_s > latency_slo_s):
            slow += 1
        elif require_quality and o.quality_ok is not True:
            wrong += 1
    qualified = n - failed - slow - wrong
    return QualifiedCost(
        n,
        qualified,
        failed,
        slow,
        wrong,
        total_usd,
        total_usd / n if n else None,
        total_usd / qualified if qualified else None,
    )


def outcomes_from_records(
    records: Iterable[RequestRecord], quality: Mapping[str, bool] | None = None
) -> list[TaskOutcome]:
    """Per-request outcomes (latency = E2E seconds); quality looked up by request_id."""
    out = []
    for r in records:
        if r.phase != "measure":
            continue
        lat = (r.end_ns - r.start_ns) / 1e9 if r.ok else None
        out.append(TaskOutcome(r.ok, lat, None if quality is None else quality.get(r.request_id)))
    return out
