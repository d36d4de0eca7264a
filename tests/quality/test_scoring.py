"""Answer extraction and judging on written-out answers, including malformed ones."""

from __future__ import annotations

from scoville.quality.generate import PERSON_SCHEMA, generate
from scoville.quality.items import Item
from scoville.quality.scoring import extract_choice, extract_number, schema_ok, score


def test_final_number_gsm8k_style() -> None:
    assert extract_number("She pays 3 + 4 = 7 dollars.\n#### 1,250") == "1250"
    assert extract_number("so the answer is 42.") == "42"
    assert extract_number("first 3 then 18") == "18"
    assert extract_number("no digits") is None


def test_number_items_compare_values_not_strings() -> None:
    item = Item("a", "t", "number", "p", "18")
    assert score(item, " 18.0\n").right
    assert not score(item, " 81").right


def test_choice_letter() -> None:
    assert extract_choice(" B. apple") == "B"
    assert extract_choice("(C)") == "C"
    assert extract_choice(" none") is None
    assert score(Item("a", "t", "choice", "p", "b"), " B").right


def test_exact_reads_the_first_line() -> None:
    item = Item("a", "t", "exact", "p", "red fish moon")
    assert score(item, " red fish moon\nmore").right
    assert not score(item, " red fish").right
    assert not score(item, "").right


def test_json_checks_schema_and_values() -> None:
    item = Item(
        "a",
        "t",
        "json",
        "p",
        schema=PERSON_SCHEMA,
        expect={"name": "Bob", "age": 25, "city": "Rome"},
    )
    good = score(item, ' {"name": "Bob", "age": 25, "city": "Rome"}')
    assert good.right and good.checks == {"valid_json": True, "schema": True, "values": True}
    wrong_value = score(item, ' {"name": "Bob", "age": 52, "city": "Rome"}')
    assert wrong_value.checks == {"valid_json": True, "schema": True, "values": False}
    bad_type = score(item, ' {"name": "Bob", "age": "25", "city": "Rome"}')
    assert bad_type.checks["schema"] is False
    broken = score(item, ' {"name": "Bob", "age":')
    assert broken.checks == {"valid_json": False, "schema": False, "values": False}


def test_schema_subset() -> None:
    assert not schema_ok(True, {"type": "integer"})  # a boolean is not an integer
    assert schema_ok([1, 2], {"type": "array", "items": {"type": "integer"}})
    assert not schema_ok(
        {"x": 1, "y": 2}, {"type": "object", "properties": {"x": {}}, "additionalProperties": False}
    )
    assert not schema_ok("c", {"enum": ["a", "b"]})


def test_tool_call_function_and_arguments() -> None:
    item = Item(
        "a",
        "t",
        "tool",
        "p",
        expect={"name": "get_weather", "arguments": {"city": ["Paris", "paris"], "unit": ["c"]}},
    )
    ok = score(item, ' {"name": "get_weather", "arguments": {"city": "paris", "unit": "c"}}')
    assert ok.right
    wrong_fn = score(item, ' {"name": "get_time", "arguments": {"city": "Paris", "unit": "c"}}')
    assert wrong_fn.checks == {"valid_json": True, "function": False, "arguments": True}
    extra_arg = score(
        item, ' {"name": "get_weather", "arguments": {"city": "Paris", "unit": "c", "x": 1}}'
    )
    assert not extra_arg.right


def test_generated_sets_are_fixed_by_the_seed_and_answerable() -> None:
    a, b = generate("kv", 10, seed=3), generate("kv", 10, seed=3)
    assert a == b and generate("kv", 10, seed=4) != a
    assert [it.meta["pairs"] for it in a[:5]] == [4, 8, 16, 32, 64]
    for it in a:  # the asked key's value is in the prompt's table
        key = it.prompt.rsplit("\n", 1)[-1].rstrip("=")
        assert f"{key}={it.answer}" in it.prompt.split("\n")[0]
    arith = generate("arith", 5)
    assert all(score(it, f" {it.answer}").right for it in arith)
    js = generate("json", 3)
    assert all(it.expect is not None and it.expect["name"] in it.prompt for it in js)
