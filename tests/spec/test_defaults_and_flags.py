"""Defaults per target kind (declared once) and the flag -> spec field table."""

from __future__ import annotations

import pytest

from scoville.errors import SpecError
from scoville.spec.defaults import defaults_for, target_kind
from scoville.spec.flags import (
    RUN_FLAGS,
    apply_values,
    flag_help,
    flag_values,
    list_item,
    run_values,
)
from scoville.spec.load import load_spec
from scoville.spec.model import BenchmarkSpec


def test_each_target_kind_has_its_matrix() -> None:
    assert target_kind("embedded") == "embedded"
    assert target_kind("twin:H200/gpt-oss-120b?tp=8") == "twin"
    assert target_kind("http://127.0.0.1:8000") == "http"
    twin = load_spec(None, values={"target.url": "twin:H200/Llama-3.1-8B"})
    assert (twin.shape.isl_tokens, twin.shape.osl_tokens) == (8192, 1024)
    assert twin.load.concurrency == (1, 2, 4, 8, 16, 32, 64, 128, 256)
    remote = load_spec(None, values={"target.url": "http://127.0.0.1:8000", "shape.isl_tokens": 7})
    assert (remote.shape.isl_tokens, remote.load.concurrency) == (7, (1, 2, 4, 8))


def test_defaults_are_a_fresh_copy() -> None:
    defaults_for("embedded")["load"]["concurrency"].append(99)
    assert defaults_for("embedded")["load"]["concurrency"] == [1, 4, 8, 16]


def test_help_is_the_field_description_with_its_brackets() -> None:
    text = flag_help(BenchmarkSpec, RUN_FLAGS, "range_ratio")
    assert text.startswith("Lengths are uniform integers in [ratio*L, L]")
    assert "Comma list" in flag_help(BenchmarkSpec, RUN_FLAGS, "concurrency")


def test_flags_become_typed_values() -> None:
    got = flag_values(RUN_FLAGS, {"isl": 64, "concurrency": "1, 4", "model": None})
    assert got == {"shape.isl_tokens": 64, "load.concurrency": [1, 4]}
    assert run_values({"rates": "0.5,2"}) == {
        "load.request_rates_per_s": [0.5, 2.0],
        "load.concurrency": [],
    }
    assert list_item(BenchmarkSpec, "load.request_rates_per_s") is float
    assert list_item(BenchmarkSpec, "shape.isl_tokens") is None
    assert list_item(BenchmarkSpec, "no.such.field") is None


def test_a_bad_list_names_the_flag_not_a_tuple() -> None:
    with pytest.raises(SpecError) as exc:
        run_values({"concurrency": "abc"})
    assert "--concurrency" in str(exc.value) and "tuple" not in str(exc.value)
    with pytest.raises(SpecError) as exc:
        load_spec(None, ["load.concurrency=1,x"])
    assert "load.concurrency" in str(exc.value) and "'x'" in str(exc.value)


def test_a_value_cannot_become_a_section() -> None:
    with pytest.raises(SpecError, match="'seed' is a value"):
        apply_values({"seed": 1}, {"seed.x": 2})
