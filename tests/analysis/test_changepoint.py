"""Change points over nightly series (PELT), and the history trend that marks them."""

from __future__ import annotations

import numpy as np

from scoville.analysis.changepoint import change_points
from scoville.analysis.history import RunRows, history


def test_a_ten_percent_drop_is_found_where_it_starts() -> None:
    rng = np.random.default_rng(3)
    series = np.r_[1000 + rng.normal(0, 10, 12), 900 + rng.normal(0, 10, 10)]
    assert change_points(series.tolist()) == [12]


def test_noise_alone_has_no_change_point() -> None:
    rng = np.random.default_rng(4)
    assert change_points((1000 + rng.normal(0, 10, 30)).tolist()) == []


def test_two_shifts_are_both_found() -> None:
    rng = np.random.default_rng(5)
    series = np.r_[100 + rng.normal(0, 1, 8), 120 + rng.normal(0, 1, 8), 95 + rng.normal(0, 1, 8)]
    assert change_points(series.tolist()) == [8, 16]


def test_short_series_say_nothing() -> None:
    assert change_points([1.0, 2.0, 50.0]) == []


def _run(i: int, tput_c1: float, tput_c8: float) -> RunRows:
    rows = [
        {"point_id": "c1", "median_intvty": 100.0, "tput_per_gpu": tput_c1, "valid": True},
        {"point_id": "c8", "median_intvty": 50.0, "tput_per_gpu": tput_c8, "valid": True},
    ]
    return RunRows(f"r{i}", f"2026-11-{i + 1:02d}", rows)


def test_history_reads_each_frontier_at_one_interactivity() -> None:
    runs = [_run(i, 100.0, 500.0) for i in range(5)] + [_run(i, 80.0, 400.0) for i in range(5, 9)]
    trend = history(runs, "tput_per_gpu", at_x=100.0)
    assert [h.value for h in trend] == [100.0] * 5 + [80.0] * 4  # measured at c1
    assert [h.run_id for h in trend if h.change] == ["r5"]
    # 120 tok/s/user was never reached: no value, never an extrapolation.
    assert {h.status for h in history(runs, "tput_per_gpu", at_x=120.0)} == {"unreachable"}
    # Below the measured range the nearest measured throughput is a bound, not a value.
    low = history(runs, "tput_per_gpu", at_x=40.0)[0]
    assert (low.value, low.status, low.bound) == (None, "below_range", 500.0)
