"""Load a spec from YAML/TOML/JSON, apply `--set a.b=c` overrides, and explain mistakes.

A bad spec never produces a traceback: `SpecError` names each offending field, what was
given, and what is expected.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from scoville.errors import SpecError
from scoville.spec.model import BenchmarkSpec

M = TypeVar("M", bound=BaseModel)


def read_mapping(path: Path) -> dict[str, Any]:
    """Parse a YAML (.yaml/.yml), TOML (.toml) or JSON (.json) file into a dict."""
    if not path.is_file():
        raise SpecError(
            f"Spec file {path} does not exist. Pass the path of a .yaml, .toml or "
            ".json spec, or leave --spec out to use the built-in default."
        )
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix == ".toml":
            data: Any = tomllib.loads(text)
        elif path.suffix == ".json":
            data = json.loads(text)
        else:
            data = yaml.safe_load(text)
    except (yaml.YAMLError, tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
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
    """Override values are YAML scalars/lists: `8`, `0.5`, `true`, `[1,2,4]`, `1,2,4`."""
    if "," in raw and not raw.strip().startswith(("[", "{", '"', "'")):
        return [_parse_value(part) for part in raw.split(",") if part.strip()]
    try:
        return yaml.safe_load(raw)
    except yaml.YAMLError:
        return raw


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply `a.b=c` assignments to a nested dict (a copy is returned)."""
    out: dict[str, Any] = json.loads(json.dumps(data))
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise SpecError(
                f"Override '{item}' is not of the form a.b=value, e.g. "
                "--set load.concurrency=1,2,4 or --set shape.isl_tokens=1024."
            )
        node = out
        parts = key.strip().split(".")
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise SpecError(f"Override '{item}': '{part}' is a value, not a section.")
            node = child
        node[parts[-1]] = _parse_value(raw.strip())
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
            parts.append(f"'{loc}' = {given!r}: {err['msg']}")
    return SpecError(f"The spec from {source} is invalid: " + "; ".join(parts) + ".")


def validate_as(model: type[M], data: dict[str, Any], source: str) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise explain(exc, source) from None


# The embedded default matrix, sized for 2 CPU cores: llama.cpp prefills at about 1 ms per
# token there and is compute-bound, so long prompts make every point prefill-bound and the
# frontier flat; a short prompt and a longer output show the batching trade-off within minutes.
# Concurrency 2 gains nothing over 1 there (measured: TPOT doubles), so the sweep skips it.
EMBEDDED_DEFAULTS: dict[str, object] = {
    "name": "embedded-smollm2",
    "shape": {"isl_tokens": 64, "osl_tokens": 128},
    "load": {"concurrency": [1, 4, 8, 16]},
}


def load_spec(path: Path | None = None, overrides: list[str] | None = None) -> BenchmarkSpec:
    """The spec at `path` with overrides applied, validated. Without a file the base is the
    model defaults, or `EMBEDDED_DEFAULTS` when the target stays the embedded server."""
    data = read_mapping(path) if path is not None else {}
    data = apply_overrides(data, overrides or [])
    url = str(data.get("target", {}).get("url", "embedded"))
    if path is None and url.partition("?")[0] == "embedded":  # also embedded?kv=q4_0
        data = _merged(json.loads(json.dumps(EMBEDDED_DEFAULTS)), data)
    return validate_as(BenchmarkSpec, data, str(path) if path else "the defaults")


def _merged(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """`top` over `base`, section by section."""
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merged(out[key], value)
        else:
            out[key] = value
    return out
