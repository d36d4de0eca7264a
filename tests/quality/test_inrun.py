"""The run's quality pass: the Wilson interval and the status rule against hand-worked values,
the per-item rows and document of a pass written out by hand, and the spec refusals."""

from __future__ import annotations

import math
from typing import Any

import pytest

from scoville.errors import SpecError
from scoville.quality.gate import check_run_quality
from scoville.quality.inrun import columns, document, own_rows, status_rule, wilson
from scoville.quality.items import Item
from scoville.quality.probe import Generation
from scoville.spec.load import load_spec
from scoville.spec.model import QualityTarget


def test_wilson_against_hand_worked_values() -> None:
    # 7 of 10, z = 1.96: centre 0.7 + 0.19208 = 0.89208, half 1.96 sqrt(0.021 + 0.009604)
    # = 0.34288, divided by 1 + 0.38416: [0.39677, 0.89221].
    lo, hi = wilson(7, 10)
    assert lo == pytest.approx(0.39677, abs=2e-4) and hi == pytest.approx(0.89221, abs=2e-4)
    # 10 of 10: never a zero-width interval; lo = 1 / 1.38416 = 0.72246.
    lo, hi = wilson(10, 10)
    assert lo == pytest.approx(0.72246, abs=2e-4) and hi == 1.0
    assert wilson(0, 6)[0] == 0.0 and wilson(0, 0) == (0.0, 1.0)


def _counts(right: int, items: int, failed: int = 0) -> dict[str, int]:
    wrong = items - right - failed
    return {"sent": items, "ok": items - failed, "failed": failed, "items": items,
            "right": right, "wrong": wrong, "failed_items": failed}  # fmt: skip


@pytest.mark.parametrize(
    ("own", "ref", "threshold", "margin", "status"),
    [
        (_counts(5, 10), None, 0.5, 0.01, "qualified"),  # at the threshold: qualified
        (_counts(4, 10), None, 0.5, 0.01, "not qualified"),
        (_counts(99, 100), _counts(100, 100), None, 0.01, "qualified"),  # 0.99 >= 0.99 x 1.0
        (_counts(98, 100), _counts(100, 100), None, 0.01, "not qualified"),
        (_counts(9, 10), _counts(10, 10), None, 0.2, "qualified"),  # 0.9 >= 0.8
        (_counts(9, 10), _counts(10, 10), 0.95, 0.2, "not qualified"),  # both bars apply
        (_counts(9, 10, failed=1), None, 0.5, 0.01, "not qualified"),  # 10 % failed > 5 %
        (_counts(10, 10), _counts(8, 10, failed=2), 0.5, 0.01, "not qualified"),
        (_counts(0, 0), None, 0.5, 0.01, "not measured"),  # only free-text items
        (_counts(3, 10), _counts(0, 10), None, 0.01, "not qualified"),  # a reference at 0
    ],
)
def test_status_rule(
    own: dict[str, int], ref: dict[str, int] | None, threshold: float | None, margin: float,
    status: str,
) -> None:  # fmt: skip
    q = QualityTarget(task="arith", threshold=threshold, margin_rel=margin, reference="r")
    got, reason = status_rule(own, ref, q)
    assert got == status and reason


def _gen(text: str, error: str | None = None) -> Generation:
    top = ({7: math.log(0.5), 8: math.log(0.25)}, {9: math.log(0.8)})
    return Generation(text, (7, 9), top, 2, error, 1_000_000)


def test_document_counts_add_up_and_a_failure_is_not_wrong() -> None:
    items = [
        Item("a", "arith", "number", "3 + 4 =", "7"),
        Item("b", "arith", "number", "1 + 1 =", "2"),
        Item("c", "copy", "exact", "x y ->", "x y"),
        Item("d", "free", "free", "Once,"),
    ]
    gens = [_gen(" 7"), _gen(" 3"), _gen(" x", "stream_cut: cut"), _gen(" it rained")]
    rows = own_rows(items, gens)
    # mean logprob of the tokens it chose: (ln 0.5 + ln 0.8) / 2
    assert rows[0]["logprob"]["mean_logprob"] == pytest.approx((math.log(0.5) + math.log(0.8)) / 2)
    assert rows[0]["candidate"]["extracted"] == "7" and rows[0]["candidate"]["right"] is True
    spec = load_spec(None, ["quality.task=arith,copy", "quality.threshold=0.5"])
    doc: dict[str, Any] = document(rows, None, spec, "embedded", 1.0)
    c = doc["counts"]["target"]
    assert c == {"sent": 4, "ok": 3, "failed": 1, "items": 3, "right": 1, "wrong": 1,
                 "failed_items": 1}  # fmt: skip
    assert doc["status"] == "not qualified" and "failed" in doc["reason"]  # 1 of 3 failed
    assert doc["pass_rate"]["estimate"] == pytest.approx(1 / 3) and doc["pass_rate"]["n"] == 3
    assert doc["by_task"] == {"arith": {"items": 2, "right": 1}, "copy": {"items": 1, "right": 0}}
    cols = columns(doc)
    assert cols["quality_status"] == "not qualified"
    assert cols["quality_pass_rate_lo"] < cols["quality_pass_rate"] < cols["quality_pass_rate_hi"]
    unmeasured = columns(None)
    assert unmeasured.pop("quality_status") == "not measured"
    assert set(unmeasured.values()) == {None}


@pytest.mark.parametrize(
    ("sets", "says"),
    [
        (["target.url=twin:H200/gpt-oss-120b", "quality.threshold=0.5"], "no tokens to judge"),
        (["quality.reference=twin:H200/gpt-oss-120b"], "no tokens to judge"),
        (["quality.metric=bleu", "quality.threshold=0.5"], "quality.metric=bleu"),
        ([], "sets no bar"),
    ],
)
def test_refused_where_the_pass_cannot_work(sets: list[str], says: str) -> None:
    with pytest.raises(SpecError, match=says):
        check_run_quality(load_spec(None, ["quality.task=arith", *sets]))
    check_run_quality(load_spec(None, []))  # no quality.task: nothing to check
