"""The fleet rules against constructed series, each expectation worked by hand."""

from __future__ import annotations

import pytest

from scoville.analysis.fleet import (
    Baseline,
    Sample,
    Window,
    baseline,
    budget_burned,
    holm,
    recovery,
    replica_health,
    timeline,
    trend,
)


def _w(start: int, rps: float, p99: float | None, failed: int = 0) -> Window:
    n_ok = int(rps)
    return Window(float(start), float(start + 1), n_ok, failed, rps, 0.0, p99)


# Windows of 1 s: a level of 10 req/s at p99 100 ms, a fault at 5.5 s, a dip in window 6.
SERIES = [
    _w(0, 3, 400),
    _w(1, 12, 90),
    _w(2, 10, 100),
    _w(3, 10, 100),
    _w(4, 10, 100),
    _w(5, 10, 100),
    _w(6, 4, 300, failed=2),
    _w(7, 9, 110),
    _w(8, 10, 100),
    _w(9, 10, 100),
]


def test_baseline_takes_the_windows_before_the_fault_after_warmup() -> None:
    # warmup 2 s, span 10 s, fault at 5.5 s: windows [2,3), [3,4), [4,5) -> 10 req/s, p99 100
    base = baseline(SERIES, 5.5, warmup_s=2.0, span_s=10.0)
    assert base == Baseline(10.0, 100.0, 3)
    # a span of 2 s keeps [4,5) only ([3,4) starts before 5.5 - 2 = 3.5)
    assert baseline(SERIES, 5.5, warmup_s=2.0, span_s=2.0) == Baseline(10.0, 100.0, 1)
    assert baseline(SERIES, 1.0, warmup_s=2.0, span_s=10.0) is None


def test_recovery_is_the_first_held_in_band_window() -> None:
    base = Baseline(10.0, 100.0, 3)
    # band 0.2: in band needs >= 8 req/s and p99 <= 120 ms. Window 5 holds the fault but is
    # in band; 6 is out; 7 (9 req/s, 110 ms) and 8 are in: recovered at 7.0 s, 1.5 s after.
    rec = recovery(SERIES, 5.5, base, band=0.2, error_budget=0.01, hold_windows=2)
    assert (rec.recovered_at_s, rec.recovery_s, rec.out_of_band_windows) == (7.0, 1.5, 1)
    # A tighter band (0.05): window 7 (9 < 9.5 req/s) is out too -> 8.0 s, 2.5 s, 2 windows.
    rec = recovery(SERIES, 5.5, base, band=0.05, error_budget=0.01, hold_windows=2)
    assert (rec.recovered_at_s, rec.recovery_s, rec.out_of_band_windows) == (8.0, 2.5, 2)
    # Needing 4 windows in a row: only 3 are left after window 6 -> not recovered.
    rec = recovery(SERIES, 5.5, base, band=0.2, error_budget=0.01, hold_windows=4)
    assert rec.recovered_at_s is None and rec.recovery_s is None


def test_failures_over_the_budget_keep_a_window_out_of_band() -> None:
    base = Baseline(10.0, 100.0, 3)
    series = [*SERIES[:7], _w(7, 9, 110, failed=1), *SERIES[8:]]  # 1 of 10 failed > 1 %
    rec = recovery(series, 5.5, base, band=0.2, error_budget=0.01, hold_windows=2)
    assert rec.recovered_at_s == 8.0
    rec = recovery(series, 5.5, base, band=0.2, error_budget=0.2, hold_windows=2)
    assert rec.recovered_at_s == 7.0


def test_timeline_counts_ok_and_failed_and_leaves_the_drain_out() -> None:
    samples = [
        Sample(0.5, 100.0, True, 0, 10),
        Sample(1.5, 200.0, True, 1, 10),
        Sample(1.7, 0.0, False, 1),
        Sample(3.0, 300.0, True, 0, 10),
        Sample(4.5, 900.0, True, 0, 10),  # ended after the soak: not in any window
    ]
    w0, w1 = timeline(samples, window_s=2.0, duration_s=4.0)
    # p99 of [100, 200] by linear interpolation: 100 + 0.99 x 100 = 199
    assert (w0.n_ok, w0.n_failed, w0.throughput_rps, w0.tokens_per_s) == (2, 1, 1.0, 10.0)
    assert w0.p99_ms == pytest.approx(199.0)
    assert w0.failed_fraction == pytest.approx(1 / 3)
    assert (w1.n_ok, w1.throughput_rps, w1.p99_ms) == (1, 0.5, 300.0)


def test_holm_adjusts_step_down() -> None:
    # sorted 0.01, 0.03, 0.04 -> 3 x 0.01 = 0.03; 2 x 0.03 = 0.06; max(0.06, 1 x 0.04) = 0.06
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])


def test_the_slower_replica_is_named_with_its_effect_size() -> None:
    same = [float(x) for x in range(1, 21)]
    slow = [float(x) for x in range(15, 35)]
    health = replica_health({0: same, 1: same, 2: slow}, {1: 3}, alpha=0.01, min_effect=0.6)
    # Replica 2 against the 40 pooled values (1..20 twice): x = 15..20 beat 2(x-1) values and
    # tie 2 (half each): 29+31+33+35+37+39 = 204; x = 21..34 beat all 40: 560. U = 764,
    # A = 764 / (20 x 40) = 0.955.
    assert health[2].effect_a == pytest.approx(0.955)
    assert health[2].degraded and health[2].p_holm is not None and health[2].p_holm < 1e-6
    # Replica 0 against 1..20 and 15..34: sum(x-1) = 190, ties 20 x 0.5 = 10, beats of
    # 15..34 for x = 15..20: 0+1+..+5 = 15 and ties 6 x 0.5 = 3. U = 218, A = 0.2725.
    assert health[0].effect_a == pytest.approx(0.2725)
    assert [h.replica for h in health if h.degraded] == [2]
    assert health[1].n_failed == 3 and health[1].median_ms == 10.5


def test_a_small_but_significant_difference_is_not_degraded() -> None:
    base = [float(x) for x in range(1, 201)]
    nudged = [x + 30.0 for x in base]
    # U against one copy of 1..200: x = 1..170 beat x + 29 values and tie one (half):
    # 14535 + 4930 + 85; x = 171..200 beat all 200: 6000. U = 25550, A = 25550 / 40000.
    health = replica_health({0: base, 1: base, 2: nudged}, {}, alpha=0.01, min_effect=0.7)
    assert health[2].p_holm is not None and health[2].p_holm < 0.01
    assert health[2].effect_a == pytest.approx(0.63875)
    assert not health[2].degraded


def test_trend_slope_and_interval() -> None:
    # values 1, 3, 2, 4 at 0..3 h: slope = 4 / 5 = 0.8 per h; residuals -0.3, 0.9, -0.9, 0.3,
    # SSR 1.8, se = sqrt(1.8 / 2 / 5) = 0.42426, t(0.975, 2) = 4.30265 -> +-1.82545
    t = trend([0.0, 3600.0, 7200.0, 10800.0], [1.0, 3.0, 2.0, 4.0])
    assert t is not None
    assert t.slope_per_h == pytest.approx(0.8)
    assert (t.low_per_h, t.high_per_h) == pytest.approx((-1.02545, 2.62545), abs=1e-4)
    assert trend([0.0, 1.0], [1.0, 2.0]) is None


def test_a_level_shift_is_a_change_point() -> None:
    t_s = [10.0 * k for k in range(20)]
    values = [10.0, 10.2, 9.9, 10.1, 10.0, 9.8, 10.1, 10.0, 10.2, 9.9] + [5.0] * 10
    found = trend(t_s, values)
    assert found is not None and found.change_at_s == (100.0,)


def test_error_budget_burned() -> None:
    assert budget_burned(5, 1000, 0.01) == pytest.approx(0.5)  # 0.5 % failed of 1 % allowed
    assert budget_burned(0, 0, 0.01) is None
