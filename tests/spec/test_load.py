"""Spec loading, overrides, hashing and the messages a user sees for mistakes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from scoville.errors import SpecError
from scoville.spec.load import load_spec


def test_defaults_and_overrides() -> None:
    # a remote target: the model's own request counts (the embedded default declares its own)
    spec = load_spec(
        None,
        [
            "target.url=http://127.0.0.1:8000",
            "load.concurrency=1,4",
            "shape.isl_tokens=64",
            "accelerators.power_w_per_accelerator=700",
        ],
    )
    assert spec.load.concurrency == (1, 4)
    assert spec.shape.isl_tokens == 64
    assert spec.accelerators.power_w_per_accelerator == 700.0
    assert spec.requests_for(4) == 40 and spec.warmup_for(4) == 8


def test_hash_names_content_not_spelling(tmp_path: Path) -> None:
    y = tmp_path / "a.yaml"
    y.write_text("shape:\n  osl_tokens: 64\nload:\n  concurrency: [2, 8]\n")
    j = tmp_path / "b.json"
    j.write_text(json.dumps({"load": {"concurrency": [2, 8]}, "shape": {"osl_tokens": 64}}))
    t = tmp_path / "c.toml"
    t.write_text("[load]\nconcurrency = [2, 8]\n[shape]\nosl_tokens = 64\n")
    hashes = {load_spec(p).content_hash() for p in (y, j, t)}
    assert len(hashes) == 1
    assert load_spec(y, ["seed=1"]).content_hash() not in hashes


@pytest.mark.parametrize(
    "override, words",
    [
        ("shape.isl=5", ["shape.isl", "not a known field"]),
        ("shape.range_ratio=1.5", ["shape.range_ratio", "1.5"]),
        ("load.concurrency=0", ["concurrency", ">= 1"]),
        ("accelerators.power_boundary=wall", ["power_boundary", "package-tdp"]),
        ("nonsense", ["a.b=value"]),
    ],
)
def test_bad_specs_name_the_field(override: str, words: list[str]) -> None:
    with pytest.raises(SpecError) as exc:
        load_spec(None, [override])
    msg = str(exc.value)
    for w in words:
        assert w in msg
    assert "\n" not in msg


def test_frozen() -> None:
    spec = load_spec()
    with pytest.raises(ValidationError):
        spec.seed = 3  # type: ignore[misc]


def test_bad_yaml_file(tmp_path: Path) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text("load: [unclosed\n")
    with pytest.raises(SpecError, match="not valid yaml"):
        load_spec(p)
    with pytest.raises(SpecError, match="does not exist"):
        load_spec(tmp_path / "missing.yaml")


def test_embedded_default_matrix_only_for_the_embedded_target() -> None:
    embedded = load_spec()
    assert (embedded.shape.isl_tokens, embedded.shape.osl_tokens) == (64, 64)
    assert load_spec(None, ["shape.isl_tokens=256"]).shape.osl_tokens == 64
    assert (embedded.requests_for(16), embedded.warmup_for(16)) == (16, 2)
    remote = load_spec(None, ["target.url=http://127.0.0.1:8000"])
    assert (remote.shape.isl_tokens, remote.shape.osl_tokens) == (512, 128)
