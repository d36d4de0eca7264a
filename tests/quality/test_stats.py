"""Paired statistics against values worked out by hand (binomial sums, normal tables)."""

from __future__ import annotations

import pytest

from scoville.quality.stats import (
    PairTable,
    accuracy_verdict,
    mcnemar_exact_p,
    pair_table,
    paired_bootstrap_diff,
    required_items,
    token_ratio_ok,
    tost,
)


def test_pair_table_counts_each_cell() -> None:
    ref = [True, True, False, False, True]
    cand = [True, False, True, False, True]
    assert pair_table(ref, cand) == PairTable(2, 1, 1, 1)


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [
        (1, 6, 0.125),  # 2 x (1 + 7) / 128
        (0, 5, 0.0625),  # 2 x 1 / 32
        (2, 8, 0.109375),  # 2 x (1 + 10 + 45) / 1024
        (3, 3, 1.0),  # 2 x 42 / 64 = 1.3125, capped
        (0, 0, 1.0),  # no discordant pair, no evidence
    ],
)
def test_mcnemar_exact_from_the_binomial(b: int, c: int, p: float) -> None:
    assert mcnemar_exact_p(b, c) == pytest.approx(p, abs=1e-12)


def test_tost_decision_on_either_side_of_the_boundary() -> None:
    # 1000 items, 10 discordant pairs each way: diff 0, se = sqrt(10.5 + 10.5) / 1000.
    # Reference 80 % -> margin 0.8 points, z = 0.008 / 0.0045826 = 1.7457, p = 0.0404: shown.
    inside = tost(PairTable(790, 10, 10, 190))
    assert inside.margin_abs == pytest.approx(0.008)
    assert inside.se == pytest.approx(0.0045826, rel=1e-4)
    assert inside.p_lower == pytest.approx(0.0404, abs=5e-4)
    assert inside.equivalent
    # Reference 70 % -> margin 0.7 points, z = 1.5275, p = 0.0633: not shown.
    outside = tost(PairTable(690, 10, 10, 290))
    assert outside.p_upper == pytest.approx(0.0633, abs=5e-4)
    assert not outside.equivalent and not outside.worse and not outside.better


def test_tost_selectable_tighter_margin() -> None:
    # The 99.9 % tier: margin 0.08 points on the same table, far from shown.
    assert tost(PairTable(790, 10, 10, 190), margin_rel=0.001).margin_abs == pytest.approx(0.0008)
    assert not tost(PairTable(790, 10, 10, 190), margin_rel=0.001).equivalent


def test_required_items_from_the_normal_quantiles() -> None:
    # (1.6449 + 1.2816)^2 = 8.5639; x 0.1 / 0.01^2 = 8563.9 -> 8564.
    assert required_items(0.1, 0.01) == 8564
    assert required_items(0.1, 0.0) is None


def test_not_enough_evidence_says_how_many_items_are_needed() -> None:
    ref = [True] * 152 + [False] * 48
    cand = [True] * 150 + [False, False, True, True] + [False] * 46
    v = accuracy_verdict(ref, cand, failed_share=0.0)
    # ref 76 % -> margin 0.76 points; discordant rate (2 + 2 + 1) / 200 = 0.025;
    # 8.5639 x 0.025 / 0.0076^2 = 3706.6 -> 3707.
    assert v.verdict == "not enough evidence"
    assert v.needed_items == 3707
    assert "200 items cannot show equivalence at a 0.76-point margin; about 3707" in v.reason


def test_clearly_worse_candidate_is_not_equivalent() -> None:
    v = accuracy_verdict([True] * 100, [True] * 80 + [False] * 20, failed_share=0.0)
    assert v.verdict == "not equivalent"
    assert v.mcnemar_p == pytest.approx(2 / 2**20)
    assert v.table.diff == pytest.approx(-0.2)


def test_too_many_failures_give_no_verdict() -> None:
    v = accuracy_verdict([True] * 100, [True] * 100, failed_share=0.06)
    assert v.verdict == "not enough evidence" and "failed" in v.reason


def test_identical_large_runs_are_equivalent() -> None:
    # 4000 items, no discordant pair: se = sqrt(1) / 4000, margin 0.5 points -> z = 20.
    ref = [True] * 2000 + [False] * 2000
    v = accuracy_verdict(ref, ref, failed_share=0.0)
    assert v.verdict == "equivalent"


def test_paired_bootstrap_on_two_items() -> None:
    # Differences [1, 0]: resampled means are 0, 0.5 or 1 (1/4, 1/2, 1/4); 90 % -> [0, 1].
    iv = paired_bootstrap_diff([False, True], [True, True], level=0.90)
    assert iv is not None
    assert (iv.estimate, iv.lo, iv.hi) == (0.5, 0.0, 1.0)
    same = paired_bootstrap_diff([True, False, True], [True, False, True])
    assert same is not None and (same.lo, same.hi) == (0.0, 0.0)


@pytest.mark.parametrize(
    ("ref", "cand", "ok"),
    [(100, 110, True), (100, 90, True), (100, 111, False), (100, 89.9, False)],
)
def test_tokens_per_sample_rule(ref: float, cand: float, ok: bool) -> None:
    assert token_ratio_ok(ref, cand) is ok
