"""Prompt text from block hashes: exact-length, prefix-stable, collision-free filler.

Part of the agentic workload. Every (namespace, hash id) block becomes a fixed run of filler words;
each word is one token of the target's tokenizer (validated), so a prompt of N words is N tokens.
A block starts with its dense index written in base V (V = vocabulary size), so two different
blocks never produce the same text and equal blocks always produce the same bytes. A per-play
cache-bust marker (a value written the same way) is put in front of every prompt of a play; the
prompt keeps its exact length by dropping as many words from its end.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources

import numpy as np
import numpy.typing as npt

from scoville.errors import TokenizerError
from scoville.workload.agentic.session import Session, Turn
from scoville.workload.tokenizers import Tokenizer

MARKER_BITS = 64  # a marker writes a 64-bit value: (run nonce << 32) | play index


def candidate_words() -> list[str]:
    """The shipped filler words (without their leading space)."""
    text = resources.files("scoville.data").joinpath("agentic/words.txt").read_text("utf-8")
    return [w for w in text.split("\n") if w and not w.startswith("#")]


@dataclass(frozen=True)
class WordVocab:
    """Filler words (each with its leading space) that the tokenizer encodes one token per word,
    in any order. `size` is V, the base in which block indices and markers are written."""

    words: tuple[str, ...]
    tokenizer_name: str

    @property
    def size(self) -> int:
        return len(self.words)

    @classmethod
    def for_tokenizer(cls, tok: Tokenizer, minimum: int = 256) -> WordVocab:
        words = [" " + w for w in candidate_words()]
        if not _one_token_each(tok, words):
            words = [w for w in words if len(tok.encode(w)) == 1]
            if not _one_token_each(tok, words):
                words = []
        if len(words) < minimum:
            raise TokenizerError(
                f"Tokenizer {tok.name} encodes only {len(words)} of the filler words as single "
                f"tokens (need {minimum}), so prompts cannot be made exact. Use a BPE tokenizer "
                "(tiktoken or a byte-level tokenizer.json) or the target's own tokenizer."
            )
        return cls(tuple(words), tok.name)


def _one_token_each(tok: Tokenizer, words: list[str]) -> bool:
    if not words:
        return False
    rng = np.random.default_rng(0)
    shuffled = [words[i] for i in rng.permutation(len(words))]
    return all(len(tok.encode("".join(order))) == len(words) for order in (words, shuffled))


def _digits(value: int, base: int, width: int) -> list[int]:
    out = []
    for _ in range(width):
        value, d = divmod(value, base)
        out.append(d)
    if value:
        raise ValueError("value does not fit the width")
    return out[::-1]


class PromptBook:
    """Builds prompt text for the turns of a fixed set of sessions.

    Block indices are assigned once, in session order, at construction (deterministic). Each
    block's first `index_width` words are its index in base V; the rest are filler drawn from
    the index (a fixed arithmetic mix), so the text depends on nothing but (namespace, hash id).
    """

    def __init__(self, vocab: WordVocab, sessions: Iterable[Session]) -> None:
        self.vocab = vocab
        self._words = np.array(vocab.words, dtype=object)
        self._index: dict[tuple[str, int], int] = {}
        for s in sessions:
            for _, _, t in s.turns():
                for h in t.hash_ids:
                    self._index.setdefault((s.namespace, h), len(self._index))
        v = vocab.size
        self.index_width = max(1, math.ceil(math.log(max(len(self._index), 2)) / math.log(v)))
        self.marker_width = math.ceil(MARKER_BITS / math.log2(v))

    @property
    def n_blocks(self) -> int:
        return len(self._index)

    def block_word_ids(
        self, namespace: str, hash_ids: Sequence[int], block: int
    ) -> npt.NDArray[np.int64]:
        """Word ids of the given blocks, concatenated: shape (len(hash_ids) * block,)."""
        if not hash_ids:
            return np.zeros(0, dtype=np.int64)
        v = self.vocab.size
        try:
            idx = np.array([self._index[(namespace, h)] for h in hash_ids], dtype=np.int64)
        except KeyError as exc:
            raise KeyError(f"block {exc} of namespace {namespace} was not registered") from exc
        j = np.arange(block, dtype=np.int64)
        ids = (idx[:, None] * 7919 + j[None, :] * 104729 + (idx[:, None] >> 5) * j[None, :]) % v
        if block < self.index_width:
            raise TokenizerError(
                f"Blocks of {block} tokens cannot carry the {self.index_width}-token index that "
                f"keeps {self.n_blocks} blocks apart; use a larger context scale factor."
            )
        rem = idx.copy()
        for pos in range(self.index_width - 1, -1, -1):  # the index, most significant digit first
            rem, d = np.divmod(rem, v)
            ids[:, pos] = d
        return ids.reshape(-1)

    def marker_word_ids(self, value: int) -> npt.NDArray[np.int64]:
        """The marker of a 64-bit value. The value is first multiplied by an odd constant modulo
        2**64 (a bijection, so markers stay distinct) so that consecutive plays differ from their
        first word on: a server never reuses a cached marker prefix across plays."""
        mixed = (value * 0x9E3779B97F4A7C15) % 2**MARKER_BITS
        return np.array(_digits(mixed, self.vocab.size, self.marker_width), dtype=np.int64)

    def turn_word_ids(
        self, session: Session, turn: Turn, marker: int | None, tail_key: str
    ) -> npt.NDArray[np.int64]:
        """Exactly `turn.input_tokens` word ids: marker, then the turn's blocks, then filler
        unique to `tail_key` when the blocks do not cover the input."""
        n = turn.input_tokens
        body = self.block_word_ids(session.namespace, turn.hash_ids, session.block_size_tokens)
        head = self.marker_word_ids(marker) if marker is not None else np.zeros(0, np.int64)
        short = n - len(head) - len(body)
        if short > 0:
            seed = int.from_bytes(hashlib.blake2b(tail_key.encode(), digest_size=8).digest())
            tail = np.random.default_rng(seed).integers(0, self.vocab.size, short)
            body = np.concatenate([body, tail])
        return np.concatenate([head, body])[:n]

    def text(self, word_ids: npt.NDArray[np.int64]) -> str:
        return "".join(self._words[word_ids].tolist())

    def turn_text(self, session: Session, turn: Turn, marker: int | None, tail_key: str) -> str:
        return self.text(self.turn_word_ids(session, turn, marker, tail_key))


def prefix_keys(session: Session, turn: Turn, salt: int | None) -> tuple[int, ...]:
    """63-bit integer keys of the turn's blocks for `GenerateRequest.prefix_hashes` (the twin's
    prefix cache): a digest of (namespace, hash id) and, when cache-busting, the play's marker."""
    pre = f"{session.namespace}\x00{'' if salt is None else salt}\x00".encode()
    return tuple(
        int.from_bytes(hashlib.blake2b(pre + str(h).encode(), digest_size=8).digest()) >> 1
        for h in turn.hash_ids
    )
