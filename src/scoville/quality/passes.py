"""The quality passes: the same items, greedy, on a reference and a candidate endpoint.

Pass 1 and 2 send every item to each side at the pass concurrency. Optionally the reference
runs again at a higher concurrency (batch invariance). Where both sides return token ids and
top-k logprobs, the candidate is continued along the reference's tokens after each divergence
(prompt = prompt ids + the reference's tokens so far), so its distributions are scored on the
reference's greedy path, not its own.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from scoville.client.seam import Server
from scoville.quality.items import Item
from scoville.quality.probe import Generation, TopK, build_request, generate_all
from scoville.workload.tokenizers import Tokenizer

PROBE_TEXTS = (
    "The quick brown fox jumps over the lazy dog.",
    'apple=41 river=17\n{"name": "Bob", "age": 25}',
    "naïve café, 東京 and 3.14159",
)
LOGPROB_TOLERANCE = 0.05  # nats: a continued request must reproduce the original top-k this well


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One side of the comparison: the server, its model name and tokenizer, and facts from
    discovery (`/v1/models`) used to compare vocabularies."""

    label: str
    server: Server
    model: str
    tokenizer: Tokenizer | None
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PassConfig:
    """How the passes run. `batch_concurrency`: also run the reference at this concurrency and
    compare it with its concurrency-1 pass. `resume_limit`: continuations per item."""

    seed: int = 0
    top_k: int = 5
    concurrency: int = 1
    batch_concurrency: int | None = None
    resume_limit: int = 3


@dataclass
class Passes:
    """Everything the passes returned. `segments[i]` lists the candidate's continuations of
    item i along the reference's tokens as (start position, generation)."""

    items: list[Item]
    reference: list[Generation]
    candidate: list[Generation]
    batched: tuple[list[Generation], list[Generation]] | None  # (reference c1, reference cN)
    segments: dict[int, list[tuple[int, Generation]]]
    same_tokenizer: bool
    tokenizer_note: str
    resume_note: str
    logprob_gaps: str | None
    wall_s: float


def _n_vocab(facts: dict[str, Any]) -> int | None:
    data = (facts.get("v1_models") or {}).get("data") or []
    meta = data[0].get("meta") if data and isinstance(data[0], dict) else None
    return int(meta["n_vocab"]) if isinstance(meta, dict) and "n_vocab" in meta else None


def tokenizer_check(ref: Endpoint, cand: Endpoint) -> tuple[bool, str]:
    """Do both sides tokenize alike? Probe texts through both tokenizers, and the vocabulary
    sizes the servers state. Refusal names the evidence."""
    refuse = "token agreement and logprob divergence are refused (task accuracy still runs)"
    vr, vc = _n_vocab(ref.facts), _n_vocab(cand.facts)
    if vr is not None and vc is not None and vr != vc:
        return False, f"the reference has a {vr}-token vocabulary, the candidate {vc}: {refuse}"
    if ref.tokenizer is None or cand.tokenizer is None:
        if ref.model == cand.model:
            return True, f"no tokenizer to compare; both serve '{ref.model}', assumed the same"
        return (
            False,
            f"no tokenizer to compare and the models differ ({ref.model}, {cand.model}): {refuse}",
        )
    for text in PROBE_TEXTS:
        a, b = ref.tokenizer.encode(text), cand.tokenizer.encode(text)
        if a != b:
            return False, (
                f"the targets tokenize differently: {text!r} is {a[:6]}... on the reference and "
                f"{b[:6]}... on the candidate; {refuse}"
            )
    return True, f"same token ids for {len(PROBE_TEXTS)} probe texts"


def walk(
    ref: Generation, segments: Sequence[tuple[int, Generation]]
) -> tuple[list[tuple[TopK, TopK]], int | None]:
    """Scored (reference top-k, candidate top-k) pairs along the reference's tokens, and the
    position to continue from (None: the reference's end was reached or no continuation).

    A segment starting at s scores positions s, s+1, ... up to and including its first token
    that differs from the reference's; the next segment would start one past it."""
    pairs: list[tuple[TopK, TopK]] = []
    ref_tokens, ref_top = ref.tokens or (), ref.top or ()
    nxt: int | None = None
    for start, gen in segments:
        if start != (nxt if nxt is not None else 0) or gen.tokens is None or gen.top is None:
            return pairs, None
        nxt = None
        for k, (tok, top) in enumerate(zip(gen.tokens, gen.top, strict=False)):
            pos = start + k
            if pos >= len(ref_tokens):
                return pairs, None
            pairs.append((ref_top[pos], top))
            if tok != ref_tokens[pos]:
                nxt = pos + 1
                break
        if nxt is None:  # matched to its end: the candidate stopped, or reached the reference's end
            return pairs, None
    return pairs, nxt if nxt is not None and nxt < len(ref_tokens) else None


def _ids(gen: Generation) -> list[int] | None:
    toks = gen.tokens
    if gen.top is None or toks is None or not all(isinstance(t, int) for t in toks):
        return None
    return [int(t) for t in toks]


async def _continuation_works(
    cand: Endpoint, items: Sequence[Item], gens: Sequence[Generation], cfg: PassConfig
) -> str | None:
    """None when a request of prompt ids + the candidate's own first two tokens reproduces its
    original top-k at position 2; else why continuations cannot be trusted."""
    if cand.tokenizer is None:
        return "the candidate has no tokenizer to build token-id prompts"
    if not any(g.top for g in gens):
        return "the candidate sent no logprobs"
    for item, gen in zip(items, gens, strict=True):
        ids = _ids(gen)
        if ids is None or len(ids) < 3 or gen.top is None or not gen.top[2]:
            continue
        probe = Item(item.item_id, item.task, item.kind, item.prompt, max_tokens=1)
        prompt_ids = cand.tokenizer.encode(item.prompt) + ids[:2]
        req = build_request(probe, f"{item.item_id}-check", cfg.seed, cfg.top_k, prompt_ids)
        (got,) = await generate_all(cand.server, [req])
        want = gen.top[2]
        top = got.top[0] if got.top else {}
        best = max(want, key=lambda t: want[t])
        if best in top and abs(top[best] - want[best]) <= LOGPROB_TOLERANCE:
            return None
        why = got.error or "mismatch"
        return f"a token-id prompt did not reproduce the candidate's own logprobs ({why})"
    return "no candidate answer was long enough to check token-id prompts"


async def _continue(
    cand: Endpoint,
    items: Sequence[Item],
    ref_gens: Sequence[Generation],
    segments: dict[int, list[tuple[int, Generation]]],
    cfg: PassConfig,
) -> None:
    """Continue the candidate along the reference's tokens, `cfg.resume_limit` rounds."""
    assert cand.tokenizer is not None
    base = {i: cand.tokenizer.encode(items[i].prompt) for i in segments}
    for _round in range(cfg.resume_limit):
        todo: list[tuple[int, int]] = []
        for i, segs in segments.items():
            _pairs, nxt = walk(ref_gens[i], segs)
            ref_ids = _ids(ref_gens[i])
            if nxt is not None and ref_ids is not None and items[i].max_tokens - nxt >= 1:
                todo.append((i, nxt))
        if not todo:
            return
        reqs = []
        for i, start in todo:
            ref_ids = _ids(ref_gens[i]) or []
            it = items[i]
            cont = Item(
                it.item_id,
                it.task,
                it.kind,
                it.prompt,
                max_tokens=it.max_tokens - start,
                stop=it.stop,
            )
            reqs.append(
                build_request(
                    cont, f"{it.item_id}-at{start}", cfg.seed, cfg.top_k, base[i] + ref_ids[:start]
                )
            )
        got = await generate_all(cand.server, reqs, cfg.concurrency)
        for (i, start), gen in zip(todo, got, strict=True):
            segments[i].append((start, gen))


def _gap(g: Generation) -> bool:
    """True when a successful answer's logprobs do not cover every token it generated."""
    if not g.ok:
        return False
    if g.tokens is None:
        return True
    return g.completion_tokens is not None and len(g.tokens) != g.completion_tokens


def _logprob_gaps(sides: Sequence[tuple[str, Sequence[Generation]]]) -> str | None:
    """Why the token ids from logprobs cannot be used (None when they can)."""
    why = []
    for name, gens in sides:
        n_ok = sum(1 for g in gens if g.ok)
        none = sum(1 for g in gens if g.ok and g.tokens is None)
        short = sum(1 for g in gens if _gap(g) and g.tokens is not None)
        if none:
            why.append(f"{name}: no logprobs in {none} of {n_ok} answers")
        if short:
            why.append(
                f"{name}: logprobs for fewer tokens than generated in {short} of {n_ok} answers "
                "(llama.cpp omits them for tokens accepted from a speculative draft)"
            )
    return "; ".join(why) or None


def retokenized(gens: Sequence[Generation], tokenizer: Tokenizer | None) -> list[Generation]:
    """Tokens re-read from each answer's text with the target's tokenizer, top-k dropped (an
    approximation: a text can re-tokenize differently from how it was generated)."""
    out = []
    for g in gens:
        ids = tuple(tokenizer.encode(g.text)) if tokenizer is not None and g.ok else None
        out.append(dataclasses.replace(g, tokens=ids, top=None))
    return out


async def run_passes(
    ref: Endpoint, cand: Endpoint, items: Sequence[Item], cfg: PassConfig
) -> Passes:
    """Send every item to both sides (and the batch pass); continue along the reference."""
    t0_ns = time.monotonic_ns()
    same, note = tokenizer_check(ref, cand)
    reqs = [build_request(it, it.item_id, cfg.seed, cfg.top_k) for it in items]
    ref_gens = await generate_all(ref.server, reqs, cfg.concurrency)
    cand_gens = await generate_all(cand.server, reqs, cfg.concurrency)
    batched = None
    if cfg.batch_concurrency:
        batched = await generate_all(ref.server, reqs, cfg.batch_concurrency)
    gaps = _logprob_gaps([("reference", ref_gens), ("candidate", cand_gens)])
    if gaps is not None:  # compare like with like: both sides re-read from their text
        ref_gens = retokenized(ref_gens, ref.tokenizer)
        cand_gens = retokenized(cand_gens, cand.tokenizer)
        note += "; tokens re-read from the output texts with the targets' tokenizers"
    batch_ref = ref_gens
    if batched is not None and _logprob_gaps([("batch", batched)]) is not None:
        batched = retokenized(batched, ref.tokenizer)
        batch_ref = ref_gens if gaps is not None else retokenized(ref_gens, ref.tokenizer)
    segments = {i: [(0, g)] for i, g in enumerate(cand_gens) if g.ok and ref_gens[i].ok}
    resume_note = "continuations off"
    if same and gaps is None and cfg.resume_limit > 0 and cfg.top_k > 0:
        why_not = await _continuation_works(cand, items, cand_gens, cfg)
        if why_not is None:
            await _continue(cand, items, ref_gens, segments, cfg)
            resume_note = (
                "the candidate was continued along the reference's tokens "
                f"(up to {cfg.resume_limit} times per item)"
            )
        else:
            resume_note = f"logprobs scored up to the first divergence only: {why_not}"
    return Passes(
        items=list(items),
        reference=ref_gens,
        candidate=cand_gens,
        batched=None if batched is None else (batch_ref, batched),
        segments=segments,
        same_tokenizer=same,
        tokenizer_note=note,
        resume_note=resume_note,
        logprob_gaps=gaps,
        wall_s=(time.monotonic_ns() - t0_ns) / 1e9,
    )
