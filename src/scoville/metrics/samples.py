"""Sample-size honesty for percentiles: how many samples a distribution-free interval needs,
the order-statistic interval itself, and the flag a too-small sample carries.

A 100q-th percentile estimated from n samples has a distribution-free confidence interval
[X_(r), X_(s)] between two order statistics: the number of samples below the true quantile is
Binomial(n, q), so P(X_(r) <= xi_q < X_(s)) = P(r <= B < s). The widest interval available
is [X_(1), X_(n)], and even its upper end misses xi_q with probability q^n (every sample fell
below it). A two-sided interval at level 1 - alpha therefore exists only when
q^n <= alpha / 2, i.e. n >= ln(alpha / 2) / ln(q): 72 samples for a p95, 368 for a p99 and
3,688 for a p99.9 at 95 % (GuideLLM's documented rule of thumb). Below that, the upper end of
any honest interval is unbounded and the percentile is marked, not printed as if exact.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import binom

from scoville.errors import SpecError
from scoville.records.model import RequestRecord
from scoville.spec.model import LoadSpec

LEVEL = 0.95


def min_samples(q: float, level: float = LEVEL) -> int:
    """Fewest samples for a distribution-free two-sided `level` interval on the q-quantile.

    n = ceil(ln((1 - level) / 2) / ln(max(q, 1 - q))); q in (0, 1). The tail nearer the
    quantile decides (the median needs 6 samples, as does the 50th percentile either side)."""
    if not 0.0 < q < 1.0:
        raise ValueError(f"quantile q={q} must lie strictly between 0 and 1")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level={level} must lie strictly between 0 and 1")
    tail = (1.0 - level) / 2.0
    return math.ceil(math.log(tail) / math.log(max(q, 1.0 - q)) - 1e-9)


@dataclass(frozen=True, slots=True)
class QuantileCI:
    """A percentile with its sample count and distribution-free interval.

    `lo`/`hi` are order statistics (None where no honest bound exists: too few samples);
    `enough` is False when n < min_samples(q, level), the flag reports carry."""

    q: float
    estimate: float | None
    n: int
    lo: float | None
    hi: float | None
    enough: bool


def order_ranks(n: int, q: float, level: float = LEVEL) -> tuple[int | None, int | None]:
    """1-based ranks (r, s) of the interval [X_(r), X_(s)] with P(r <= B < s) >= level,
    B ~ Binomial(n, q), centred on the tails; None where the rank falls outside 1..n."""
    tail = (1.0 - level) / 2.0
    r = int(binom.ppf(tail, n, q))  # P(B < r) <= tail
    s = int(binom.ppf(1.0 - tail, n, q)) + 1  # P(B >= s) <= tail
    return (r if r >= 1 else None), (s if s <= n else None)


def quantile_ci(sorted_values: Sequence[float], q: float, level: float = LEVEL) -> QuantileCI:
    """The q-quantile (numpy's linear definition, as the metrics table) of ascending values,
    with its order-statistic interval and sample-size flag."""
    n = len(sorted_values)
    if n == 0:
        return QuantileCI(q, None, 0, None, None, False)
    arr = np.asarray(sorted_values, dtype=np.float64)
    est = float(np.quantile(arr, q))
    r, s = order_ranks(n, q, level)
    lo = float(arr[r - 1]) if r is not None else None
    hi = float(arr[s - 1]) if s is not None else None
    return QuantileCI(q, est, n, lo, hi, n >= min_samples(q, level))


# The percentiles a summary row reports (metrics table STATS) and their quantile.
FLAGGED: dict[str, float] = {"median": 0.5, "p90": 0.9, "p99": 0.99, "p999": 0.999}


def percentile_columns(values_by_stem: Mapping[str, Sequence[float]]) -> dict[str, object]:
    """Row fields for each latency's percentiles: `n_<stem>`, `<stat>_<stem>_lo`/`_hi` (95 %
    order-statistic interval; None when unbounded) and `few_samples`, the names of the
    percentiles whose sample count is below the rule. Interactivity percentiles are
    1 / TPOT percentiles, so they share TPOT's count and flag."""
    out: dict[str, object] = {}
    few: list[str] = []
    for stem, values in values_by_stem.items():
        ordered = np.sort(np.asarray(values, dtype=np.float64))
        out[f"n_{stem}"] = int(ordered.size)
        for stat, q in FLAGGED.items():
            ci = quantile_ci(ordered.tolist(), q)
            out[f"{stat}_{stem}_lo"], out[f"{stat}_{stem}_hi"] = ci.lo, ci.hi
            if ordered.size and not ci.enough:
                few.append(f"{stat}_{stem}")
                if stem == "tpot":
                    few.append(f"{stat}_intvty")
    out["few_samples"] = few
    return out


# ---- statistical stopping -------------------------------------------------------------------

Z95 = 1.959963984540054  # two-sided 95 % normal quantile, for means


def relative_margin(values: Sequence[float], stat: str, level: float = LEVEL) -> float:
    """Relative margin of error of one statistic ("mean" or a FLAGGED percentile name) at
    `level`: for a percentile, the larger distance from the estimate to an order-statistic
    bound, over the estimate (inf when a bound does not exist yet); for the mean,
    z * sd / sqrt(n) / |mean| (normal approximation)."""
    arr = np.sort(np.asarray(values, dtype=np.float64))
    if arr.size < 2:
        return math.inf
    if stat == "mean":
        mean = float(arr.mean())
        return Z95 * float(arr.std(ddof=1)) / math.sqrt(arr.size) / abs(mean) if mean else math.inf
    ci = quantile_ci(arr.tolist(), FLAGGED[stat], level)
    if ci.lo is None or ci.hi is None or not ci.estimate:
        return math.inf
    return max(ci.estimate - ci.lo, ci.hi - ci.estimate) / abs(ci.estimate)


@dataclass(frozen=True, slots=True)
class StopRule:
    """Run a point until every statistic's relative margin is at most `target_margin`
    (e.g. 0.05 = +-5 % at 95 %), or until `cap` measured requests. Statistics are named as in
    summary rows: "p99_ttft", "median_tpot", "mean_e2e"."""

    target_margin: float
    stats: tuple[str, ...] = ("median_e2e", "p99_ttft")
    cap: int = 10_000


def margins(values_by_stem: Mapping[str, Sequence[float]], rule: StopRule) -> dict[str, float]:
    out: dict[str, float] = {}
    for name in rule.stats:
        stat, _, stem = name.partition("_")
        if stem not in values_by_stem or (stat != "mean" and stat not in FLAGGED):
            raise ValueError(f"unknown statistic {name!r}; use e.g. p99_ttft or mean_e2e")
        out[name] = relative_margin(values_by_stem[stem], stat)
    return out


def should_stop(
    values_by_stem: Mapping[str, Sequence[float]], n_measured: int, rule: StopRule
) -> bool:
    """The stopping decision after `n_measured` measured requests (the cap always stops)."""
    if n_measured >= rule.cap:
        return True
    return all(m <= rule.target_margin for m in margins(values_by_stem, rule).values())


class MarginTracker:
    """Collects a point's measured, successful requests (TTFT, TPOT, E2E in seconds) and
    answers `reached()`: the driver's `stop` predicate for a `StopRule`. The rule is evaluated
    every 5 % of growth in the sample (sorting is O(n log n)), always at the cap."""

    def __init__(self, rule: StopRule) -> None:
        self.rule = rule
        self.values: dict[str, list[float]] = {"ttft": [], "tpot": [], "e2e": []}
        self._next_check = 2
        self._done = False

    def observe(self, r: RequestRecord) -> None:
        if r.phase != "measure" or not r.ok or not r.chunk_ns:
            return
        self.values["ttft"].append((r.chunk_ns[0] - r.start_ns) / 1e9)
        self.values["e2e"].append((r.end_ns - r.start_ns) / 1e9)
        if r.output_tokens > 1:
            self.values["tpot"].append((r.end_ns - r.chunk_ns[0]) / 1e9 / (r.output_tokens - 1))

    @property
    def n(self) -> int:
        return len(self.values["e2e"])

    def reached(self) -> bool:
        if self._done or self.n >= self.rule.cap:
            self._done = True
            return True
        if self.n < self._next_check:
            return False
        self._next_check = max(self.n + 1, int(self.n * 1.05))
        self._done = should_stop(self.values, self.n, self.rule)
        return self._done


# ---- stopping as a spec declares it ----------------------------------------------------------


def stop_rule_for(load: LoadSpec, cap: int) -> StopRule | None:
    """The `StopRule` of a point with `cap` planned measured requests (None: no target margin)."""
    if load.target_margin is None:
        return None
    return StopRule(load.target_margin, load.margin_stats, cap)


def samples_needed(stats: Sequence[str]) -> int:
    """Fewest samples at which every statistic's 95 % margin exists: a percentile's
    `min_samples`, 2 for a mean (the sample sd)."""
    return max(
        2 if s.partition("_")[0] == "mean" else min_samples(FLAGGED[s.partition("_")[0]])
        for s in stats
    )


def refuse_unreachable_margin(load: LoadSpec, caps: Sequence[int]) -> None:
    """A point whose cap is below the samples its statistics need could never reach the
    margin: refuse the spec before anything is measured."""
    if load.target_margin is None or not caps:
        return
    need = samples_needed(load.margin_stats)
    if min(caps) < need:
        raise SpecError(
            f"load.target_margin {load.target_margin:g} on {', '.join(load.margin_stats)} "
            f"needs at least {need:,} successful requests a point before any 95 % margin "
            f"exists, but a point is capped at {min(caps):,} (load.requests_per_point). Raise "
            "--requests-per-point, or choose statistics that need fewer samples (a median "
            "needs 6, a p90 36, a p99 368)."
        )


def point_margin(
    values_by_stem: Mapping[str, Sequence[float]], load: LoadSpec
) -> dict[str, float | bool | None]:
    """`stop_margin` (the largest relative margin over `load.margin_stats` when the point
    ended; None when a bound does not exist yet) and `margin_reached` (None without a
    target margin)."""
    if load.target_margin is None:
        return {"stop_margin": None, "margin_reached": None}
    worst = max(margins(values_by_stem, StopRule(load.target_margin, load.margin_stats)).values())
    finite_margin = worst if math.isfinite(worst) else None
    reached = finite_margin is not None and finite_margin <= load.target_margin
    return {"stop_margin": finite_margin, "margin_reached": reached}


def margin_note(points: Sequence[Mapping[str, object]], load: LoadSpec) -> str | None:
    """One line for the run's notes: where the target margin was reached and where a point
    hit its cap first (its intervals are then wider than asked; the point stays valid)."""
    if load.target_margin is None:
        return None
    head = f"target margin +-{load.target_margin:.1%} at 95 % on {', '.join(load.margin_stats)}"
    reached = [f"{p['point_id']} (n={p['n_ok']})" for p in points if p.get("margin_reached")]
    missed = [
        f"{p['point_id']} (n={p['n_ok']}, margin "
        + (f"{m:.1%})" if isinstance(m := p.get("stop_margin"), float) else "unbounded)")
        for p in points
        if p.get("margin_reached") is False
    ]
    parts = [f"reached at {', '.join(reached)}"] if reached else []
    if missed:
        parts.append(
            f"NOT reached within the cap at {', '.join(missed)}: intervals wider than asked "
            "(raise --requests-per-point)"
        )
    return f"{head}: {'; '.join(parts) or 'no point measured'}"
