"""The audit's result types and its verdict rules, in one place.

Plain frozen dataclasses produced by `audit.py` and rendered by the CLI (rich or JSON) and the
report. `RULES` is the written definition of each verdict (also in docs/ANALYSIS.md).
"""

from __future__ import annotations

import html
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from scoville.analysis.power import RatioUnderBoundary

Verdict = Literal["reproduced", "inconsistent", "not comparable", "unverifiable"]

RULES = (
    "inconsistent: the stated ratio does not follow from the stated numbers (it differs from "
    "the recomputed ratio by more than half a unit in its last written digit), the unit "
    "contradicts the metric, or a run contradicts a stated value beyond tolerance_rel.",
    "not comparable: the arithmetic holds but a condition stated for both sides differs "
    "(model, weights revision, precision class without a quality-equivalence verdict, "
    "ISL/OSL, range ratio, speculative decoding without a declared acceptance length, "
    "disaggregation, power boundary, token basis, percentile, quality or latency target), "
    "a side whose quality status is 'not qualified', "
    "or a condition the metric needs is missing (model, ISL/OSL; power boundary and "
    "denominator for per-kW metrics). With --strict, "
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
    status: Literal["same", "differs", "unstated", "missing", "informational", "covered"]
    reason: str = ""


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
    evidence: str = "vendor-stated"  # the weaker of the sides' evidence tiers


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


def audit_html(report: AuditReport) -> str:
    """The audit as self-contained, escaped HTML (a claims table, details, ranges, the rules)."""
    esc = html.escape

    def ratio(v: float | None) -> str:
        return f"{v:.4g}x" if v is not None else "-"

    rows = "".join(
        f'<tr class="verdict-{a.verdict.replace(" ", "-")}"><td>{esc(a.claim_id)}</td>'
        f"<td>{esc(a.statement)}</td><td>{esc(a.system)} vs {esc(a.baseline)}</td>"
        f"<td>{ratio(a.stated_ratio)}</td><td>{ratio(a.recomputed_ratio)}</td>"
        f"<td>{esc(a.verdict)}{' (' + esc(a.basis) + ')' if a.basis else ''}</td>"
        f"<td><ul>{''.join(f'<li>{esc(f)}</li>' for f in a.findings)}"
        + "".join(
            f"<li>power {esc(b.label)}: {b.ratio:.3g}x"
            f"{'' if b.like_for_like else ' (not like for like)'}</li>"
            for b in a.boundary
        )
        + "</ul></td></tr>"
        for a in report.claims
    )
    ranges = "".join(
        f"<tr><td>{esc(g.statement)}</td><td>{g.stated_min}-{g.stated_max}x</td>"
        f"<td>{esc('; '.join(g.findings))}</td><td>{esc(g.verdict)}</td></tr>"
        for g in report.ranges
    )
    rules = "".join(f"<li>{esc(r)}</li>" for r in report.rules)
    return (
        f'<section class="scoville-audit"><h2>{esc(report.title)}'
        f"{' (strict)' if report.strict else ''}</h2>"
        "<table><thead><tr><th>claim</th><th>statement</th><th>sides</th><th>stated</th>"
        "<th>recomputed</th><th>verdict</th><th>findings</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
        "<table><thead><tr><th>range</th><th>stated</th><th>members</th><th>verdict</th></tr>"
        f"</thead><tbody>{ranges}</tbody></table><h3>Verdict rules</h3><ul>{rules}</ul></section>"
    )
