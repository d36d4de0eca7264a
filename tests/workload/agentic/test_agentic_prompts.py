"""Prompt synthesis from block hashes: exact lengths, equal hashes equal bytes, no collisions."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoville.errors import TokenizerError
from scoville.workload.agentic.prompts import PromptBook, WordVocab, prefix_keys
from scoville.workload.agentic.session import Agent, Session, Turn
from scoville.workload.tokenizers import TiktokenTokenizer


@lru_cache(maxsize=1)
def _tok() -> TiktokenTokenizer:
    return TiktokenTokenizer("cl100k_base")


@lru_cache(maxsize=1)
def _vocab() -> WordVocab:
    return WordVocab.for_tokenizer(_tok())


def _session(ns: str, turns: list[tuple[int, tuple[int, ...]]], block: int = 16) -> Session:
    return Session(ns, (Agent("root", tuple(Turn(n, 1, h) for n, h in turns)),), block, ns)


hash_lists = st.lists(st.integers(0, 40), min_size=0, max_size=6)


@settings(max_examples=30, deadline=None)
@given(
    turns=st.lists(st.tuples(st.integers(1, 130), hash_lists), min_size=1, max_size=5),
    marker=st.one_of(st.none(), st.integers(0, 2**64 - 1)),
)
def test_lengths_are_exact_for_the_tokenizer(
    turns: list[tuple[int, tuple[int, ...]]], marker: int | None
) -> None:
    s = _session("ns", [(n, tuple(h)) for n, h in turns])
    book = PromptBook(_vocab(), [s])
    for i, t in enumerate(s.root.turns):
        text = book.turn_text(s, t, marker, f"tail-{i}")
        assert len(_tok().encode(text)) == t.input_tokens


def test_equal_hashes_give_byte_identical_prefixes() -> None:
    a = _session("ns", [(16 * 5, (1, 2, 3, 4, 5))])
    b = _session("ns", [(16 * 4 + 7, (1, 2, 3, 9, 10))])
    book = PromptBook(_vocab(), [a, b])
    ta = book.turn_text(a, a.root.turns[0], 77, "a")
    tb = book.turn_text(b, b.root.turns[0], 77, "b")
    shared_words = book.marker_width + 16 * 3  # same marker, then blocks 1, 2, 3
    wa, wb = ta.split(" ")[1:], tb.split(" ")[1:]
    assert wa[:shared_words] == wb[:shared_words]
    # block 4 vs block 9: every word may repeat by chance, but not all of them
    assert wa[shared_words : shared_words + 16] != wb[shared_words : shared_words + 16]
    assert wa[shared_words] != wb[shared_words]  # the index digits differ
    # the same turn built twice is the same bytes
    assert ta == book.turn_text(a, a.root.turns[0], 77, "a")


def test_every_block_is_distinct_and_namespaces_are_separate() -> None:
    hashes = tuple(range(3000))
    s1 = _session("one", [(3000 * 4, hashes)], block=4)
    s2 = _session("two", [(3000 * 4, hashes)], block=4)
    book = PromptBook(_vocab(), [s1, s2])
    assert book.index_width == 2  # 6000 blocks need two base-2040 digits
    rows = np.concatenate(
        [book.block_word_ids("one", hashes, 4), book.block_word_ids("two", hashes, 4)]
    ).reshape(-1, 4)
    assert len({tuple(r) for r in rows.tolist()}) == 6000


def test_markers_differ_per_play_and_lengths_still_hold() -> None:
    s = _session("ns", [(100, (1, 2, 3, 4, 5, 6, 7))])
    book = PromptBook(_vocab(), [s])
    t = s.root.turns[0]
    p1, p2 = book.turn_text(s, t, 1, "x"), book.turn_text(s, t, 2, "x")
    assert p1 != p2 and len(p1.split(" ")) == len(p2.split(" "))
    assert p1.split(" ")[book.marker_width + 1 :] == p2.split(" ")[book.marker_width + 1 :]
    assert book.turn_text(s, t, None, "x") != p1


def test_too_small_blocks_are_refused() -> None:
    s = _session("ns", [(3000, tuple(range(3000)))], block=1)
    book = PromptBook(_vocab(), [s])
    with pytest.raises(TokenizerError, match="scale factor"):
        book.turn_text(s, s.root.turns[0], None, "x")


def test_prefix_keys_follow_namespace_and_salt() -> None:
    s = _session("ns", [(32, (1, 2))])
    t = s.root.turns[0]
    assert prefix_keys(s, t, None) == prefix_keys(s, t, None)
    assert prefix_keys(s, t, 5) != prefix_keys(s, t, None)
    assert prefix_keys(s, t, 5)[0] != prefix_keys(s, t, 6)[0]
    assert all(0 <= k < 2**63 for k in prefix_keys(s, t, 5))


class _CharTokenizer:
    """One token per character: no filler word is a single token."""

    name = "chars"

    def encode(self, text: str) -> list[int]:
        return [ord(c) for c in text]

    def decode(self, ids: list[int]) -> str:
        return "".join(chr(i) for i in ids)


def test_a_tokenizer_that_cannot_be_exact_is_refused() -> None:
    with pytest.raises(TokenizerError, match="cannot be made exact"):
        WordVocab.for_tokenizer(_CharTokenizer())


def test_consecutive_plays_differ_from_the_first_word() -> None:
    s = _session("ns", [(40, (1, 2))])
    book = PromptBook(_vocab(), [s])
    nonce = 12345 << 32
    firsts = {book.marker_word_ids(nonce | play)[0] for play in range(50)}
    assert len(firsts) > 40  # 50 plays: almost all start with a different word
    markers = {tuple(book.marker_word_ids(nonce | play).tolist()) for play in range(2000)}
    assert len(markers) == 2000
