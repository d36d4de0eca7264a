"""Command-line flags mapped onto spec fields by one table per spec model: flag -> field path.

A flag's help is its field's `description`, so a field is documented once (spec file, JSON
Schema and `--help` read the same words). Flag values reach the spec as typed values
(`apply_values`), never as text parsed back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, get_args, get_origin

from pydantic import BaseModel

from scoville.errors import SpecError
from scoville.spec.lists import parse_list
from scoville.spec.power import read_profile


@dataclass(frozen=True, slots=True)
class Flag:
    """One command-line flag: the dotted spec field it sets, and how its value is read.

    `item` (int or float) marks a comma list parsed by `parse_list`; `when_set` marks an on/off
    flag that writes that value when given; `read` turns a file flag's path into the field's
    value; `hint` is appended to the field's description."""

    path: str
    item: Callable[[str], int] | Callable[[str], float] | None = None
    minimum: float | None = None
    example: str = ""
    when_set: Any = None
    hint: str = ""
    read: Callable[[str], Any] | None = None


# `scoville run` and `scoville spec` (BenchmarkSpec). Keys are the commands' parameter names.
RUN_FLAGS: dict[str, Flag] = {
    "target": Flag("target.url"),
    "model": Flag("target.model"),
    "api": Flag("target.api"),
    "tokenizer": Flag("target.tokenizer"),
    "concurrency": Flag("load.concurrency", int, 1, "1,2,4,8", hint="Comma list, e.g. 1,2,4,8."),
    "rates": Flag(
        "load.request_rates_per_s",
        float,
        example="0.5,1,2",
        hint="Comma list, e.g. 0.5,1,2; given alone, rates replace the concurrency sweep.",
    ),
    "isl": Flag("shape.isl_tokens"),
    "osl": Flag("shape.osl_tokens"),
    "range_ratio": Flag("shape.range_ratio"),
    "requests_per_point": Flag("load.requests_per_point"),
    "warmup": Flag("load.warmup_requests"),
    "target_margin": Flag("load.target_margin"),
    "margin_stats": Flag("load.margin_stats", hint="Comma list, e.g. median_e2e,p99_ttft."),
    "seed": Flag("seed"),
    "power_profile": Flag("power_profile", read=read_profile, hint="FILE: a YAML profile."),
}

# `scoville replay` (AgenticSpec).
REPLAY_FLAGS: dict[str, Flag] = {
    "target": Flag("target.url"),
    "lanes": Flag("lanes", int, 1, "1,2,4,8", hint="Comma list, e.g. 1,2,4,8."),
    "window_s": Flag("window_s"),
    "scale": Flag("context.scale_factor"),
    "window_tokens": Flag("context.target_window_tokens"),
    "max_sessions": Flag("source.max_sessions"),
    "max_request_tokens": Flag("context.max_request_tokens"),
    "live": Flag(
        "assistant_turns",
        when_set="live",
        hint="Thread live model output into prompts (assistant_turns = live).",
    ),
    "no_cache_bust": Flag(
        "cache_bust", when_set=False, hint="No per-play cache-bust marker (cache_bust = false)."
    ),
    "seed": Flag("seed"),
    "schedule": Flag("schedule"),
    "time_scale": Flag("source.time_scale"),
    "warmup_per_lane": Flag("warmup.requests_per_lane"),
}


def field_description(model: type[BaseModel], path: str) -> str:
    """The `description` of the field at dotted `path` in `model` (nested models followed)."""
    node: Any = model
    info = None
    for part in path.split("."):
        info = node.model_fields[part]
        node = info.annotation
    assert info is not None
    return info.description or ""


def list_item(model: type[BaseModel], path: str) -> type[int] | type[float] | None:
    """int or float when the field at `path` is a tuple of them (a comma list), else None
    (also for a path that names no field: validation reports that)."""
    node: Any = model
    for part in path.split("."):
        fields = getattr(node, "model_fields", None)
        if not isinstance(fields, dict) or part not in fields:
            return None
        node = fields[part].annotation
    if get_origin(node) is tuple:
        args = get_args(node)
        if len(args) == 2 and args[1] is Ellipsis and args[0] in (int, float):
            item: type[int] | type[float] = args[0]
            return item
    return None


def flag_help(model: type[BaseModel], table: Mapping[str, Flag], name: str) -> str:
    """Help text of flag `name`: its field's description, then the flag's own hint."""
    flag = table[name]
    if flag.when_set is not None:
        return flag.hint or f"Sets {flag.path} = {flag.when_set!r}."
    return " ".join(p for p in (field_description(model, flag.path), flag.hint) if p)


def option_name(name: str) -> str:
    return "--" + name.replace("_", "-")


def flag_values(table: Mapping[str, Flag], given: Mapping[str, Any]) -> dict[str, Any]:
    """{field path: typed value} for every flag of `table` given (not None / set) in `given`."""
    out: dict[str, Any] = {}
    for name, flag in table.items():
        value = given.get(name)
        if value is None or value is False:
            continue
        if flag.when_set is not None:
            out[flag.path] = flag.when_set
        elif flag.read is not None:
            out[flag.path] = flag.read(str(value))
        elif flag.item is not None:
            out[flag.path] = parse_list(
                str(value), option_name(name), flag.item, minimum=flag.minimum, example=flag.example
            )
        else:
            out[flag.path] = value
    return out


def run_values(given: Mapping[str, Any]) -> dict[str, Any]:
    """`flag_values` for `run`/`spec`, with the one cross-flag rule: rates given without a
    concurrency list replace the closed-loop sweep."""
    out = flag_values(RUN_FLAGS, given)
    if "load.request_rates_per_s" in out and "load.concurrency" not in out:
        out["load.concurrency"] = []
    return out


def apply_values(data: dict[str, Any], values: Mapping[str, Any]) -> dict[str, Any]:
    """Set each dotted path of `values` in nested dict `data` (in place; returned)."""
    for key, value in values.items():
        node = data
        parts = key.split(".")
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise SpecError(f"Setting '{key}': '{part}' is a value, not a section.")
            node = child
        node[parts[-1]] = value
    return data
