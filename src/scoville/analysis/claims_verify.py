"""Matrix -> verdict: a claim checked against runs of both its sides (measured or twin).

Outcomes: reproduced / not reproduced / not like-for-like / unverifiable, each with the
recomputed ratio and an interval, and the evidence tier the runs give (twin runs: modelled;
measured runs: reproduced). The verdict never rises above that evidence. A per-kW claim is
judged at the power boundary its sides state: the runs are re-expressed there by the code
`compare --boundary` uses (`profile.at_boundary`), and a run that cannot be is refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from scoville.analysis.audit import measure, ratio, side_conditions
from scoville.analysis.bootstrap import (
    Interval,
    RequestArrays,
    bootstrap_frontier_band_requests,
    bootstrap_requests,
)
from scoville.analysis.boundaries import MEASURED, is_modelled
from scoville.analysis.claims import METRICS, Claim, ClaimFile, weaker
from scoville.analysis.claims_plan import claim_boundary
from scoville.analysis.comparable import conditions_of_rows, judge, model_key
from scoville.analysis.power import basis_of_rows
from scoville.analysis.profile import at_boundary
from scoville.analysis.rows import Row, num
from scoville.analysis.verdicts import PER_KW_METRICS
from scoville.errors import DataError, UserError

Outcome = Literal["reproduced", "not reproduced", "not like-for-like", "unverifiable"]
PointArrays = Mapping[str, tuple[RequestArrays, float]]

RULES = (
    "unverifiable: a side has no run, the runs cannot give the metric (e.g. the interactivity "
    "is outside a side's measured range), or the claim states neither a ratio nor both values.",
    "not like-for-like: the claim's sides, or the runs, differ in a condition the comparison "
    "needs (comparable.judge), or a run differs from what the claim states for its side.",
    "reproduced: the runs' ratio is within tolerance_rel of the stated ratio, or the stated "
    "ratio lies inside the runs' interval; not reproduced otherwise.",
    "evidence: twin runs give 'modelled', measured runs 'reproduced'; a verdict from twin "
    "runs is a model's agreement, never an independent reproduction.",
    "power boundary: a per-kW claim is judged at the boundary its sides state; a run that "
    "cannot be expressed there is refused (a twin run at a measured boundary: not "
    "like-for-like; nothing states its power there: unverifiable), never read at another.",
)


@dataclass(frozen=True, slots=True)
class SideResult:
    side_id: str
    system: str  # as the runs name it
    evidence: str  # "modelled" (twin) or "reproduced" (measured)
    value: float | None
    lo: float | None
    hi: float | None
    power: str = ""  # the power basis its per-kW value divides by (boundary, W, estimate)


@dataclass(frozen=True, slots=True)
class Verification:
    claim_id: str
    metric: str
    statement: str
    stated_ratio: float | None
    ratio: float | None
    ratio_lo: float | None
    ratio_hi: float | None
    outcome: Outcome
    evidence: str  # what the verdict rests on; the claim's own tier is `claim_evidence`
    claim_evidence: str
    sides: tuple[SideResult, ...]
    reasons: tuple[str, ...]
    boundary: str | None = None  # per-kW claims: the boundary the runs were expressed at

    def label(self) -> str:
        if self.outcome in ("reproduced", "not reproduced") and self.evidence == "modelled":
            return f"{self.outcome} (modelled: twin runs, not a measurement)"
        return self.outcome

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "label": self.label()}


def _peak_row(rows: Sequence[Row], key: str, better: str) -> Row | None:
    valid = [r for r in rows if r.get("valid") is not False and num(r, key) is not None]
    if not valid:
        return None
    pick = max if better == "higher" else min
    return pick(valid, key=lambda r: num(r, key) or 0.0)


def side_interval(
    metric: str, rows: Sequence[Row], arrays: PointArrays | None, at: float | None, value: float
) -> tuple[float | None, float | None]:
    """A 95 % interval of a side's metric by resampling requests (None without records),
    scaled to the metric's unit by value / bootstrap estimate (e.g. per accelerator -> per kW)."""
    if not arrays:
        return None, None
    n_acc = int(num(rows[0], "n_accelerators") or 1)
    iv: Interval | None = None
    if metric == "tput_per_kw_at_intvty" and at is not None:
        iv = bootstrap_frontier_band_requests(arrays, [at], n_acc, n_resamples=200).intervals[0]
    else:
        key, boot = {
            "peak_tput_per_kw": ("tput_per_kw", "tput_per_gpu"),
            "peak_tput_per_accelerator": ("tput_per_gpu", "tput_per_gpu"),
            "min_e2e_s": ("median_e2e", "median_e2e_s"),
            "max_intvty": ("median_intvty", "median_intvty"),
        }.get(metric, ("", ""))
        row = _peak_row(rows, key, METRICS[metric][0]) if key else None
        got = arrays.get(str(row.get("point_id"))) if row else None
        if got is not None:
            iv = bootstrap_requests(got[0], got[1], n_acc, n_resamples=300)[boot]
    if iv is None or not iv.estimate or iv.lo is None or iv.hi is None:
        return None, None
    k = value / iv.estimate
    return iv.lo * k, iv.hi * k


def _ratio_interval(metric: str, s: SideResult, b: SideResult) -> tuple[float | None, ...]:
    if None in (s.lo, s.hi, b.lo, b.hi) or not b.lo or not s.lo:
        return None, None
    assert s.lo is not None and s.hi is not None and b.lo is not None and b.hi is not None
    if METRICS[metric][0] == "higher":
        return s.lo / b.hi, s.hi / b.lo
    return b.lo / s.hi, b.hi / s.lo


def _run_mismatch(c: Claim, cf: ClaimFile, rows: Mapping[str, Sequence[Row]]) -> list[str]:
    """Conditions the runs contradict: a run vs its claim side (only what the claim states),
    and the two sides' runs against each other."""
    out: list[str] = []
    for sid in (c.system, c.baseline):
        got = judge(conditions_of_rows(rows[sid]), side_conditions(cf.sides[sid]), False)
        # A run's quality status is judged once, run against run, below.
        out += [
            f"run of {sid}: {x.reason}"
            for x in got.blocking
            if x.status == "differs" and x.field != "quality_status"
        ]
    pair = judge(
        conditions_of_rows(rows[c.system]),
        conditions_of_rows(rows[c.baseline]),
        c.metric in PER_KW_METRICS,
    )
    out += [f"runs: {x.reason}" for x in pair.blocking if x.status == "differs"]
    return out


def _measure_side(
    c: Claim, cf: ClaimFile, sid: str, rows: Sequence[Row], arrays: PointArrays | None,
    at: float | None,
) -> SideResult:  # fmt: skip
    """One side's value of the claim's metric, its interval and the evidence its runs give."""
    v = measure(c.metric, rows, cf.sides[sid], at)
    lo, hi = side_interval(c.metric, rows, arrays, at, v) if v else (None, None)
    ev = "modelled" if any(is_modelled(r) for r in rows) else "reproduced"
    basis = basis_of_rows(rows) if c.metric in PER_KW_METRICS else None
    power = basis.label() if basis else ""
    return SideResult(sid, str(rows[0].get("system", "?")), ev, v, lo, hi, power)


def at_claim_boundary(
    c: Claim, rows: Mapping[str, Sequence[Row]], boundary: str, profile: Path | None
) -> tuple[dict[str, Sequence[Row]], Outcome | None, list[str]]:
    """Both sides' ROWs at the claim's power boundary (`at_boundary`, as `compare --boundary`),
    or the outcome and reasons when a side cannot be expressed there."""
    out: dict[str, Sequence[Row]] = dict(rows)
    why: list[str] = []
    structural = False
    for sid in (c.system, c.baseline):
        try:
            out[sid] = at_boundary(rows[sid], boundary, profile)
        except DataError:
            raise
        except UserError as e:
            why.append(f"{sid}: cannot be expressed at the claim's {boundary} boundary: {e}")
            structural |= boundary in MEASURED and any(is_modelled(r) for r in rows[sid])
    if not why:
        return out, None, []
    return out, ("not like-for-like" if structural else "unverifiable"), why


def _side_notes(cf: ClaimFile, sides: Sequence[SideResult], boundary: str | None) -> list[str]:
    """Runs that stand in for a side's system, and the power basis of each side's per-kW value."""
    notes = [
        f"{x.side_id}: the run's {x.system} stands in for {cf.sides[x.side_id].system}"
        for x in sides
        if model_key(x.system) != model_key(cf.sides[x.side_id].system)
    ]
    if boundary is not None:
        powers = "; ".join(f"{x.side_id} {x.power or 'no per-kW basis'}" for x in sides)
        notes.append(f"per kW at the claim's {boundary} boundary: {powers}")
    return notes


def verify_claim(
    c: Claim,
    cf: ClaimFile,
    rows: Mapping[str, Sequence[Row]],
    arrays: Mapping[str, PointArrays] | None = None,
    allow_unlike: bool = False,
    profile: Path | None = None,
) -> Verification:
    """One claim's verdict from its sides' ROWs (and request arrays, for intervals); per-kW
    claims at the boundary the claim states, with `profile` (a power-profile file) and the
    runs' own recorded boundary columns."""
    s_side, b_side = cf.sides[c.system], cf.sides[c.baseline]
    claim_ev = weaker(s_side.evidence, b_side.evidence)
    stated = c.stated_ratio or ratio(c.metric, c.system_value, c.baseline_value)
    boundary = claim_boundary(c.metric, s_side, b_side)

    def result(outcome: Outcome, why: list[str], sides: tuple[SideResult, ...] = (),
               r: float | None = None, lo: float | None = None, hi: float | None = None,
               ev: str = "") -> Verification:  # fmt: skip
        return Verification(c.id, c.metric, c.statement, stated, r, lo, hi, outcome,
                            ev or claim_ev, claim_ev, sides, tuple(why), boundary)  # fmt: skip

    missing = [sid for sid in (c.system, c.baseline) if not rows.get(sid)]
    if missing:
        return result("unverifiable", [f"no run of side {sid}" for sid in missing])
    if boundary is not None:
        rows, refused, why = at_claim_boundary(c, rows, boundary, profile)
        if refused is not None:
            ev = "modelled" if any(is_modelled(x) for v in rows.values() for x in v) else ""
            return result(refused, why, ev=ev)
    comp = judge(side_conditions(s_side), side_conditions(b_side), c.metric in PER_KW_METRICS)
    unlike = [f"claim: {r}" for r in comp.reasons()] + _run_mismatch(c, cf, rows)
    at = c.at_intvty
    if c.metric == "tput_per_kw_at_intvty" and at is None:
        at = measure("max_intvty", rows[c.baseline], b_side, None)
    sides = [_measure_side(c, cf, sid, rows[sid], (arrays or {}).get(sid), at)
             for sid in (c.system, c.baseline)]  # fmt: skip
    evidence = "modelled" if any(x.evidence == "modelled" for x in sides) else "reproduced"
    notes = _side_notes(cf, sides, boundary)
    r = ratio(c.metric, sides[0].value, sides[1].value)
    lo, hi = _ratio_interval(c.metric, sides[0], sides[1])
    args = (tuple(sides), r, lo, hi, evidence)
    if unlike and not allow_unlike:
        return result("not like-for-like", unlike + notes, *args)
    labels = [f"UNLIKE PAIR (allowed): {u}" for u in unlike] + notes
    if r is None:
        where = f" at {at:g} tok/s/user (outside its measured range)" if at else ""
        why = [
            f"{x.side_id}: the runs do not give {c.metric}{where}" for x in sides if x.value is None
        ]
        return result("unverifiable", why + labels, *args)
    if stated is None:
        why = ["the claim states neither a ratio nor both values"]
        return result("unverifiable", why + labels, *args)
    inside = lo is not None and hi is not None and lo <= stated <= hi
    close = abs(r - stated) <= cf.tolerance_rel * stated
    outcome: Outcome = "reproduced" if inside or close else "not reproduced"
    why = [f"runs give {r:.4g}x vs stated {stated:.4g}x (tolerance {cf.tolerance_rel:.0%})"]
    return result(outcome, why + labels, *args)
