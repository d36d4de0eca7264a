"""Embedded-target modes read from the target URL: 'embedded?kv=q4_0&spec=ngram'."""

from __future__ import annotations

import pytest

from scoville.errors import TargetError
from scoville.spec.load import load_spec
from scoville.targets.embedded import EmbeddedConfig, with_url_options


def test_modes_from_the_url() -> None:
    base = EmbeddedConfig(parallel=2)
    cfg = with_url_options(base, "embedded?kv=q4_0&spec=ngram")
    assert (cfg.kv_cache, cfg.speculative, cfg.parallel) == ("q4_0", "ngram", 2)
    assert with_url_options(base, "embedded") == base


def test_slots_and_threads_from_the_url_never_raise_slots_above_the_sweep() -> None:
    base = EmbeddedConfig(parallel=16, threads=0)
    cfg = with_url_options(base, "embedded?slots=2&threads=1")
    assert (cfg.parallel, cfg.threads, cfg.kv_cache) == (2, 1, "f16")
    assert with_url_options(base, "embedded?slots=64").parallel == 16
    for bad in ("slots=0", "slots=two", "threads=-1"):
        with pytest.raises(TargetError, match=f"Unknown embedded option '{bad}'"):
            with_url_options(base, f"embedded?{bad}")


def test_unknown_mode_is_a_user_error_listing_the_options() -> None:
    with pytest.raises(TargetError, match=r"kv=f16\|q8_0\|q4_0"):
        with_url_options(EmbeddedConfig(), "embedded?kv=q3")
    with pytest.raises(TargetError, match="Unknown embedded option 'draft=1'"):
        with_url_options(EmbeddedConfig(), "embedded?draft=1")


def test_an_embedded_url_with_modes_keeps_the_embedded_defaults() -> None:
    plain = load_spec(None, [])
    moded = load_spec(None, ["target.url=embedded?kv=q8_0"])
    assert moded.shape == plain.shape and moded.load == plain.load
