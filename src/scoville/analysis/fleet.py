"""Fleet behaviour under faults, from per-request samples: a timeline of windows, the recovery
time after each fault, the degraded-replica test, drift over the soak and the error budget.

Pure functions over plain samples (seconds from the soak's start, latency in ms); the soak
runner builds the samples from `records.jsonl` joined with the router's `replicas.jsonl`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from scoville.analysis.changepoint import change_points

MIN_REPLICA_SAMPLES = 8  # fewer ok requests than this on a replica: no verdict on it


@dataclass(frozen=True, slots=True)
class Sample:
    """One request: when it ended (s from the soak's start), its E2E latency, who served it."""

    end_s: float
    latency_ms: float
    ok: bool
    replica: int  # -1 when no replica took it
    output_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Window:
    """Requests that ended in [start_s, end_s): throughput of ok requests, p99 of their E2E."""

    start_s: float
    end_s: float
    n_ok: int
    n_failed: int
    throughput_rps: float
    tokens_per_s: float
    p99_ms: float | None  # None: no ok request ended in the window

    @property
    def failed_fraction(self) -> float:
        n = self.n_ok + self.n_failed
        return self.n_failed / n if n else 0.0


@dataclass(frozen=True, slots=True)
class Baseline:
    throughput_rps: float  # mean over the baseline windows
    p99_ms: float  # median of the baseline windows' p99
    n_windows: int


@dataclass(frozen=True, slots=True)
class Recovery:
    """`recovered_at_s`: start of the first of `hold_windows` consecutive in-band windows at
    or after the window holding the fault; None when the soak ended first."""

    at_s: float
    recovered_at_s: float | None
    recovery_s: float | None  # recovered_at_s - at_s (>= 0)
    out_of_band_windows: int  # windows from the fault to recovery that were out of band


def timeline(samples: Sequence[Sample], window_s: float, duration_s: float) -> list[Window]:
    """Windows of `window_s` from 0 to `duration_s` (the last may be shorter). Requests that
    end after `duration_s` (the drain of the last in-flight ones) are left out."""
    n = max(1, math.ceil(duration_s / window_s - 1e-9))
    ok: list[list[float]] = [[] for _ in range(n)]
    tokens = [0] * n
    failed = [0] * n
    for s in samples:
        if s.end_s >= duration_s:
            continue
        k = min(n - 1, max(0, int(s.end_s // window_s)))
        if s.ok:
            ok[k].append(s.latency_ms)
            tokens[k] += s.output_tokens
        else:
            failed[k] += 1
    out = []
    for k in range(n):
        start, end = k * window_s, min((k + 1) * window_s, duration_s)
        span = max(end - start, 1e-9)
        p99 = float(np.percentile(ok[k], 99)) if ok[k] else None
        out.append(
            Window(start, end, len(ok[k]), failed[k], len(ok[k]) / span, tokens[k] / span, p99)
        )
    return out


def baseline(
    windows: Sequence[Window], at_s: float, warmup_s: float, span_s: float
) -> Baseline | None:
    """Windows wholly inside [max(warmup_s, at_s - span_s), at_s) with an ok request."""
    lo = max(warmup_s, at_s - span_s)
    chosen = [w for w in windows if w.start_s >= lo - 1e-9 and w.end_s <= at_s + 1e-9]
    p99s = [w.p99_ms for w in chosen if w.p99_ms is not None]
    if not chosen or not p99s:
        return None
    tput = float(np.mean([w.throughput_rps for w in chosen]))
    return Baseline(tput, float(np.median(p99s)), len(chosen))


def in_band(w: Window, base: Baseline, band: float, error_budget: float) -> bool:
    """Throughput >= (1 - band) x baseline, p99 <= (1 + band) x baseline, failures within
    the error budget. A window with no ok request is out of band."""
    if w.p99_ms is None:
        return False
    return (
        w.throughput_rps >= (1 - band) * base.throughput_rps
        and w.p99_ms <= (1 + band) * base.p99_ms
        and w.failed_fraction <= error_budget
    )


def recovery(
    windows: Sequence[Window],
    at_s: float,
    base: Baseline,
    band: float,
    error_budget: float,
    hold_windows: int,
) -> Recovery:
    """Recovery from a fault at `at_s` (resolution: one window)."""
    first = next((k for k, w in enumerate(windows) if w.end_s > at_s), len(windows))
    flags = [in_band(w, base, band, error_budget) for w in windows]
    for j in range(first, len(windows) - hold_windows + 1):
        if all(flags[j : j + hold_windows]):
            rec_s = max(windows[j].start_s, at_s)
            bad = sum(1 for f in flags[first:j] if not f)
            return Recovery(at_s, rec_s, rec_s - at_s, bad)
    return Recovery(at_s, None, None, sum(1 for f in flags[first:] if not f))


@dataclass(frozen=True, slots=True)
class ReplicaHealth:
    """One replica's latency against the pooled others: Mann-Whitney U (one-sided, this
    replica slower), Holm-adjusted, and the probability of superiority A = U / (n x m)."""

    replica: int
    n_ok: int
    n_failed: int
    median_ms: float | None
    p99_ms: float | None
    effect_a: float | None  # P(this replica's latency > a peer's), ties counted half
    p_value: float | None
    p_holm: float | None
    degraded: bool


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values (monotone, capped at 1), in the input order."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def replica_health(
    latencies_ms: Mapping[int, Sequence[float]],
    failed: Mapping[int, int],
    alpha: float,
    min_effect: float,
) -> list[ReplicaHealth]:
    """Each replica with at least MIN_REPLICA_SAMPLES ok requests is tested against the
    pooled ok latencies of the others; degraded = Holm-adjusted p < alpha and A >= min_effect."""
    from scipy.stats import mannwhitneyu

    reps = sorted(set(latencies_ms) | set(failed))
    tested: dict[int, tuple[float, float]] = {}
    for r in reps:
        mine = list(latencies_ms.get(r, ()))
        rest = [x for q in reps if q != r for x in latencies_ms.get(q, ())]
        if len(mine) >= MIN_REPLICA_SAMPLES and len(rest) >= MIN_REPLICA_SAMPLES:
            res = mannwhitneyu(mine, rest, alternative="greater", method="asymptotic")
            tested[r] = (float(res.statistic) / (len(mine) * len(rest)), float(res.pvalue))
    adjusted = dict(zip(tested, holm([p for _a, p in tested.values()]), strict=True))
    out = []
    for r in reps:
        lat = list(latencies_ms.get(r, ()))
        a, p = tested.get(r, (None, None))
        ph = adjusted.get(r)
        bad = ph is not None and a is not None and ph < alpha and a >= min_effect
        out.append(
            ReplicaHealth(
                r,
                len(lat),
                failed.get(r, 0),
                float(np.median(lat)) if lat else None,
                float(np.percentile(lat, 99)) if lat else None,
                a,
                p,
                ph,
                bad,
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class Trend:
    """Least-squares slope of a series against time, per hour, with its 95 % interval, and
    the times where PELT finds a new level (analysis/changepoint.py)."""

    slope_per_h: float
    low_per_h: float
    high_per_h: float
    change_at_s: tuple[float, ...]


def trend(t_s: Sequence[float], values: Sequence[float]) -> Trend | None:
    """OLS slope (units per hour) with a Student-t 95 % interval; None under 3 points."""
    from scipy.stats import t as student_t

    n = len(values)
    if n < 3:
        return None
    x = np.asarray(t_s, dtype=np.float64) / 3600.0
    y = np.asarray(values, dtype=np.float64)
    xc = x - x.mean()
    sxx = float(np.dot(xc, xc))
    if sxx == 0:
        return None
    slope = float(np.dot(xc, y - y.mean())) / sxx
    resid = y - (y.mean() + slope * xc)
    se = math.sqrt(float(np.dot(resid, resid)) / (n - 2) / sxx)
    half = float(student_t.ppf(0.975, n - 2)) * se
    cps = tuple(float(t_s[i]) for i in change_points(list(values)))
    return Trend(slope, slope - half, slope + half, cps)


def budget_burned(n_failed: int, n_sent: int, error_budget: float) -> float | None:
    """Failed fraction over the allowed fraction: 1.0 is the whole budget spent."""
    if n_sent == 0 or error_budget == 0:
        return None
    return (n_failed / n_sent) / error_budget
