"""Load a spec from YAML/TOML/JSON, apply `--set a.b=c` overrides, and explain mistakes.

A bad spec never produces a traceback: `SpecError` names each offending field, what was
given, and what is expected.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from scoville.errors import SpecError
from scoville.spec.defaults import defaults_for, target_kind
from scoville.spec.flags import apply_values, list_item
from scoville.spec.limits import MAX_SPEC_BYTES, load_yaml, read_text
from scoville.spec.lists import parse_list
from scoville.spec.model import BenchmarkSpec

M = TypeVar("M", bound=BaseModel)


def read_mapping(path: Path) -> dict[str, Any]:
    """Parse a YAML (.yaml/.yml), TOML (.toml) or JSON (.json) file into a dict."""
    if not path.is_file():
        raise SpecError(
            f"Spec file {path} does not exist. Pass the path of a .yaml, .toml or "
            ".json spec, or leave --spec out to use the built-in default."
        )
    text = read_text(path, "Spec file", MAX_SPEC_BYTES, SpecError)
    try:
        if path.suffix == ".toml":
            data: Any = tomllib.loads(text)
        elif path.suffix == ".json":
            data = json.loads(text)
        else:
            syntax = path.suffix.lstrip(".") or "YAML"
            data = load_yaml(text, f"Spec file {path}", SpecError, syntax)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise SpecError(
            f"Spec file {path} is not valid {path.suffix.lstrip('.') or 'YAML'}: "
            f"{exc}. Fix the syntax and run again."
        ) from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SpecError(
            f"Spec file {path} must hold a mapping of fields at its top level, "
            f"not a {type(data).__name__}."
        )
    return data


def _parse_value(raw: str) -> Any:
    """A `--set` value as YAML: `8`, `0.5`, `true`, `[1,2,4]`, `fp8`."""
    try:
        return load_yaml(raw, f"the value {raw!r}", SpecError)
    except SpecError as exc:
        if "YAML nodes" in str(exc) or "recursive" in str(exc):
            raise
        return raw


def _override_value(model: type[BaseModel], key: str, raw: str) -> Any:
    """A comma list (`1,2,4`) for a list field goes through `parse_list`, as a flag's would;
    any other value is read as YAML."""
    item = list_item(model, key)
    if item is not None and not raw.startswith("["):
        return parse_list(raw, f"--set {key}", item, example="1,2,4")
    return _parse_value(raw)


def apply_overrides(
    data: dict[str, Any], overrides: list[str], model: type[BaseModel] = BenchmarkSpec
) -> dict[str, Any]:
    """Apply `a.b=c` assignments (text, as typed after `--set`) to a nested dict (a copy)."""
    out: dict[str, Any] = json.loads(json.dumps(data))
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise SpecError(
                f"Override '{item}' is not of the form a.b=value, e.g. "
                "--set load.concurrency=1,2,4 or --set shape.isl_tokens=1024."
            )
        try:
            value = _override_value(model, key.strip(), raw.strip())
            apply_values(out, {key.strip(): value})
        except SpecError as exc:
            raise SpecError(f"Override '{item}': {exc}") from None
    return out


def explain(exc: ValidationError, source: str) -> SpecError:
    """Turn pydantic's errors into one paragraph naming each field and the fix."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
        given = err.get("input")
        if err["type"] == "extra_forbidden":
            parts.append(
                f"'{loc}' is not a known field (check its spelling; "
                "`scoville spec --schema` lists every field)"
            )
        elif err["type"] == "missing":
            parts.append(f"'{loc}' is required")
        else:
            msg = err["msg"].replace("tuple", "list")  # a user writes lists, never tuples
            parts.append(f"'{loc}' = {given!r}: {msg}")
    return SpecError(f"The spec from {source} is invalid: " + "; ".join(parts) + ".")


def validate_as(model: type[M], data: dict[str, Any], source: str) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise explain(exc, source) from None


def load_spec(
    path: Path | None = None,
    overrides: list[str] | None = None,
    values: Mapping[str, Any] | None = None,
) -> BenchmarkSpec:
    """The spec at `path` with `--set` overrides (text) and then flag `values` (typed, by
    dotted path) applied, validated. Without a file the base is the default matrix of the
    target's kind (`scoville.spec.defaults.defaults_for`)."""
    data = read_mapping(path) if path is not None else {}
    data = apply_values(apply_overrides(data, overrides or []), values or {})
    if path is None:
        url = str(data.get("target", {}).get("url", "embedded"))
        data = _merged(defaults_for(target_kind(url)), data)
    given = overrides or values
    source = str(path) if path else ("the command line" if given else "the defaults")
    return validate_as(BenchmarkSpec, data, source)


def _merged(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """`top` over `base`, section by section."""
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merged(out[key], value)
        else:
            out[key] = value
    return out
