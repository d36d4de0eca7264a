"""The audit's result types and its verdict rules, in one place.

Plain frozen dataclasses produced by `audit.py` and rendered by the CLI (rich or JSON) and the
report. `RULES` is the written definition of each verdict (also in docs/ANALYSIS.md).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from scoville.analysis.power import RatioUnderBoundary

Verdict = Literal["reproduced", "inconsistent", "not comparable", "unverifiable"]

RULES = (
    "inconsistent: the stated ratio does not follow from the stated numbers (it differs from "
    "the recomputed ratio by more than half a unit in its last written digit), the unit "
    "contradicts the metric, or a run contradicts a stated value beyond tolerance_rel.",
    "not comparable: the arithmetic holds but a condition stated for both sides differs "
    "(model, precision, ISL/OSL, speculative decoding, disaggregation, power boundary, "
    "percentile, quality or latency target), or a condition the metric needs is missing "
    "(model, ISL/OSL; power boundary and denominator for per-kW metrics). With --strict, "
    "a condition left unstated on either side also makes the claim not comparable.",
    "unverifiable: nothing can be checked: the numbers behind the ratio are not stated (or "
    "no ratio is stated) and no run of both sides is given.",
    "reproduced: the stated ratio follows from the stated numbers ('arithmetic'), or runs of "
    "both sides reproduce the stated values within tolerance_rel ('runs'); unstated "
    "conditions are listed as caveats.",
    "ranges: a headline range is inconsistent when its low or high end does not round to the "
    "smallest/largest member ratio, unverifiable when a member ratio can only be taken as "
    "stated, reproduced otherwise.",
)

CONDITIONS = (
    "model",
    "precision",
    "isl_tokens",
    "osl_tokens",
    "spec_decode",
    "disagg",
    "percentile",
    "quality_target",
    "latency_target",
)
PER_KW_METRICS = ("peak_tput_per_kw", "tput_per_kw_at_intvty")


@dataclass(frozen=True, slots=True)
class Condition:
    field: str
    system: str | None
    baseline: str | None
    status: Literal["same", "differs", "unstated", "missing", "informational"]


@dataclass(frozen=True, slots=True)
class RunCheck:
    side: str
    stated: float | None
    measured: float | None
    status: Literal["agrees", "contradicts", "measured", "no data"]  # measured: none stated


@dataclass(frozen=True, slots=True)
class ClaimAudit:
    claim_id: str
    metric: str
    statement: str
    system: str
    baseline: str
    unit: str
    system_value: float | None
    baseline_value: float | None
    stated_ratio: float | None
    recomputed_ratio: float | None
    tolerance: float | None
    conditions: tuple[Condition, ...]
    boundary: tuple[RatioUnderBoundary, ...]
    runs: tuple[RunCheck, ...]
    findings: tuple[str, ...]
    verdict: Verdict
    basis: str  # "arithmetic", "runs" or ""
    sources: tuple[str, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class RangeAudit:
    range_id: str
    statement: str
    stated_min: float
    stated_max: float
    members: tuple[
        tuple[str, float | None, str], ...
    ]  # (claim id, ratio, "recomputed"|"stated"|"none")
    low: float | None
    high: float | None
    findings: tuple[str, ...]
    verdict: Verdict


@dataclass(frozen=True, slots=True)
class AuditReport:
    title: str
    strict: bool
    claims: tuple[ClaimAudit, ...]
    ranges: tuple[RangeAudit, ...]
    rules: tuple[str, ...] = RULES

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
