"""The twin's prefix cache: prompt blocks by hash, least-recently-used eviction.

A request names its prompt blocks (`GenerateRequest.prefix_hashes`, `block_size_tokens`
tokens each); the longest run of leading blocks already cached is not recomputed. Cached
blocks live in the free part of the KV pool, so the engine shrinks the cache as it admits.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Protocol


class PrefixStore(Protocol):
    """What a replica needs of its prefix cache (`PrefixCache`, or the run-length
    `scoville.twin.prefix_runs.RunPrefixCache` with the same behaviour)."""

    cached_tokens: int
    query_tokens: int
    hit_tokens: int

    def match(self, hashes: Sequence[int], block_tokens: int, prompt_tokens: int) -> int: ...

    def insert(self, hashes: Sequence[int], block_tokens: int) -> None: ...

    def shrink_to(self, max_tokens: int) -> None: ...


class PrefixCache:
    """Block hash -> tokens in that block, in LRU order (oldest first)."""

    __slots__ = ("_blocks", "cached_tokens", "hit_tokens", "query_tokens")

    def __init__(self) -> None:
        self._blocks: OrderedDict[int, int] = OrderedDict()
        self.cached_tokens = 0
        self.query_tokens = 0  # prompt tokens looked up (vLLM prefix_cache_queries)
        self.hit_tokens = 0  # of which found (vLLM prefix_cache_hits)

    def match(self, hashes: Sequence[int], block_tokens: int, prompt_tokens: int) -> int:
        """Tokens of the prompt already cached (leading blocks only); touches the hits.

        At least one prompt token is always recomputed, as real engines do, so the result is
        at most `prompt_tokens - 1`.
        """
        self.query_tokens += prompt_tokens
        hit = 0
        blocks = self._blocks
        for h in hashes:
            if h not in blocks:
                break
            blocks.move_to_end(h)
            hit += 1
        tokens = min(hit * block_tokens, max(prompt_tokens - 1, 0))
        self.hit_tokens += tokens
        return tokens

    def insert(self, hashes: Sequence[int], block_tokens: int) -> None:
        """Record a computed prompt's blocks as most recently used."""
        blocks = self._blocks
        for h in hashes:
            if h in blocks:
                blocks.move_to_end(h)
            else:
                blocks[h] = block_tokens
                self.cached_tokens += block_tokens

    def shrink_to(self, max_tokens: int) -> None:
        """Evict least-recently-used blocks until at most `max_tokens` remain cached."""
        blocks = self._blocks
        while self.cached_tokens > max_tokens and blocks:
            _, n = blocks.popitem(last=False)
            self.cached_tokens -= n

    def __len__(self) -> int:
        return len(self._blocks)
