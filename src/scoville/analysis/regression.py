"""Regression alarms: is a run worse than its baseline beyond noise?

The test, per line: the relative change d = candidate / baseline - 1 with a percentile bootstrap
interval (requests of every point resampled on both sides, seeded). A line is a regression when
the whole interval lies on the worse side of zero AND the estimate is worse by at least the
minimum effect (default 5 %): significant and material. Throughput is compared at equal
interactivity (both frontiers read by monotone interpolation at the baseline's measured
interactivities, never extrapolated; a level the candidate never reaches is a regression);
TTFT p99 and median E2E at equal offered load (the same point id), where a user's SLO lives.
A percentile from fewer samples than a 95 % interval needs is reported, not decided.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from scoville.analysis.bootstrap import (
    FloatArray,
    RequestArrays,
    percentile_interval,
    resampled,
    resampled_xy,
)
from scoville.analysis.comparable import unlike_runs
from scoville.analysis.frontier import Frontier, FrontierPoint, pareto, read_at
from scoville.analysis.rows import GroupKey, Row, num
from scoville.metrics.samples import min_samples

Verdict = Literal["regression", "improvement", "no change", "not comparable", "few samples"]
Worse = Literal["higher", "lower"]
PointArrays = Mapping[str, tuple[RequestArrays, float]]  # point_id -> (requests, window_s)


@dataclass(frozen=True)
class RunSample:
    """One side of a check: its point ROWs and, when records exist, its requests per point."""

    run_id: str
    rows: Sequence[Row]
    points: PointArrays
    n_accelerators: int = 1


@dataclass(frozen=True, slots=True)
class Rule:
    """The stated test: interval level, minimum relative effect, resamples and seed."""

    min_effect: float = 0.05
    level: float = 0.95
    n_resamples: int = 1000
    seed: int = 0


@dataclass(frozen=True, slots=True)
class CheckLine:
    metric: str
    where: str  # "intvty 250" (tok/s/user) or "point c16"
    worse: Worse  # the direction that is worse (higher latency, lower throughput)
    baseline: float | None
    candidate: float | None
    change: float | None  # candidate / baseline - 1
    lo: float | None  # interval of the change (None without records)
    hi: float | None
    verdict: Verdict
    note: str = ""


@dataclass(frozen=True)
class CheckReport:
    candidate: str
    baseline: str
    rule: Rule
    lines: list[CheckLine] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # e.g. the two sides' labels differ

    @property
    def regressed(self) -> bool:
        return any(ln.verdict == "regression" for ln in self.lines)


def decide(
    change: float, lo: float | None, hi: float | None, worse: Worse, min_effect: float
) -> Verdict:
    """The decision rule on a relative change and its interval (None: no interval, the
    effect size alone decides). `worse` says which sign of the change is bad."""
    sign = 1.0 if worse == "higher" else -1.0
    bad, bad_lo = sign * change, None
    if lo is not None and hi is not None:
        bad_lo, bad_hi = min(sign * lo, sign * hi), max(sign * lo, sign * hi)
        if bad_lo > 0 and bad >= min_effect:
            return "regression"
        if bad_hi < 0 and -bad >= min_effect:
            return "improvement"
        return "no change"
    if bad >= min_effect:
        return "regression"
    return "improvement" if -bad >= min_effect else "no change"


def _rel(c: FloatArray, b: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(c / b - 1.0, dtype=np.float64)


def _line(
    metric: str,
    where: str,
    worse: Worse,
    base: float,
    cand: float,
    reps: FloatArray | None,
    rule: Rule,
    note: str = "",
) -> CheckLine:
    change = cand / base - 1.0
    lo = hi = None
    if reps is not None:
        iv = percentile_interval(reps, change, rule.level, rule.n_resamples)
        lo, hi = iv.lo, iv.hi
        if iv.n_defined < rule.n_resamples // 2:
            note = (note + "; " if note else "") + f"{iv.n_defined} resamples defined"
    verdict = decide(change, lo, hi, worse, rule.min_effect)
    return CheckLine(metric, where, worse, base, cand, change, lo, hi, verdict, note)


# ---- throughput at equal interactivity ----------------------------------------------------


def _resampled_xy(
    points: PointArrays, n_acc: int, rule: Rule, rng: np.random.Generator
) -> dict[str, tuple[FloatArray, FloatArray]]:
    """Per point: (median interactivity, tput_per_gpu) for each resample of its requests."""
    return {
        pid: resampled_xy(arr, 1.0 / (window_s * n_acc), rule.n_resamples, rng)
        for pid, (arr, window_s) in points.items()
        if arr.output_tokens.size and window_s > 0
    }


def _frontier(xy: Mapping[str, tuple[float, float]]) -> Frontier:
    cands = [FrontierPoint(x, y, pid) for pid, (x, y) in xy.items() if np.isfinite(x)]
    empty = GroupKey("", "", "", "", "", "")
    return Frontier(empty, "median_intvty", "tput_per_gpu", "higher", pareto(cands))


def _central(rows: Sequence[Row]) -> Frontier:
    from scoville.analysis.frontier import frontier_of

    return frontier_of(list(rows), "median_intvty", "tput_per_gpu")


JITTER = 0.02  # relative x distance within which a resample's end point stands in for x


def _read_near(f: Frontier, x: float) -> float | None:
    """A resampled frontier at x; an x just outside its range (within JITTER, the resampling
    jitter of its end points) reads the end point, so the measured range's ends stay testable."""
    if f.points and x < f.xs[0] <= x * (1.0 + JITTER):
        x = f.xs[0]
    elif f.points and x > f.xs[-1] >= x * (1.0 - JITTER):
        x = f.xs[-1]
    return read_at(f, x).value


def _replicates_at(
    xs: Sequence[float], cand: RunSample, base: RunSample, rule: Rule
) -> FloatArray | None:
    """Relative throughput change at each x for every resample (NaN where a side's resampled
    frontier does not reach x); None when either side has no per-request records."""
    if not cand.points or not base.points:
        return None
    rng = np.random.default_rng(rule.seed)
    # the same points as the central frontiers: a distrusted point shapes no resample either
    c = _resampled_xy(_valid_points(cand), cand.n_accelerators, rule, rng)
    b = _resampled_xy(_valid_points(base), base.n_accelerators, rule, rng)
    out = np.full((rule.n_resamples, len(xs)), np.nan)
    for k in range(rule.n_resamples):
        fc = _frontier({p: (float(v[0][k]), float(v[1][k])) for p, v in c.items()})
        fb = _frontier({p: (float(v[0][k]), float(v[1][k])) for p, v in b.items()})
        for j, x in enumerate(xs):
            vc, vb = _read_near(fc, x), _read_near(fb, x)
            if vc is not None and vb:
                out[k, j] = vc / vb - 1.0
    return out


def _valid_points(sample: RunSample) -> PointArrays:
    """The requests of the points its rows do not mark invalid."""
    invalid = {str(r.get("point_id")) for r in sample.rows if r.get("valid") is False}
    return {pid: v for pid, v in sample.points.items() if pid not in invalid}


def _distrusted_beyond(cand: RunSample, best_x: float) -> str | None:
    """The candidate's invalid points past its valid frontier's best interactivity, with their
    reasons: there only distrusted points measured how far the candidate reaches, so a level
    its valid frontier misses is unknown, not worse."""
    hits = [
        f"{r.get('point_id')} ({'; '.join(map(str, r.get('invalid_reasons') or [])) or 'invalid'})"
        for r in cand.rows
        if r.get("valid") is False and (num(r, "median_intvty") or 0.0) > best_x
    ]
    return ", ".join(hits) if hits else None


def _unmeasured_load(cand: RunSample, base: RunSample, at: FrontierPoint) -> str | None:
    """Why a baseline level is not the candidate's to reach: the candidate's sweep never ran a
    load as light as the baseline point's (lighter load, higher interactivity)."""
    row = next((r for r in base.rows if str(r.get("point_id")) == at.point_id), None)
    level = num(row, "level") if row is not None else None
    if row is None or level is None:
        return None
    mode = row.get("mode")
    levels = [num(r, "level") for r in cand.rows if r.get("mode") == mode]
    ran = [v for v in levels if v is not None]
    if not ran or min(ran) <= level:
        return None
    return f"the candidate ran no {mode} as light as {at.point_id} (its lightest: {min(ran):g})"


def _unread(where: str, baseline: float, verdict: Verdict, note: str) -> CheckLine:
    """A throughput line where the candidate's frontier has no value."""
    return CheckLine(
        "tput_per_gpu", where, "lower", baseline, None, None, None, None, verdict, note
    )


def throughput_lines(cand: RunSample, base: RunSample, rule: Rule) -> list[CheckLine]:
    """tput_per_gpu at each of the baseline's frontier interactivities."""
    fc, fb = _central(cand.rows), _central(base.rows)
    if not fb.points:
        return []
    if not fc.points:  # every candidate point distrusted (or empty): nothing is decided
        why = _distrusted_beyond(cand, 0.0) or "no point with records"
        note = f"the candidate has no valid point: {why}"
        return [
            _unread(f"intvty {x:.4g}", y, "not comparable", note)
            for x, y in zip(fb.xs, fb.ys, strict=True)
        ]
    xs = list(fb.xs)
    reps = _replicates_at(xs, cand, base, rule)
    lines: list[CheckLine] = []
    for j, (x, yb) in enumerate(zip(xs, fb.ys, strict=True)):
        where = f"intvty {x:.4g}"
        r = read_at(fc, x)
        if r.value is not None:
            col = reps[:, j] if reps is not None else None
            lines.append(_line("tput_per_gpu", where, "lower", yb, r.value, col, rule))
        elif r.status == "unreachable" and (low := _unmeasured_load(cand, base, fb.points[j])):
            lines.append(_unread(where, yb, "not comparable", low))
        elif r.status == "unreachable" and (bad := _distrusted_beyond(cand, fc.best_x() or 0.0)):
            note = f"past the candidate's valid frontier only invalid points: {bad}"
            lines.append(_unread(where, yb, "not comparable", note))
        elif r.status == "unreachable" and x > (1.0 + rule.min_effect) * (fc.best_x() or 0.0):
            note = f"the candidate never reaches it (best {fc.best_x():.4g})"
            lines.append(_unread(where, yb, "regression", note))
        else:
            lines.append(_unread(where, yb, "not comparable", f"candidate reading: {r.status}"))
    return lines


# ---- latencies at equal offered load ------------------------------------------------------

# metric -> (RequestArrays field, quantile)
LATENCIES: dict[str, tuple[str, float]] = {
    "p99_ttft": ("ttft_s", 0.99),
    "median_e2e": ("e2e_s", 0.5),
}


def _finite(a: FloatArray) -> FloatArray:
    return a[np.isfinite(a)]


def _latency_line(
    metric: str,
    pid: str,
    cand: RequestArrays,
    base: RequestArrays,
    rule: Rule,
    rng: np.random.Generator,
) -> CheckLine:
    field_name, q = LATENCIES[metric]
    c, b = _finite(getattr(cand, field_name)), _finite(getattr(base, field_name))
    where = f"point {pid}"
    if c.size == 0 or b.size == 0:
        return CheckLine(metric, where, "higher", None, None, None, None, None, "not comparable")
    vb, vc = float(np.quantile(b, q)), float(np.quantile(c, q))
    need = min_samples(q, rule.level)
    if min(b.size, c.size) < need or vb <= 0:
        note = f"n={min(b.size, c.size)} < {need} for a {rule.level:.0%} interval"
        change = vc / vb - 1.0 if vb > 0 else None
        return CheckLine(metric, where, "higher", vb, vc, change, None, None, "few samples", note)

    def quantile(a: FloatArray) -> FloatArray:
        return np.asarray(np.quantile(a, q, axis=1), dtype=np.float64)

    qc = resampled(c, quantile, rule.n_resamples, rng)
    qb = resampled(b, quantile, rule.n_resamples, rng)
    return _line(metric, where, "higher", vb, vc, _rel(qc, qb), rule)


def latency_lines(
    cand: RunSample, base: RunSample, rule: Rule, metrics: Sequence[str] = tuple(LATENCIES)
) -> list[CheckLine]:
    """Each latency metric at every point id valid in both runs (the baseline's order)."""
    if not cand.points or not base.points:
        return _latency_rows_only(cand, base, rule, metrics)
    valid_c = {str(r.get("point_id")) for r in cand.rows if r.get("valid") is not False}
    pids = [
        str(r.get("point_id"))
        for r in base.rows
        if r.get("valid") is not False and str(r.get("point_id")) in valid_c
    ]
    rng = np.random.default_rng(rule.seed + 1)
    return [
        _latency_line(m, pid, cand.points[pid][0], base.points[pid][0], rule, rng)
        for m in metrics
        for pid in pids
        if pid in cand.points and pid in base.points
    ]


def _latency_rows_only(
    cand: RunSample, base: RunSample, rule: Rule, metrics: Sequence[str]
) -> list[CheckLine]:
    """Without per-request records (imported results): the summary values, effect size only."""
    by_pid = {str(r.get("point_id")): r for r in cand.rows if r.get("valid") is not False}
    out: list[CheckLine] = []
    for m in metrics:
        for rb in base.rows:
            rc = by_pid.get(str(rb.get("point_id")))
            vb, vc = num(rb, m), num(rc, m) if rc is not None else None
            if rb.get("valid") is False or vb is None or vc is None or vb <= 0:
                continue
            verdict = decide(vc / vb - 1.0, None, None, "higher", rule.min_effect)
            out.append(
                CheckLine(
                    m,
                    f"point {rb.get('point_id')}",
                    "higher",
                    vb,
                    vc,
                    vc / vb - 1.0,
                    None,
                    None,
                    verdict,
                    "no per-request records: effect size only",
                )
            )
    return out


def check(cand: RunSample, base: RunSample, rule: Rule | None = None) -> CheckReport:
    """Every line of the test (see the module doc) for a candidate against its baseline."""
    rule = rule or Rule()
    lines = throughput_lines(cand, base, rule) + latency_lines(cand, base, rule)
    return CheckReport(cand.run_id, base.run_id, rule, lines, _label_notes(cand, base))


CONFIG_LABELS = ("system", "framework")  # the rest of a run's identity is `unlike_runs`


def _label_notes(cand: RunSample, base: RunSample) -> list[str]:
    """Say so when the two runs are labelled as different configurations (system, framework)
    or are not like for like (`comparable.unlike_runs`, the rule `history` splits series by:
    ISL, OSL, range ratio, precision class, ...)."""
    if not cand.rows or not base.rows:
        return []
    c, b = cand.rows[0], base.rows[0]
    diffs = [
        f"{k}: {c.get(k)} vs {b.get(k)}" for k in CONFIG_LABELS if str(c.get(k)) != str(b.get(k))
    ]
    notes = [f"the runs differ in {'; '.join(diffs)} (candidate vs baseline)"] if diffs else []
    if unlike := unlike_runs(cand.rows, base.rows):
        notes.append(
            f"the runs are not like for like ({'; '.join(unlike)}; candidate vs baseline): "
            "a change between them is not a regression of one shape"
        )
    return notes
