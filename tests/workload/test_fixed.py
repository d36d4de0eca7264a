"""Exact-length prompts: exact for the tokenizer, lengths in range, no shared prefixes."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from scoville.workload.fixed import build_prompts, exact_prompt, sample_lengths
from scoville.workload.tokenizers import TiktokenTokenizer

CL100K = TiktokenTokenizer("cl100k_base")
O200K = TiktokenTokenizer("o200k_harmony")


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=1, max_value=600), st.integers(min_value=0, max_value=10**6))
def test_prompt_is_exact(n: int, seed: int) -> None:
    for tok in (CL100K, O200K):
        text = exact_prompt(tok, n, random.Random(seed))
        assert len(tok.encode(text)) == n


def test_overhead_is_subtracted() -> None:
    text = exact_prompt(CL100K, 100, random.Random(1), overhead_tokens=7)
    assert len(CL100K.encode(text)) == 93


@given(
    st.integers(min_value=1, max_value=5000),
    st.floats(min_value=0.01, max_value=1.0),
    st.integers(min_value=0, max_value=1000),
)
def test_lengths_uniform_range(length: int, ratio: float, seed: int) -> None:
    lens = sample_lengths(50, length, ratio, random.Random(seed))
    assert all(max(1, int(ratio * length)) <= x <= length for x in lens)


def test_no_shared_prefixes_and_deterministic() -> None:
    prompts = build_prompts(CL100K, 40, 256, 32, 0.8, seed=3)
    assert prompts == build_prompts(CL100K, 40, 256, 32, 0.8, seed=3)
    ids = [CL100K.encode(p.text) for p in prompts]
    for i, a in enumerate(ids):
        assert len(a) == prompts[i].input_tokens
        for b in ids[i + 1 :]:
            pairs = enumerate(zip(a, b, strict=False))
            common = next((k for k, (x, y) in pairs if x != y), min(len(a), len(b)))
            assert common <= 4  # at most a few leading digit tokens can coincide
