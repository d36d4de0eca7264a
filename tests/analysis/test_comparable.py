"""The like-for-like rules against a table of pairs, and their use by compare."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from scoville.analysis.comparable import (
    Conditions,
    conditions_of_rows,
    judge,
    precision_class,
    same_model,
)
from scoville.analysis.compare import compare_groups, format_ratio
from scoville.errors import UserError

BASE = Conditions(
    model="gpt-oss-120b",
    isl_tokens=8192,
    osl_tokens=1024,
    range_ratio=1.0,
    precision="mxfp4",
    spec_decode="none",
    disagg=False,
    parallelism="tp8",
    power_boundary="package-tdp",
    power_w_per_accelerator=700,
    token_basis="total",
    percentile="median",
)

# (what the system side changes, per-kW metric?, like?, the field named as blocking)
PAIRS: list[tuple[dict[str, Any], bool, bool, str | None]] = [
    ({}, True, True, None),
    ({"model": "GPT-OSS 120B"}, True, True, None),  # same model, other spelling
    ({"model": "DeepSeek-R1"}, True, False, "model"),
    ({"model": "gpt-oss-20b"}, True, False, "model"),  # not a size suffix of the same name
    ({"weights_revision": "abc"}, True, True, None),  # known on one side only
    ({"isl_tokens": 1024}, True, False, "isl_tokens"),
    ({"osl_tokens": 8192}, True, False, "osl_tokens"),
    ({"range_ratio": 0.8}, True, False, "range_ratio"),
    ({"precision": "nvfp4"}, True, True, None),  # same class: fp4
    ({"precision": "fp8"}, True, False, "precision"),
    ({"precision": "fp8", "quality_equivalence": "gsm8k 0.2 pt of mxfp4"}, True, True, None),
    ({"spec_decode": "mtp"}, True, False, "spec_decode"),
    ({"spec_decode": "mtp", "acceptance_length": 2.4}, True, True, None),
    ({"spec_decode": "false"}, True, True, None),  # 'false' and 'none' both mean off
    ({"disagg": True}, True, False, "disagg"),
    ({"disagg": None}, True, True, None),  # unstated: a caveat unless strict
    ({"parallelism": "tp4 ep4"}, True, True, None),  # may differ between hardware
    ({"power_boundary": "board-measured"}, True, False, "power boundary"),
    ({"power_boundary": "board-measured"}, False, True, None),  # not a per-kW metric
    ({"power_boundary": None}, True, False, "power boundary"),  # needed for per-kW
    ({"power_w_per_accelerator": 1200}, True, True, None),  # watts differ by design
    ({"token_basis": "output"}, True, False, "token_basis"),
    ({"percentile": "p90"}, True, False, "percentile"),
    ({"isl_tokens": None}, False, False, "isl_tokens"),  # required: missing
]


@pytest.mark.parametrize(("change", "per_kw", "like", "field"), PAIRS)
def test_rules_table(change: dict[str, Any], per_kw: bool, like: bool, field: str | None) -> None:
    got = judge(replace(BASE, **change), BASE, per_kw=per_kw)
    assert got.like is like, got.reasons()
    if field is not None:
        assert field in {c.field for c in got.blocking}
        assert all(r for r in got.reasons())  # every blocking condition has a reason


def test_strict_blocks_unstated_and_reasons_read_as_sentences() -> None:
    side = replace(BASE, disagg=None, parallelism=None)
    assert judge(side, BASE, per_kw=True).like
    strict = judge(side, BASE, per_kw=True, strict=True)
    assert {c.field for c in strict.blocking} >= {"disagg", "parallelism"}
    assert "disagg is not stated for the system" in strict.reasons()
    shape = judge(replace(BASE, isl_tokens=1024), BASE, per_kw=False)
    assert shape.reasons() == ["isl_tokens differs: 1024 vs 8192"]


def test_model_names_with_a_size_suffix() -> None:
    assert same_model("DeepSeek R1 670B", "DeepSeek-R1")
    assert same_model("Kimi K2.5 1T", "Kimi-K2.5") and not same_model("Kimi K2.5", "Kimi-K2")
    assert not same_model("Qwen3-30B-A3B", "Qwen3")


def test_precision_classes() -> None:
    assert precision_class("MXFP4") == precision_class("nvfp4") == "fp4"
    assert precision_class("bf16") == precision_class("FP16") == "16-bit"
    assert precision_class("Q4_K_M") == "int4"


def row(system: str, isl: int, x: float, y: float, **kw: Any) -> dict[str, Any]:
    r: dict[str, Any] = {
        "point_id": f"{system}{x}",
        "system": system,
        "model": "m",
        "precision": "fp8",
        "spec_decode": "none",
        "disagg": False,
        "isl": isl,
        "osl": 1024,
        "range_ratio": 1.0,
        "median_intvty": x,
        "tput_per_gpu": y,
        "median_e2e": 1000 / x,
    }
    r.update(kw)
    return r


def test_compare_refuses_unlike_pairs_unless_allowed() -> None:
    rows = [row("A", 8192, 100, 900), row("A", 8192, 50, 1800), row("B", 1024, 100, 500)]
    (t,) = compare_groups(rows, "B")
    assert t.comparability is not None and not t.comparability.like
    peak = t.line("peak_tput_per_gpu")
    assert peak.ratio is None and peak.status == "not like for like"
    assert "isl_tokens differs: 8192 vs 1024" in peak.note
    (u,) = compare_groups(rows, "B", allow_unlike=True)
    peak = u.line("peak_tput_per_gpu")
    assert peak.ratio == pytest.approx(1800 / 500) and peak.note.startswith("UNLIKE PAIR")


def test_ratio_wording_names_the_quotient() -> None:
    rows = [row("A", 8192, 100, 280), row("B", 8192, 100, 500)]
    (t,) = compare_groups(rows, "B")
    # 280 / 500 = 0.56: no direction word, the quotient is named instead.
    assert format_ratio(t.line("peak_tput_per_gpu"), "A", "B") == "0.56x (A / B)"
    rows = [row("A", 8192, 100, 950), row("B", 8192, 100, 500)]
    (t,) = compare_groups(rows, "B")
    assert format_ratio(t.line("peak_tput_per_gpu"), "Jalapeño", "GB200") == (
        "1.90x higher (Jalapeño / GB200)"
    )


def test_one_system_and_empty_inputs_are_user_errors() -> None:
    with pytest.raises(UserError, match="at least two configurations"):
        compare_groups([row("A", 8192, 100, 900)], "A")
    with pytest.raises(UserError, match="no points"):
        compare_groups([], "A")


# (system status, baseline status, like?, like when strict?)
QUALITY: list[tuple[str | None, str | None, bool, bool]] = [
    ("qualified", "qualified", True, True),
    ("not qualified", "qualified", False, False),
    ("qualified", "not qualified", False, False),
    ("not qualified", None, False, False),  # a side that is not qualified blocks on its own
    ("qualified", "not measured", True, False),  # a caveat; strict refuses it
    ("not measured", "not measured", True, True),  # no pass on either side: informational
    (None, None, True, True),
]


@pytest.mark.parametrize(("sys_q", "base_q", "like", "strict_like"), QUALITY)
def test_quality_status_rule(
    sys_q: str | None, base_q: str | None, like: bool, strict_like: bool
) -> None:
    s, b = replace(BASE, quality_status=sys_q), replace(BASE, quality_status=base_q)
    assert judge(s, b, per_kw=False).like is like
    strict = {c.field for c in judge(s, b, per_kw=False, strict=True).blocking}
    assert ("quality_status" not in strict) is strict_like  # BASE leaves other fields unstated
    if not like:
        (check,) = judge(s, b, per_kw=False).blocking
        assert check.field == "quality_status" and "not qualified" in check.reason


def test_quality_of_rows_takes_the_worst_run() -> None:
    q = conditions_of_rows
    assert q([{"quality_status": "qualified"}] * 2).quality_status == "qualified"
    mixed = [{"quality_status": "qualified"}, {"quality_status": "not qualified"}]
    assert q(mixed).quality_status == "not qualified"
    assert q([{"quality_status": "qualified"}, {}]).quality_status == "not measured"


def test_compare_refuses_a_side_that_is_not_qualified() -> None:
    rows = [
        row("A", 8192, 100, 900, quality_status="not qualified"),
        row("B", 8192, 100, 500, quality_status="qualified"),
    ]
    (t,) = compare_groups(rows, "B")
    peak = t.line("peak_tput_per_gpu")
    assert peak.ratio is None and peak.status == "not like for like"
    assert "quality differs (not qualified vs qualified)" in peak.note
    (u,) = compare_groups(rows, "B", allow_unlike=True)
    peak = u.line("peak_tput_per_gpu")
    assert peak.ratio == pytest.approx(900 / 500) and peak.note.startswith("UNLIKE PAIR")
