"""Answer extraction and judging: final number, choice letter, JSON against a schema, tool call.

`score(item, text)` returns what was extracted and whether it is right; pure and total (any
text, however malformed, gets a verdict, never an exception).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from scoville.quality.items import Item

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
_FINAL = re.compile(r"(?:####|answer is)\s*:?\s*\$?(-?\d[\d,]*(?:\.\d+)?)", re.IGNORECASE)
_LETTER = re.compile(r"\b([A-J])\b")


@dataclass(frozen=True, slots=True)
class Score:
    """`extracted`: the answer read from the text (None: none found). `checks`: named
    sub-results (valid_json, schema, values, function, arguments) where the kind has them."""

    extracted: str | None
    right: bool
    checks: dict[str, bool] = field(default_factory=dict)


def _as_decimal(text: str) -> Decimal | None:
    try:
        return Decimal(text.replace(",", ""))
    except InvalidOperation:
        return None


def extract_number(text: str) -> str | None:
    """GSM8K-style: the number after '####' or 'answer is', else the last number in the text."""
    final = _FINAL.search(text)
    if final:
        return final.group(1).replace(",", "")
    found = _NUMBER.findall(text)
    return found[-1].replace(",", "") if found else None


def extract_choice(text: str) -> str | None:
    """The first standalone capital letter A-J (e.g. ' B', 'B.', '(B)')."""
    m = _LETTER.search(text)
    return m.group(1) if m else None


def first_json(text: str) -> Any:
    """The first JSON object in `text`; raises ValueError when there is none."""
    start = text.find("{")
    if start < 0:
        raise ValueError("no JSON object")
    obj, _end = json.JSONDecoder().raw_decode(text[start:])
    return obj


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def schema_ok(value: Any, schema: dict[str, Any]) -> bool:
    """A JSON-Schema subset: type, properties, required, additionalProperties (false), enum,
    items. Booleans are not integers here, as in JSON Schema."""
    kind = schema.get("type")
    if kind is not None:
        if isinstance(value, bool) and kind in ("integer", "number"):
            return False
        if not isinstance(value, _TYPES.get(str(kind), (object,))):
            return False
    if "enum" in schema and value not in schema["enum"]:
        return False
    if isinstance(value, dict):
        props: dict[str, Any] = schema.get("properties", {})
        if any(k not in value for k in schema.get("required", ())):
            return False
        if schema.get("additionalProperties") is False and any(k not in props for k in value):
            return False
        return all(schema_ok(value[k], s) for k, s in props.items() if k in value)
    if isinstance(value, list) and "items" in schema:
        return all(schema_ok(v, schema["items"]) for v in value)
    return True


def _value_ok(got: Any, want: Any) -> bool:
    """Equal, or one of a list of acceptable values (BFCL's ground-truth form)."""
    return got in want if isinstance(want, list) else bool(got == want)


def _score_json(item: Item, text: str) -> Score:
    try:
        obj = first_json(text)
    except ValueError:
        return Score(None, False, {"valid_json": False, "schema": False, "values": False})
    schema = schema_ok(obj, item.schema or {})
    expect = item.expect or {}
    values = isinstance(obj, dict) and all(_value_ok(obj.get(k), v) for k, v in expect.items())
    extracted = json.dumps(obj, sort_keys=True)
    return Score(
        extracted, schema and values, {"valid_json": True, "schema": schema, "values": values}
    )


def _score_tool(item: Item, text: str) -> Score:
    expect = item.expect or {}
    try:
        call = first_json(text)
    except ValueError:
        return Score(None, False, {"valid_json": False, "function": False, "arguments": False})
    call = call if isinstance(call, dict) else {}
    raw_args = call.get("arguments")
    args: dict[str, Any] = raw_args if isinstance(raw_args, dict) else {}
    name_ok = call.get("name") == expect.get("name")
    want: dict[str, Any] = expect.get("arguments") or {}
    args_ok = set(args) <= set(want) and all(_value_ok(args.get(k), v) for k, v in want.items())
    checks = {"valid_json": True, "function": name_ok, "arguments": args_ok}
    return Score(json.dumps(call, sort_keys=True), name_ok and args_ok, checks)


def score(item: Item, text: str) -> Score:
    """Judge one answer text for `item`."""
    if item.kind == "number":
        got = extract_number(text)
        want = _as_decimal(item.answer or "")
        ok = got is not None and want is not None and _as_decimal(got) == want
        return Score(got, ok)
    if item.kind == "choice":
        letter = extract_choice(text)
        return Score(letter, letter is not None and letter == (item.answer or "").strip().upper())
    if item.kind == "exact":
        line = text.strip().splitlines()[0].strip() if text.strip() else ""
        return Score(line, line == (item.answer or "").strip())
    if item.kind == "json":
        return _score_json(item, text)
    if item.kind == "tool":
        return _score_tool(item, text)
    return Score(None, False)
