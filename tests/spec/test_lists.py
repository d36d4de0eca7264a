"""The one comma-list parser: every bad list names the option and the item."""

from __future__ import annotations

import pytest

from scoville.errors import SpecError, UserError
from scoville.spec.lists import parse_list


def test_integers_and_floats() -> None:
    assert parse_list("1, 2,4,", "--concurrency") == [1, 2, 4]
    assert parse_list("0.5,2", "--rates", float) == [0.5, 2.0]


@pytest.mark.parametrize(
    ("text", "kind", "kw", "needle"),
    [
        ("abc", int, {}, "'abc' is not one of a comma list of integers"),
        ("", int, {}, "is empty"),
        ("1,0", int, {"minimum": 1}, "'0' is below the minimum 1"),
        ("nan", float, {}, "not a finite number"),
        ("1,inf", float, {}, "not a finite number"),
        ("4,2", int, {"rising": True}, "must be a rising list"),
    ],
)
def test_bad_lists_name_option_and_item(text: str, kind: type, kw: dict, needle: str) -> None:
    with pytest.raises(SpecError, match="--opt") as err:
        parse_list(text, "--opt", kind, **kw)
    assert needle in str(err.value)
    assert isinstance(err.value, UserError) and "tuple" not in str(err.value)
