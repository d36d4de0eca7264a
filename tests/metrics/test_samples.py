"""The sample-size rule and the order-statistic interval, against published and textbook values."""

from __future__ import annotations

import math

import pytest

from scoville.metrics.samples import (
    StopRule,
    min_samples,
    order_ranks,
    percentile_columns,
    quantile_ci,
    relative_margin,
    should_stop,
)


@pytest.mark.parametrize(
    ("q", "n"),
    [(0.95, 72), (0.99, 368), (0.999, 3688), (0.5, 6), (0.9, 36), (0.05, 72)],
)
def test_min_samples_matches_the_rule_of_thumb(q: float, n: int) -> None:
    # 72 / 368 / 3,688 are GuideLLM's documented counts for p95 / p99 / p99.9 at 95 %.
    assert min_samples(q) == n


def test_min_samples_is_the_boundary_where_an_upper_bound_appears() -> None:
    assert order_ranks(367, 0.99)[1] is None  # 0.99^367 = 0.02502 > 0.025: no upper bound
    assert order_ranks(368, 0.99)[1] == 368  # 0.99^368 = 0.02477: the maximum is the bound


def test_median_interval_of_100_samples_is_the_textbook_one() -> None:
    # Conover, Practical Nonparametric Statistics: n = 100, 95 % -> ranks 40 and 61.
    assert order_ranks(100, 0.5) == (40, 61)
    ci = quantile_ci([float(v) for v in range(1, 101)], 0.5)
    assert (ci.estimate, ci.lo, ci.hi, ci.n, ci.enough) == (50.5, 40.0, 61.0, 100, True)


def test_few_samples_are_flagged_with_no_upper_bound() -> None:
    values = [float(v) for v in range(1, 41)]  # 40 samples: enough for p90, not for p99
    ci = quantile_ci(values, 0.99)
    assert not ci.enough and ci.hi is None and ci.n == 40
    cols = percentile_columns({"ttft": values, "tpot": values})
    assert cols["n_ttft"] == 40
    assert cols["p90_ttft_hi"] is not None and cols["p99_ttft_hi"] is None
    assert cols["few_samples"] == [
        "p99_ttft",
        "p999_ttft",
        "p99_tpot",
        "p99_intvty",
        "p999_tpot",
        "p999_intvty",
    ]


def test_bad_quantile_is_refused() -> None:
    with pytest.raises(ValueError, match="strictly between"):
        min_samples(1.0)


def test_margin_of_a_percentile_needs_its_upper_bound() -> None:
    values = [float(v) for v in range(1, 101)]
    # median 50.5, interval [40, 61]: the larger side is 10.5 / 50.5
    assert relative_margin(values, "median") == pytest.approx(10.5 / 50.5)
    assert relative_margin(values, "p99") == math.inf  # 100 < 368 samples
    rule = StopRule(target_margin=0.25, stats=("median_e2e",), cap=1000)
    assert should_stop({"e2e": values}, 100, rule)
    assert not should_stop({"e2e": values}, 100, StopRule(0.1, ("median_e2e",), 1000))
    assert should_stop({"e2e": values}, 1000, StopRule(0.1, ("p99_e2e",), 1000))  # the cap


def test_mean_margin_is_the_normal_interval() -> None:
    # values 9 and 11 repeated: mean 10, sd 1.0050 (ddof 1) over n = 100 -> 1.96 * 0.1005 / 10
    values = [9.0, 11.0] * 50
    assert relative_margin(values, "mean") == pytest.approx(0.019698, rel=1e-4)


def test_samples_needed_is_the_strictest_statistic() -> None:
    from scoville.metrics.samples import samples_needed

    assert samples_needed(("mean_e2e",)) == 2
    assert samples_needed(("median_e2e",)) == 6
    assert samples_needed(("median_e2e", "p99_ttft")) == 368


def test_point_margin_reports_the_worst_statistic() -> None:
    from scoville.metrics.samples import point_margin
    from scoville.spec.model import LoadSpec

    values = {"e2e": [float(v) for v in range(1, 101)], "ttft": [1.0] * 100, "tpot": []}
    loose = LoadSpec(target_margin=0.25, margin_stats=("median_e2e", "median_ttft"))
    # median_e2e: 10.5 / 50.5 (above); median_ttft: 0 (all equal)
    assert point_margin(values, loose) == {
        "stop_margin": pytest.approx(10.5 / 50.5),
        "margin_reached": True,
    }
    tight = LoadSpec(target_margin=0.1, margin_stats=("median_e2e",))
    assert point_margin(values, tight)["margin_reached"] is False
    unbounded = LoadSpec(target_margin=0.1, margin_stats=("p99_e2e",))  # 100 < 368 samples
    assert point_margin(values, unbounded) == {"stop_margin": None, "margin_reached": False}
    assert point_margin(values, LoadSpec()) == {"stop_margin": None, "margin_reached": None}
