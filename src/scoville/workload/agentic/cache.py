"""Theoretical prefix-cache hits from block hashes (an unlimited cache), and context scaling.

Part of the agentic workload: what an infinite prefix cache would serve for a sequence of
requests, computed from hashes alone, so a server's reported hit rate can be set against it.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, replace

from scoville.workload.agentic.runs import BlockRuns, RunSet, runs_of
from scoville.workload.agentic.session import Session, Turn


@dataclass(frozen=True, slots=True)
class CacheTally:
    """Totals over a request sequence. A request's hit is the leading run of its blocks already
    seen (prefix semantics: a cache serves a prefix, never a block after a miss); hit tokens are
    `min(hit_blocks * block_size, input_tokens)`."""

    requests: int
    blocks: int
    hit_blocks: int
    input_tokens: int
    hit_tokens: int

    @property
    def block_hit_rate(self) -> float:
        return self.hit_blocks / self.blocks if self.blocks else 0.0

    @property
    def token_hit_rate(self) -> float:
        return self.hit_tokens / self.input_tokens if self.input_tokens else 0.0


class PrefixTracker:
    """An unlimited prefix cache over hashable block keys, fed in send order."""

    def __init__(self) -> None:
        self._seen: set[Hashable] = set()
        self.requests = self.blocks = self.hit_blocks = self.input_tokens = self.hit_tokens = 0

    def observe(self, keys: Sequence[Hashable], input_tokens: int, block_tokens: int) -> int:
        """Record one request; return the tokens an unlimited cache would have served."""
        hit = 0
        for k in keys:
            if k not in self._seen:
                break
            hit += 1
        self._seen.update(keys)
        hit_tokens = min(hit * block_tokens, input_tokens)
        self.requests += 1
        self.blocks += len(keys)
        self.hit_blocks += hit
        self.input_tokens += input_tokens
        self.hit_tokens += hit_tokens
        return hit_tokens

    def tally(self) -> CacheTally:
        return CacheTally(
            self.requests, self.blocks, self.hit_blocks, self.input_tokens, self.hit_tokens
        )


def trace_order(sessions: Iterable[Session]) -> list[tuple[Session, Turn]]:
    """Every turn of every session, in recorded time order (stable for equal times)."""
    items = [(s, t) for s in sessions for _, _, t in s.turns()]
    return sorted(items, key=lambda st: st[1].t_s)


def theoretical_hits(sessions: Iterable[Session]) -> CacheTally:
    """The unlimited-cache hit tally of a trace replayed in its recorded order, blocks keyed by
    (namespace, hash id): what the trace itself promises, before any cache-bust marker."""
    seen = RunSet()  # `PrefixTracker`'s answers, a step per run of ids instead of per block
    requests = blocks = hit_blocks = input_tokens = hit_tokens = 0
    for s, t in trace_order(sessions):
        keys = BlockRuns(s.namespace, runs_of(t.hash_ids))
        hit = seen.leading_blocks(keys)
        seen.add(keys)
        requests += 1
        blocks += len(t.hash_ids)
        hit_blocks += hit
        input_tokens += t.input_tokens
        hit_tokens += min(hit * s.block_size_tokens, t.input_tokens)
    return CacheTally(requests, blocks, hit_blocks, input_tokens, hit_tokens)


def min_block_tokens(n_distinct_blocks: int, vocab_size: int = 256) -> int:
    """Tokens a block needs so that `n_distinct_blocks` blocks can all be told apart by their
    leading tokens, with at least `vocab_size` filler words (the prompt synthesiser's rule)."""
    return max(1, math.ceil(math.log(max(n_distinct_blocks, 2)) / math.log(vocab_size)))


def fit_factor(sessions: Sequence[Session], window_tokens: int, headroom: float = 0.9) -> float:
    """The largest factor <= 1 that brings every request's input + output under
    `headroom * window_tokens`."""
    biggest = max(s.max_context_tokens() for s in sessions)
    return min(1.0, headroom * window_tokens / biggest)


def scale_session(
    session: Session, factor: float, min_block: int = 1, scale_outputs: bool = True
) -> tuple[Session, float]:
    """Shrink a session's contexts by `factor`, keeping its prefix structure.

    The block size becomes `max(min_block, round(block * factor))` and the factor actually applied
    is `new_block / block`, so every request keeps its hash ids and covers the same share of its
    last block; input (and, with `scale_outputs`, output) lengths are multiplied by that factor
    and rounded (never below 1). Think times are unchanged. Returns (session, applied factor).
    """
    if factor >= 1.0:
        return session, 1.0
    block = max(min_block, round(session.block_size_tokens * factor))
    applied = block / session.block_size_tokens
    if applied >= 1.0:
        return session, 1.0

    def shrink(t: Turn) -> Turn:
        out = max(1, round(t.output_tokens * applied)) if scale_outputs else t.output_tokens
        return replace(t, input_tokens=max(1, round(t.input_tokens * applied)), output_tokens=out)

    agents = tuple(replace(a, turns=tuple(shrink(t) for t in a.turns)) for a in session.agents)
    return replace(session, agents=agents, block_size_tokens=block), applied
