"""Paired statistics that answer "equivalent?" for two targets scored on the same items.

McNemar's exact test (are they different?), a paired bootstrap interval, TOST equivalence
against a relative margin (are they the same, within the margin?), MLPerf's tokens-per-sample
rule, and the number of items a verdict would need. Pure functions; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

Verdict = Literal["equivalent", "not equivalent", "not enough evidence"]

MLPERF_MARGIN = 0.01  # candidate >= 99 % of the reference's accuracy; 0.001 for the 99.9 % tier
TOKEN_RATIO_BOUNDS = (0.9, 1.1)  # MLPerf: generated tokens per sample within 90-110 %
MAX_FAILED_SHARE = 0.05  # more failed requests than this and no accuracy verdict is given


@dataclass(frozen=True, slots=True)
class PairTable:
    """The 2x2 table of paired outcomes. `ref_only`: right on the reference, not on the
    candidate (the discordant pair McNemar calls b); `cand_only`: the other way (c)."""

    both_right: int
    ref_only: int
    cand_only: int
    both_wrong: int

    @property
    def n(self) -> int:
        return self.both_right + self.ref_only + self.cand_only + self.both_wrong

    @property
    def ref_accuracy(self) -> float:
        return (self.both_right + self.ref_only) / self.n if self.n else 0.0

    @property
    def cand_accuracy(self) -> float:
        return (self.both_right + self.cand_only) / self.n if self.n else 0.0

    @property
    def diff(self) -> float:
        """Candidate accuracy minus reference accuracy (fraction, not points)."""
        return (self.cand_only - self.ref_only) / self.n if self.n else 0.0


def pair_table(ref_right: Sequence[bool], cand_right: Sequence[bool]) -> PairTable:
    """Tabulate paired outcomes; item i of both sequences is the same prompt."""
    if len(ref_right) != len(cand_right):
        raise ValueError("paired outcomes need the same items on both sides")
    pairs = list(zip(ref_right, cand_right, strict=True))
    return PairTable(
        both_right=sum(1 for r, c in pairs if r and c),
        ref_only=sum(1 for r, c in pairs if r and not c),
        cand_only=sum(1 for r, c in pairs if c and not r),
        both_wrong=sum(1 for r, c in pairs if not r and not c),
    )


def mcnemar_exact_p(ref_only: int, cand_only: int) -> float:
    """Two-sided exact McNemar p: 2 x P(X <= min(b, c)), X ~ Binomial(b + c, 1/2), capped at 1.

    Only discordant pairs carry information; with none, p = 1."""
    n = ref_only + cand_only
    if n == 0:
        return 1.0
    k = min(ref_only, cand_only)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return float(min(1.0, 2.0 * tail))


def normal_cdf(z: float) -> float:
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


def normal_quantile(p: float) -> float:
    """Inverse of `normal_cdf` by bisection (exact to 1e-12; used for a handful of calls)."""
    lo, hi = -40.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if normal_cdf(mid) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


@dataclass(frozen=True, slots=True)
class Interval:
    """A point estimate with a percentile bootstrap interval at `level` (e.g. 0.90)."""

    estimate: float
    lo: float
    hi: float
    level: float


def bootstrap_mean(
    values: Sequence[float], level: float = 0.95, n_resamples: int = 2000, seed: int = 0
) -> Interval | None:
    """Percentile bootstrap interval of the mean of per-item values (None for no items).

    Per-item values here take few distinct values (0/1 outcomes, -1/0/1 paired differences), so
    a resample is drawn as multinomial counts over the distinct values: the same distribution
    as resampling items with replacement, at a cost independent of the number of items."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.size == 0:
        return None
    rng = np.random.default_rng(seed)
    uniq, counts = np.unique(arr, return_counts=True)
    if uniq.size <= 64:
        draws = rng.multinomial(arr.size, counts / arr.size, size=n_resamples)
        means = draws @ uniq / arr.size
    else:
        means = arr[rng.integers(0, arr.size, size=(n_resamples, arr.size))].mean(axis=1)
    tail = (1.0 - level) / 2.0 * 100.0
    lo, hi = np.percentile(means, [tail, 100.0 - tail])
    return Interval(float(arr.mean()), float(lo), float(hi), level)


def paired_bootstrap_diff(
    ref_right: Sequence[bool],
    cand_right: Sequence[bool],
    level: float = 0.90,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Interval | None:
    """Interval of candidate minus reference accuracy, resampling whole items (pairs)."""
    d = [float(c) - float(r) for r, c in zip(ref_right, cand_right, strict=True)]
    return bootstrap_mean(d, level, n_resamples, seed)


def paired_se(table: PairTable) -> float:
    """Standard error of the paired accuracy difference, with 0.5 added to each discordant
    cell so that a run with no discordant pair does not claim zero uncertainty:
    se = sqrt(b' + c' - (b' - c')^2 / n) / n, b' = b + 1/2, c' = c + 1/2."""
    n = table.n
    b, c = table.ref_only + 0.5, table.cand_only + 0.5
    return math.sqrt(max(b + c - (b - c) ** 2 / n, 0.0)) / n


@dataclass(frozen=True, slots=True)
class Tost:
    """Two one-sided tests of |candidate - reference| < margin (margin in accuracy units).

    `p_lower` tests "candidate worse by the margin or more", `p_upper` "better by the margin
    or more"; equivalence is shown when both are below alpha. `worse`/`better` say the
    (1 - 2 alpha) interval lies wholly outside the margin on that side."""

    margin_abs: float
    diff: float
    se: float
    p_lower: float
    p_upper: float
    alpha: float

    @property
    def equivalent(self) -> bool:
        return max(self.p_lower, self.p_upper) < self.alpha

    def _z(self) -> float:
        return normal_quantile(1.0 - self.alpha)

    @property
    def worse(self) -> bool:
        return self.diff + self._z() * self.se < -self.margin_abs

    @property
    def better(self) -> bool:
        return self.diff - self._z() * self.se > self.margin_abs


def tost(table: PairTable, margin_rel: float = MLPERF_MARGIN, alpha: float = 0.05) -> Tost:
    """TOST on the paired difference, margin = `margin_rel` x the reference's accuracy
    (MLPerf's rule: the candidate keeps at least 99 % of the reference's accuracy).
    z_lower = (diff + m) / se, z_upper = (m - diff) / se; p = 1 - Phi(z)."""
    m = margin_rel * table.ref_accuracy
    se = paired_se(table)
    diff = table.diff
    return Tost(
        margin_abs=m,
        diff=diff,
        se=se,
        p_lower=1.0 - normal_cdf((diff + m) / se),
        p_upper=1.0 - normal_cdf((m - diff) / se),
        alpha=alpha,
    )


def required_items(
    discordant_rate: float, margin_abs: float, alpha: float = 0.05, power: float = 0.8
) -> int | None:
    """Items a paired TOST needs to show equivalence with `power` when the true difference is
    zero: n = (z_{1-alpha} + z_{1-(1-power)/2})^2 x discordant_rate / margin^2.
    None when the margin is zero (no finite sample shows equivalence to a point)."""
    if margin_abs <= 0.0:
        return None
    z = normal_quantile(1.0 - alpha) + normal_quantile(1.0 - (1.0 - power) / 2.0)
    return math.ceil(z * z * discordant_rate / (margin_abs * margin_abs))


def token_ratio_ok(ref_tokens_mean: float, cand_tokens_mean: float) -> bool | None:
    """MLPerf's rule: candidate tokens per sample within 90-110 % of the reference's."""
    if ref_tokens_mean <= 0:
        return None
    lo, hi = TOKEN_RATIO_BOUNDS
    return lo <= cand_tokens_mean / ref_tokens_mean <= hi


@dataclass(frozen=True, slots=True)
class AccuracyVerdict:
    """The accuracy comparison in plain words, with the numbers behind it."""

    verdict: Verdict
    reason: str
    table: PairTable
    mcnemar_p: float
    diff_interval: Interval | None  # candidate - reference, paired bootstrap, 1 - 2 alpha
    tost: Tost | None
    needed_items: int | None


def _points(x: float) -> str:
    return f"{100.0 * x:.2g}-point"


def accuracy_verdict(
    ref_right: Sequence[bool],
    cand_right: Sequence[bool],
    failed_share: float,
    margin_rel: float = MLPERF_MARGIN,
    alpha: float = 0.05,
    seed: int = 0,
) -> AccuracyVerdict:
    """Equivalent when TOST shows |diff| < margin; not equivalent when the (1 - 2 alpha)
    interval lies wholly outside the margin; otherwise not enough evidence (with the items a
    verdict would need). Failed requests count as not right; above 5 % failed, no verdict."""
    table = pair_table(ref_right, cand_right)
    p = mcnemar_exact_p(table.ref_only, table.cand_only)
    if table.n == 0:
        return AccuracyVerdict("not enough evidence", "no items", table, p, None, None, None)
    interval = paired_bootstrap_diff(ref_right, cand_right, 1.0 - 2.0 * alpha, seed=seed)
    t = tost(table, margin_rel, alpha)
    if failed_share > MAX_FAILED_SHARE:
        reason = f"{100 * failed_share:.1f} % of requests failed (over 5 %): no verdict"
        return AccuracyVerdict("not enough evidence", reason, table, p, interval, t, None)
    if t.equivalent:
        p_tost = max(t.p_lower, t.p_upper)
        reason = f"accuracy within a {_points(t.margin_abs)} margin (TOST p {p_tost:.3f})"
        return AccuracyVerdict("equivalent", reason, table, p, interval, t, None)
    if t.worse or t.better:
        side = "below" if t.worse else "above"
        reason = f"accuracy differs by more than the {_points(t.margin_abs)} margin ({side})"
        return AccuracyVerdict("not equivalent", reason, table, p, interval, t, None)
    needed = required_items((table.ref_only + table.cand_only + 1) / table.n, t.margin_abs)
    if needed is None:
        reason = "the reference scored 0, so a relative margin is 0 and cannot be met"
    else:
        reason = (
            f"{table.n} items cannot show equivalence at a {_points(t.margin_abs)} margin; "
            f"about {needed} are needed"
        )
    return AccuracyVerdict("not enough evidence", reason, table, p, interval, t, needed)
