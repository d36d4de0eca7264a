"""The tokenizer check and the walk along the reference's tokens, on written-out cases."""

from __future__ import annotations

import math

from scoville.client.openai_sse import OpenAIStreamingServer
from scoville.client.seam import MonotonicClock
from scoville.quality.passes import Endpoint, _logprob_gaps, retokenized, tokenizer_check, walk
from scoville.quality.probe import Generation, read_logprobs


class WordTokenizer:
    """A fake tokenizer: one id per character code of each word's first letter."""

    def __init__(self, offset: int = 0) -> None:
        self.name = f"words+{offset}"
        self.offset = offset

    def encode(self, text: str) -> list[int]:
        return [ord(w[0]) + self.offset for w in text.split()]

    def decode(self, ids: list[int]) -> str:
        return " ".join(chr(i - self.offset) for i in ids)


def _ep(tok: WordTokenizer | None, model: str = "m", n_vocab: int | None = None) -> Endpoint:
    server = OpenAIStreamingServer("http://127.0.0.1:9", model, MonotonicClock())
    facts = (
        {"v1_models": {"data": [{"id": model, "meta": {"n_vocab": n_vocab}}]}} if n_vocab else {}
    )
    return Endpoint("x", server, model, tok, facts)


def test_tokenizer_check_refuses_different_tokenizers() -> None:
    same, note = tokenizer_check(_ep(WordTokenizer()), _ep(WordTokenizer()))
    assert same and "same token ids" in note
    same, note = tokenizer_check(_ep(WordTokenizer()), _ep(WordTokenizer(1)))
    assert not same and "tokenize differently" in note and "task accuracy still runs" in note
    same, note = tokenizer_check(
        _ep(WordTokenizer(), n_vocab=49152), _ep(WordTokenizer(), n_vocab=32000)
    )
    assert not same and "49152-token vocabulary" in note
    same, _ = tokenizer_check(_ep(None, "a"), _ep(None, "b"))
    assert not same


def _gen(tokens: list[int], tops: list[dict[int | str, float]]) -> Generation:
    return Generation("", tuple(tokens), tuple(tops), len(tokens), None, 0)


def test_walk_scores_along_the_reference_and_continues_past_divergences() -> None:
    top = {1: math.log(0.9)}
    ref = _gen([1, 2, 3, 4, 5], [top] * 5)
    first = _gen([1, 2, 9, 9], [top] * 4)  # diverges at position 2
    pairs, nxt = walk(ref, [(0, first)])
    assert len(pairs) == 3 and nxt == 3  # positions 0, 1, 2 scored; continue at 3
    cont = _gen([4, 5], [top] * 2)  # continued from position 3, matches to the end
    pairs, nxt = walk(ref, [(0, first), (3, cont)])
    assert len(pairs) == 5 and nxt is None
    same = _gen([1, 2, 3, 4, 5], [top] * 5)
    assert walk(ref, [(0, same)]) == ([(top, top)] * 5, None)


def test_read_logprobs_both_dialects() -> None:
    llama = (
        '{"choices":[{"text":" Paris","logprobs":{"content":[{"id":7042,"token":" Paris",'
        '"logprob":-0.25,"top_logprobs":[{"id":7042,"token":" Paris","logprob":-0.25},'
        '{"id":260,"token":" the","logprob":-2.5}]}]}}]}'
    )
    legacy = (
        '{"choices":[{"text":" a","logprobs":{"tokens":[" a"],'
        '"top_logprobs":[{" a":-0.1," b":-3.0}]}}]}'
    )
    assert read_logprobs([llama, "[DONE]"]) == ([7042], [{7042: -0.25, 260: -2.5}])
    assert read_logprobs([legacy]) == ([" a"], [{" a": -0.1, " b": -3.0}])
    assert read_logprobs(['{"choices":[{"text":"x"}]}']) is None


def test_logprobs_that_skip_tokens_are_caught_and_texts_re_read() -> None:
    # A speculative server streamed 4 tokens but sent logprobs for 2 of them.
    short = Generation(" 13", (216, 198), ({216: -0.1}, {198: -0.1}), 4, None, 0)
    whole = Generation(" 13", (216, 16, 18, 198), ({216: -0.1},) * 4, 4, None, 0)
    failed = Generation("", None, None, None, "http_5xx: boom", 0)
    assert _logprob_gaps([("reference", [whole, failed])]) is None
    why = _logprob_gaps([("reference", [whole]), ("candidate", [short, failed])])
    assert (
        why is not None and "candidate: logprobs for fewer tokens than generated in 1 of 1" in why
    )
    (again, gone) = retokenized([short, failed], WordTokenizer())
    assert again.tokens == (ord("1"),) and again.top is None and gone.tokens is None
