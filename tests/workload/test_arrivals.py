"""Arrival processes: rate, order, and burstiness (coefficient of variation = 1/sqrt(k))."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from scoville.workload.arrivals import arrival_offsets_ns


@given(st.integers(1, 300), st.floats(0.1, 500), st.floats(0.1, 5), st.integers(0, 99))
def test_offsets_start_at_zero_and_never_decrease(n, rate, k, seed) -> None:
    off = arrival_offsets_ns(n, rate, k, seed)
    assert len(off) == n and off[0] == 0
    assert all(b >= a for a, b in pairwise(off))


def test_mean_rate_and_burstiness() -> None:
    for k in (0.25, 1.0, 4.0):
        off = np.asarray(arrival_offsets_ns(20001, 50.0, k, seed=11)) / 1e9
        gaps = np.diff(off)
        assert abs(gaps.mean() - 0.02) / 0.02 < 0.05
        cv = gaps.std() / gaps.mean()
        assert abs(cv - 1 / np.sqrt(k)) / (1 / np.sqrt(k)) < 0.08
