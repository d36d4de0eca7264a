"""quality.json from written-out passes: counts add up, failures are failed (not wrong)."""

from __future__ import annotations

import math

import pytest

from scoville.quality.items import Item
from scoville.quality.outcome import build_report
from scoville.quality.passes import Passes
from scoville.quality.probe import Generation

TOP = {1: math.log(0.6), 2: math.log(0.3)}


def _gen(text: str, tokens: list[int], error: str | None = None) -> Generation:
    return Generation(
        text, tuple(tokens), tuple([TOP] * len(tokens)), len(tokens), error, 1_000_000
    )


def _passes() -> Passes:
    items = [
        Item("a", "arith", "number", "3 + 4 =", "7"),
        Item("b", "copy", "exact", "x y ->", "x y"),
        Item("c", "free", "free", "Once,"),
    ]
    ref = [_gen(" 7", [1, 2]), _gen(" x y", [4, 5]), _gen(" it rained", [6, 7, 8])]
    cand = [_gen(" 8", [1, 3]), _gen(" x", [4], "stream_cut: cut"), _gen(" it rained", [6, 7, 8])]
    segments = {0: [(0, cand[0])], 2: [(0, cand[2])]}
    return Passes(items, ref, cand, None, segments, True, "same", "continuations off", None, 1.5)


def test_counts_add_up_and_a_failure_is_not_wrong() -> None:
    doc = build_report(_passes(), {"reference": "r", "candidate": "c"})
    assert doc["counts"]["reference"] == {
        "sent": 3, "ok": 3, "failed": 0, "items": 2, "right": 2, "wrong": 0, "failed_items": 0
    }  # fmt: skip
    assert doc["counts"]["candidate"] == {
        "sent": 3, "ok": 2, "failed": 1, "items": 2, "right": 0, "wrong": 1, "failed_items": 1
    }  # fmt: skip
    a, b, c = doc["items"]
    assert (a["divergence_position"], b["divergence_position"], c["divergence_position"]) == (
        1,
        None,
        None,
    )
    assert a["reference"]["extracted"] == "7" and a["candidate"]["extracted"] == "8"
    assert b["candidate"]["failed"] == "stream_cut: cut" and b["candidate"]["right"] is None
    assert c["reference"]["right"] is None  # free items are not judged
    # One of two judged items failed: no accuracy verdict.
    assert doc["accuracy"]["verdict"] == "not enough evidence"
    assert doc["accuracy"]["table"] == {
        "both_right": 0,
        "ref_only": 2,
        "cand_only": 0,
        "both_wrong": 0,
    }


def test_token_blocks() -> None:
    doc = build_report(_passes(), {"reference": "r", "candidate": "c"})
    agree = doc["token_agreement"]
    # a: 1 of 2 tokens before the divergence, c: 3 of 3 -> 4 / 5.
    assert agree["prefix_share"]["estimate"] == pytest.approx(0.8)
    assert agree["divergence_positions"] == [1]
    lp = doc["logprob_divergence"]
    assert lp["positions"] == 5 and lp["kl_mean"] == pytest.approx(0.0)
    assert doc["items"][0]["logprob"] == {
        "positions": 2,
        "kl_mean": 0.0,
        "tv_mean": 0.0,
        "top_mismatch": 0,
    }
    assert doc["tokens_per_sample"]["ratio"] == pytest.approx(1.0)


def test_refused_token_instruments_leave_accuracy_standing() -> None:
    p = _passes()
    p.same_tokenizer, p.tokenizer_note = False, "the targets tokenize differently"
    doc = build_report(p, {"reference": "r", "candidate": "c"})
    assert doc["token_agreement"] == {
        "verdict": None,
        "refused": "the targets tokenize differently",
    }
    assert doc["logprob_divergence"] == {"refused": "the targets tokenize differently"}
    assert doc["accuracy"]["table"]["ref_only"] == 2


def test_logprob_gaps_make_the_divergence_not_available() -> None:
    p = _passes()
    p.logprob_gaps = "candidate: logprobs for fewer tokens than generated in 1 of 2 answers"
    lp = build_report(p, {"reference": "r", "candidate": "c"})["logprob_divergence"]
    assert lp == {"not_available": f"not available from this server ({p.logprob_gaps})"}
