"""Fixed-sequence workload (InferenceX-style): prompts of exactly ISL tokens, no I/O.

Each prompt is random vocabulary text re-tokenised until its length is exact for the target's
tokenizer; every prompt opens with a request-unique random run of tokens so no two requests
share a prefix longer than a few tokens (a prefix cache cannot flatter the result).
Lengths are uniform integers in [ratio*L, L] (InferenceX's `random_range_ratio`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from scoville.errors import TokenizerError
from scoville.workload.tokenizers import Tokenizer

# Plain lower-case English words: stable single tokens (with their leading space) for BPE
# vocabularies, so re-tokenisation rarely merges across word boundaries.
_WORDS = (
    "time year people way day man thing woman life child world school state family student "
    "group country problem hand part place case week company system program question work "
    "government number night point home water room mother area money story fact month lot "
    "right study book eye job word business issue side kind head house service friend father "
    "power hour game line end member law car city community name president team minute idea "
    "kid body information back parent face others level office door health person art war "
    "history party result change morning reason research girl guy moment air teacher force "
    "education foot boy age policy music market sense nation plan college interest death "
    "experience effect use class control care field development role effort rate heart drug "
    "show leader light voice wife police mind price report decision son view relationship town "
    "road arm difference value building action model season society tax director position "
    "player record paper space ground form event official matter center couple site project "
    "activity star table need court oil situation cost industry figure street image phone data "
    "picture practice piece land product doctor wall patient worker news test movie north love "
    "support technology step baby computer type attention film tree source organization hair "
    "window evidence population truth song energy garden river stone cloud paper bridge metal"
).split()


@dataclass(frozen=True, slots=True)
class Prompt:
    """A prompt and its exact token count under the tokenizer that built it."""

    text: str
    input_tokens: int
    output_tokens: int  # max_tokens to ask for


def sample_lengths(n: int, length: int, ratio: float, rng: random.Random) -> list[int]:
    """n integers uniform in [max(1, floor(ratio*length)), length] (inclusive)."""
    low = max(1, int(ratio * length))
    return [rng.randint(low, length) for _ in range(n)]


def _candidate(n_tokens: int, rng: random.Random) -> str:
    words = rng.choices(_WORDS, k=n_tokens + 8)
    # A request-unique opening: a random decimal id and random words (no shared prefix).
    return f"{rng.randrange(10**9):09d} " + " ".join(words)


def exact_prompt(
    tokenizer: Tokenizer,
    n_tokens: int,
    rng: random.Random,
    overhead_tokens: int = 0,
    max_tries: int = 8,
) -> str:
    """Text whose encoding is exactly `n_tokens - overhead_tokens` tokens.

    `overhead_tokens` is what the server adds around the text (chat template, BOS), so the
    server counts `n_tokens` in all. Raises `TokenizerError` if no exact text is found.
    """
    want = n_tokens - overhead_tokens
    if want < 1:
        raise TokenizerError(
            f"An input length of {n_tokens} tokens leaves no room for the prompt after "
            f"{overhead_tokens} tokens of template overhead; raise shape.isl_tokens."
        )
    for _ in range(max_tries):
        text = tokenizer.decode(tokenizer.encode(_candidate(want, rng))[:want])
        for _fix in range(6):
            ids = tokenizer.encode(text)
            if len(ids) == want:
                return text
            if len(ids) > want:
                text = tokenizer.decode(ids[:want])
            else:
                text = text + " " + " ".join(rng.choices(_WORDS, k=want - len(ids)))
    raise TokenizerError(
        f"Could not build a prompt of exactly {want} tokens with tokenizer "
        f"{tokenizer.name}; its round trip is unstable. Choose another tokenizer."
    )


def build_prompts(
    tokenizer: Tokenizer | None,
    count: int,
    isl_tokens: int,
    osl_tokens: int,
    range_ratio: float,
    seed: int,
    overhead_tokens: int = 0,
    salt: str = "",
) -> list[Prompt]:
    """`count` prompts; lengths are deterministic in `seed`, text in (`seed`, `salt`).

    A per-run `salt` gives every run fresh text of the same lengths, so a server's prompt
    cache cannot serve one run from the previous one. With `tokenizer=None` (a target that
    reads only token counts, such as the twin) the text is left empty."""
    rng = random.Random(seed)
    isl = sample_lengths(count, isl_tokens, range_ratio, rng)
    osl = sample_lengths(count, osl_tokens, range_ratio, rng)
    if tokenizer is None:
        return [Prompt("", i, o) for i, o in zip(isl, osl, strict=True)]
    text_rng = random.Random(f"{seed}:{salt}")
    return [
        Prompt(exact_prompt(tokenizer, i, text_rng, overhead_tokens), i, o)
        for i, o in zip(isl, osl, strict=True)
    ]
