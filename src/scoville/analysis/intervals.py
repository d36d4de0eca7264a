"""Percentiles with distribution-free intervals for millions of requests, column at a time.

Requests arrive as flat arrays with a point code per request (from Arrow/Parquet columns via
the store). Each point's values are reached through one stable argsort by code (skipped when
the codes are already contiguous, as the store writes them), and each percentile with its
order-statistic interval comes from one `np.partition` per point (O(n)): the Python loop runs
over points, never over requests. The rule and ranks are `scoville.metrics.samples`'.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from scoville.metrics.samples import LEVEL, min_samples, order_ranks

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class GroupedCI:
    """Per point (rows) and quantile (columns): estimate, interval bounds (NaN: unbounded),
    the sample count per point and whether it meets the rule for each quantile."""

    qs: tuple[float, ...]
    estimate: FloatArray
    lo: FloatArray
    hi: FloatArray
    n: IntArray
    enough: npt.NDArray[np.bool_]


def _segments(codes: IntArray, n_groups: int) -> tuple[IntArray | None, IntArray, IntArray]:
    """(order or None when already contiguous, segment starts, counts) per group."""
    counts = np.bincount(codes, minlength=n_groups).astype(np.int64)
    contiguous = codes.size < 2 or bool(np.all(codes[1:] >= codes[:-1]))
    order = None if contiguous else np.argsort(codes, kind="stable").astype(np.int64)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    return order, starts, counts


def _one(chunk: FloatArray, qs: Sequence[float], level: float) -> list[tuple[float, float, float]]:
    n = chunk.size
    ranks: list[tuple[int | None, int | None, int, int, float]] = []
    kth: set[int] = set()
    for q in qs:
        r, s = order_ranks(n, q, level)
        h = (n - 1) * q  # numpy's linear quantile: between ranks floor(h) and ceil(h) (0-based)
        lo_i, hi_i = int(np.floor(h)), int(np.ceil(h))
        ranks.append((r, s, lo_i, hi_i, h - lo_i))
        kth.update(k for k in (lo_i, hi_i, (r or 1) - 1, (s or 1) - 1))
    part = np.partition(chunk, sorted(kth))
    out = []
    for r, s, lo_i, hi_i, frac in ranks:
        est = float(part[lo_i] + (part[hi_i] - part[lo_i]) * frac)
        lo = float(part[r - 1]) if r is not None else np.nan
        hi = float(part[s - 1]) if s is not None else np.nan
        out.append((est, lo, hi))
    return out


def grouped_quantile_ci(
    codes: IntArray,
    values: FloatArray,
    qs: Sequence[float],
    n_groups: int,
    level: float = LEVEL,
) -> GroupedCI:
    """Quantiles (numpy's linear definition) with order-statistic intervals per group;
    non-finite values are left out of their group."""
    keep = np.isfinite(values)
    if not keep.all():
        codes, values = codes[keep], values[keep]
    order, starts, counts = _segments(codes, n_groups)
    v = values if order is None else values[order]
    shape = (n_groups, len(qs))
    est, lo, hi = np.full(shape, np.nan), np.full(shape, np.nan), np.full(shape, np.nan)
    for g in range(n_groups):
        if counts[g] == 0:
            continue
        chunk = v[starts[g] : starts[g] + counts[g]]  # a view: np.partition copies once
        for j, (e, a, b) in enumerate(_one(chunk, qs, level)):
            est[g, j], lo[g, j], hi[g, j] = e, a, b
    need = np.array([min_samples(q, level) for q in qs], dtype=np.int64)
    enough = counts[:, None] >= need[None, :]
    return GroupedCI(tuple(qs), est, lo, hi, counts, enough)
