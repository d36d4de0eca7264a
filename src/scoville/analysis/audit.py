"""The claim audit: recompute every stated ratio, list differing conditions, re-normalise the
power boundary and give a verdict per claim and per headline range.

Pure: takes a validated `ClaimFile` and, optionally, the point ROWs of sides that have runs.
Result types and the verdict rules (`RULES`) live in `verdicts.py`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from scoville.analysis.claims import METRICS, Claim, ClaimFile, RangeClaim, Side, weaker
from scoville.analysis.comparable import Conditions, judge
from scoville.analysis.frontier import frontier_of, read_at
from scoville.analysis.power import PowerBasis, RatioUnderBoundary, ratio_shifts, with_power
from scoville.analysis.rows import Row, num
from scoville.analysis.verdicts import (
    PER_KW_METRICS,
    AuditReport,
    ClaimAudit,
    Condition,
    RangeAudit,
    RunCheck,
    Verdict,
)
from scoville.figures import num as figure


def written_tolerance(stated: float) -> float:
    """Half a unit in the last written digit: 1.9 -> 0.05, 104 -> 0.5, 53.7 -> 0.05."""
    if isinstance(stated, int):
        return 0.5
    text = repr(float(stated))
    if "e" in text:
        return abs(stated) * 0.005
    return 0.5 * 10.0 ** -len(text.split(".")[1])


def ratio(metric: str, system: float | None, baseline: float | None) -> float | None:
    """System-is-better ratio: s/b where higher is better, b/s where lower is better."""
    if system is None or baseline is None:
        return None
    return system / baseline if METRICS[metric][0] == "higher" else baseline / system


def side_conditions(side: Side) -> Conditions:
    """A claim side's conditions, for the one like-for-like rule set (`comparable.judge`)."""
    return Conditions(
        model=side.model,
        weights_revision=side.weights_revision,
        isl_tokens=side.isl_tokens,
        osl_tokens=side.osl_tokens,
        range_ratio=side.range_ratio,
        precision=side.precision,
        quality_equivalence=side.quality_equivalence,
        spec_decode=side.spec_decode,
        acceptance_length=side.acceptance_length,
        disagg=side.disagg,
        parallelism=side.parallelism,
        power_boundary=side.power.boundary,
        power_w_per_accelerator=side.power.w_per_accelerator,
        token_basis=side.token_basis,
        percentile=side.percentile,
        quality_target=side.quality_target,
        quality_status=side.quality_status,
        latency_target=side.latency_target,
    )


def compare_conditions(metric: str, s: Side, b: Side) -> list[Condition]:
    """Each condition side by side (`comparable.judge`); `missing` when a condition the metric
    needs is unstated."""
    got = judge(side_conditions(s), side_conditions(b), metric in PER_KW_METRICS)
    return [Condition(c.field, c.system, c.baseline, c.status, c.reason) for c in got.checks]


def _boundary_table(c: Claim, s: Side, b: Side) -> tuple[tuple[RatioUnderBoundary, ...], list[str]]:
    notes: list[str] = []
    sw, bw = s.power.w_per_accelerator, b.power.w_per_accelerator
    if c.metric not in PER_KW_METRICS or None in (c.system_value, c.baseline_value, sw, bw):
        return (), notes
    assert sw is not None and bw is not None and s.power.boundary and b.power.boundary
    sb, bb = PowerBasis(s.power.boundary, sw), PowerBasis(b.power.boundary, bw)
    alts: list[tuple[str, PowerBasis | None, PowerBasis | None]] = [
        ("per accelerator (power denominator removed)", None, None)
    ]
    sm, bm = s.power.measured_w_per_accelerator, b.power.measured_w_per_accelerator
    if sm is not None:
        alts.append(
            (
                f"system at measured {sm:g} W, baseline as stated",
                PowerBasis("board-measured", sm),
                bb,
            )
        )
    if sm is not None and bm is not None:
        alts.append(
            (
                "both at measured power",
                PowerBasis("board-measured", sm),
                PowerBasis("board-measured", bm),
            )
        )
    elif sm is not None:
        notes.append("baseline measured power is not stated: no like-for-like measured ratio")
    assert c.system_value is not None and c.baseline_value is not None
    return tuple(ratio_shifts(c.system_value, sb, c.baseline_value, bb, alts)), notes


def measure(metric: str, rows: Sequence[Row], side: Side, at_intvty: float | None) -> float | None:
    """The claim's metric computed from a side's point ROWs (valid points only)."""
    pct = side.percentile or "median"
    valid = [r for r in rows if r.get("valid") is not False]
    if (
        metric in PER_KW_METRICS
        and side.power.w_per_accelerator
        and side.power.boundary
        and not any(num(r, "tput_per_kw") for r in valid)
    ):
        valid = with_power(valid, PowerBasis(side.power.boundary, side.power.w_per_accelerator))
    key = {
        "peak_tput_per_kw": "tput_per_kw",
        "peak_tput_per_accelerator": "tput_per_gpu",
        "min_e2e_s": f"{pct}_e2e",
        "max_intvty": f"{pct}_intvty",
        "min_itl_s": f"{pct}_itl",
    }
    if metric == "tput_per_kw_at_intvty":
        if at_intvty is None:
            return None
        return read_at(frontier_of(valid, f"{pct}_intvty", "tput_per_kw"), at_intvty).value
    vals = [v for r in valid if (v := num(r, key[metric])) is not None]
    if not vals:
        return None
    return max(vals) if METRICS[metric][0] == "higher" else min(vals)


def _run_checks(c: Claim, cf: ClaimFile, rows: Mapping[str, Sequence[Row]]) -> list[RunCheck]:
    at = c.at_intvty
    if c.metric == "tput_per_kw_at_intvty" and at is None and c.baseline in rows:
        at = measure("max_intvty", rows[c.baseline], cf.sides[c.baseline], None)
    out: list[RunCheck] = []
    for side_id, stated in ((c.system, c.system_value), (c.baseline, c.baseline_value)):
        if side_id not in rows:
            continue
        got = measure(c.metric, rows[side_id], cf.sides[side_id], at)
        if got is None:
            out.append(RunCheck(side_id, stated, None, "no data"))
        elif stated is None:
            out.append(RunCheck(side_id, None, got, "measured"))
        elif abs(got - stated) <= cf.tolerance_rel * stated:
            out.append(RunCheck(side_id, stated, got, "agrees"))
        else:
            out.append(RunCheck(side_id, stated, got, "contradicts"))
    return out


def _arithmetic(c: Claim, recomputed: float | None) -> tuple[bool | None, str]:
    """(True: follows, False: does not, None: nothing to check), and the finding."""
    st = c.stated_ratio
    if st is None:
        if recomputed is None:
            return None, "no ratio stated and the numbers are incomplete"
        return None, f"no ratio stated; the stated numbers give {recomputed:.3g}x"
    if recomputed is None:
        return None, f"the stated {st}x cannot be recomputed: a side's value is not stated"
    tol = written_tolerance(st)
    num_s = (
        f"{figure(c.system_value or 0, digits=4)} / {figure(c.baseline_value or 0, digits=4)}"
        if METRICS[c.metric][0] == "higher"
        else f"{figure(c.baseline_value or 0, digits=4)} / {figure(c.system_value or 0, digits=4)}"
    )
    if abs(recomputed - st) <= tol + 1e-12:
        return True, f"{num_s} = {recomputed:.4g}x, consistent with the stated {st}x"
    hint = " (the stated figure is the inverse ratio)" if abs(1 / recomputed - st) <= tol else ""
    return False, f"stated {st}x does not follow from {num_s} = {recomputed:.4g}x{hint}"


def _runs_ratio(c: Claim, runs: Sequence[RunCheck]) -> float | None:
    got = {r.side: r.measured for r in runs}
    return ratio(c.metric, got.get(c.system), got.get(c.baseline))


def _edge_note(c: Claim, cf: ClaimFile) -> list[str]:
    """Flag iso-interactivity claims read at the baseline's own best interactivity: the end of
    its measured range, where its throughput falls to the single-stream point."""
    if c.metric != "tput_per_kw_at_intvty" or c.at_intvty is None:
        return []
    for o in cf.claims:
        same = (o.system, o.baseline) == (c.system, c.baseline) and o.metric == "max_intvty"
        if same and o.baseline_value and abs(o.baseline_value - c.at_intvty) <= 0.01 * c.at_intvty:
            return [
                f"read at {c.at_intvty:g} tok/s/user, the baseline's own maximum ({o.id}): the "
                "end of its measured range, where its frontier throughput is lowest, so the "
                "ratio is an edge value that says little about the rest of the curves"
            ]
    return []


def decide(
    contradicted: bool, conditions_against: bool, runs_agree: bool, arithmetic_follows: bool
) -> tuple[Verdict, str]:
    """The verdict precedence of `RULES`: inconsistent > not comparable > reproduced (runs,
    then arithmetic) > unverifiable. Returns (verdict, basis)."""
    if contradicted:
        return "inconsistent", ""
    if conditions_against:
        return "not comparable", ""
    if runs_agree:
        return "reproduced", "runs"
    if arithmetic_follows:
        return "reproduced", "arithmetic"
    return "unverifiable", ""


def audit_claim(
    c: Claim, cf: ClaimFile, rows: Mapping[str, Sequence[Row]], strict: bool = False
) -> ClaimAudit:
    s, b = cf.sides[c.system], cf.sides[c.baseline]
    _, unit, aliases = METRICS[c.metric]
    recomputed = ratio(c.metric, c.system_value, c.baseline_value)
    follows, finding = _arithmetic(c, recomputed)
    findings = [finding]
    bad_unit = c.unit.strip().lower() not in aliases
    if bad_unit:
        findings.append(f"unit {c.unit!r} contradicts metric {c.metric} (expects {unit})")
    runs = _run_checks(c, cf, rows)
    r_ratio = _runs_ratio(c, runs)
    runs_agree = r_ratio is not None and all(r.status in ("agrees", "measured") for r in runs)
    if r_ratio is not None:
        findings.append(f"runs give {r_ratio:.4g}x")
        if c.stated_ratio and abs(r_ratio - c.stated_ratio) > cf.tolerance_rel * c.stated_ratio:
            runs_agree = False
            runs = [*runs, RunCheck("ratio", c.stated_ratio, r_ratio, "contradicts")]
    conds = compare_conditions(c.metric, s, b)
    blocking = {"differs", "missing"} | ({"unstated"} if strict else set())
    against = [x for x in conds if x.status in blocking]
    for x in against:
        findings.append(f"{x.field}: {x.status} (system {x.system}, baseline {x.baseline})")
    caveats = [x.field for x in conds if x.status == "unstated" and x not in against]
    if caveats:
        findings.append(f"caveat, unstated on at least one side: {', '.join(caveats)}")
    boundary, notes = _boundary_table(c, s, b)
    findings.extend(notes)
    findings.extend(_edge_note(c, cf))
    contradicted = follows is False or bad_unit or any(r.status == "contradicts" for r in runs)
    verdict, basis = decide(contradicted, bool(against), runs_agree, follows is True)
    return ClaimAudit(
        c.id,
        c.metric,
        c.statement,
        s.system,
        b.system,
        c.unit,
        c.system_value,
        c.baseline_value,
        c.stated_ratio,
        recomputed,
        written_tolerance(c.stated_ratio) if c.stated_ratio else None,
        tuple(conds),
        boundary,
        tuple(runs),
        tuple(findings),
        verdict,
        basis,
        c.sources,
        weaker(s.evidence, b.evidence),
    )


def audit_range(r: RangeClaim, by_id: Mapping[str, ClaimAudit]) -> RangeAudit:
    members: list[tuple[str, float | None, str]] = []
    for cid in r.claims:
        a = by_id[cid]
        if a.recomputed_ratio is not None:
            members.append((cid, a.recomputed_ratio, "recomputed"))
        elif a.stated_ratio is not None:
            members.append((cid, float(a.stated_ratio), "stated"))
        else:
            members.append((cid, None, "none"))
    vals = [(v, cid) for cid, v, _ in members if v is not None]
    if not vals:
        return RangeAudit(
            r.id,
            r.statement,
            r.stated_min,
            r.stated_max,
            tuple(members),
            None,
            None,
            ("no member ratio is known",),
            "unverifiable",
        )
    low, high = min(vals), max(vals)
    findings: list[str] = []
    ok = True
    for end, stated, (got, cid) in (("low", r.stated_min, low), ("high", r.stated_max, high)):
        if abs(got - stated) <= written_tolerance(stated) + 1e-12:
            findings.append(f"{end} end {stated}x matches {got:.3g}x ({cid})")
        else:
            ok = False
            findings.append(f"{end} end {stated}x does not match the members: {got:.3g}x ({cid})")
    partial = [cid for cid, _, how in members if how != "recomputed"]
    if partial:
        findings.append(f"taken as stated, not recomputed: {', '.join(partial)}")
    verdict: Verdict = "inconsistent" if not ok else ("unverifiable" if partial else "reproduced")
    return RangeAudit(
        r.id,
        r.statement,
        r.stated_min,
        r.stated_max,
        tuple(members),
        low[0],
        high[0],
        tuple(findings),
        verdict,
    )


def audit(
    cf: ClaimFile, rows: Mapping[str, Sequence[Row]] | None = None, strict: bool = False
) -> AuditReport:
    """Audit every claim and range of a claim file (rows: point ROWs per side id, if any)."""
    rows = rows or {}
    claims = tuple(audit_claim(c, cf, rows, strict) for c in cf.claims)
    by_id = {a.claim_id: a for a in claims}
    ranges = tuple(audit_range(r, by_id) for r in cf.ranges)
    return AuditReport(cf.title, strict, claims, ranges)
