"""Token agreement and top-k divergence against hand-worked sequences and distributions."""

from __future__ import annotations

import math

import pytest

from scoville.quality.agreement import first_divergence, token_agreement
from scoville.quality.divergence import kl_tv, summarize


def test_first_divergence() -> None:
    assert first_divergence([1, 2, 3, 4], [1, 2, 9, 4]) == 2
    assert first_divergence([1, 2, 3], [1, 2, 3]) is None
    assert first_divergence([1, 2, 3], [1, 2]) == 2
    assert first_divergence([], [5]) == 0


def test_agreement_over_three_items() -> None:
    pairs = [([1, 2, 3, 4], [1, 2, 9, 4]), ([5, 6], [5, 6]), ([7, 8, 9, 10], [0, 8, 9, 10])]
    got = token_agreement(pairs)
    assert got.prefix_share is not None and got.prefix_share.estimate == pytest.approx(0.4)
    assert got.whole_match is not None and got.whole_match.estimate == pytest.approx(1 / 3)
    assert got.divergence_positions == (2, 0)
    assert got.divergence_median == 1.0
    assert got.still_matching == ((1, pytest.approx(2 / 3)), (2, pytest.approx(2 / 3)), (4, 0.0))
    assert got.verdict == "not enough evidence"  # three items are too few for any verdict


def test_agreement_verdicts() -> None:
    same = [([i, i + 1, i + 2], [i, i + 1, i + 2]) for i in range(30)]
    assert token_agreement(same).verdict == "equivalent"
    early = [([i, i + 1, i + 2], [-1, i + 1, i + 2]) for i in range(30)]
    assert token_agreement(early).verdict == "not equivalent"


def test_kl_and_tv_from_a_small_known_distribution() -> None:
    # Buckets [A, B, rest]: p = [.5, .25, .25], q = [.25, .5, .25].
    # KL = .5 ln 2 + .25 ln .5 = .25 ln 2; TV = (.25 + .25) / 2.
    ref = {"A": math.log(0.5), "B": math.log(0.25)}
    cand = {"A": math.log(0.25), "B": math.log(0.5)}
    kl, tv = kl_tv(ref, cand)
    assert kl == pytest.approx(0.25 * math.log(2))
    assert tv == pytest.approx(0.25)


def test_token_missing_from_the_candidate_list_gets_a_share_of_its_tail() -> None:
    # Candidate lists A .6 and C .2: unlisted .2 shared by B and rest -> q = [.6, .1, .3];
    # p = [.6, .3, .1]. KL = .3 ln 3 + .1 ln(1/3) = .2 ln 3; TV = (0 + .2 + .2) / 2.
    kl, tv = kl_tv({1: math.log(0.6), 2: math.log(0.3)}, {1: math.log(0.6), 3: math.log(0.2)})
    assert kl == pytest.approx(0.2 * math.log(3))
    assert tv == pytest.approx(0.2)


def test_summary_counts_top_token_mismatches() -> None:
    a = {"x": math.log(0.7), "y": math.log(0.2)}
    b = {"x": math.log(0.2), "y": math.log(0.7)}
    got = summarize([(a, a), (a, b), (a, a), (a, a)])
    assert got is not None
    assert got.positions == 4
    assert got.top_mismatch_share == 0.25
    assert got.kl_median == pytest.approx(0.0, abs=1e-12)
    assert summarize([]) is None
