"""Grouped percentiles with intervals agree with the one-point definition, in any row order."""

from __future__ import annotations

import numpy as np

from scoville.analysis.intervals import grouped_quantile_ci


def test_grouped_matches_textbook_median_interval_and_flags() -> None:
    # group 0: 1..100 (median 50.5, interval [40, 61]); group 1: 40 values (p99 unbounded)
    values = np.r_[np.arange(1.0, 101.0), np.arange(1.0, 41.0)]
    codes = np.r_[np.zeros(100, dtype=np.int64), np.ones(40, dtype=np.int64)]
    got = grouped_quantile_ci(codes, values, [0.5, 0.99], 2)
    assert (got.estimate[0, 0], got.lo[0, 0], got.hi[0, 0]) == (50.5, 40.0, 61.0)
    assert got.n.tolist() == [100, 40]
    assert np.isnan(got.hi[1, 1]) and not got.enough[1, 1] and got.enough[0, 0]
    # p99 of 1..100, numpy's linear definition: 99.01
    assert abs(got.estimate[0, 1] - 99.01) < 1e-9


def test_shuffled_rows_give_the_same_answer_and_nan_is_ignored() -> None:
    rng = np.random.default_rng(0)
    values = rng.lognormal(0, 1, 5000)
    codes = rng.integers(0, 3, 5000).astype(np.int64)
    order = np.argsort(codes, kind="stable")
    a = grouped_quantile_ci(codes, values, [0.9, 0.99], 3)
    b = grouped_quantile_ci(codes[order], values[order], [0.9, 0.99], 3)
    assert np.array_equal(a.estimate, b.estimate) and np.array_equal(a.lo, b.lo)
    with_nan = grouped_quantile_ci(np.r_[codes, 0], np.r_[values, np.nan], [0.9, 0.99], 3)
    assert np.array_equal(with_nan.estimate, a.estimate)
    for g in range(3):
        assert a.estimate[g, 0] == np.quantile(values[codes == g], 0.9)
