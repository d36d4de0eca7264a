"""The twin's prefix cache stored run-length: the same block-level LRU as `PrefixCache`, with
each run of blocks that were touched together kept as one node, so a match or an insert costs
a step per run of the prompt (`BlockRuns`) instead of one per block.

Exactly the block cache's behaviour: the blocks a call touches become the newest, in prompt
order; eviction takes the oldest block first (the low end of the oldest node).
"""

from __future__ import annotations

import bisect
from collections.abc import Hashable, Sequence

from scoville.workload.agentic.runs import as_block_runs


class _Node:
    """Blocks [lo, hi) of `chain`, `tokens` each, consecutive in LRU order (lo oldest)."""

    __slots__ = ("chain", "hi", "lo", "newer", "older", "tokens")

    def __init__(self, chain: Hashable, lo: int, hi: int, tokens: int) -> None:
        self.chain, self.lo, self.hi, self.tokens = chain, lo, hi, tokens
        self.older: _Node | None = None
        self.newer: _Node | None = None


class RunPrefixCache:
    """`PrefixCache`'s contract (match, insert, shrink_to, the token counters) over runs.

    Nodes sit on a doubly linked list, oldest first, and in a per-chain index sorted by `lo`
    (disjoint ranges), so both the LRU order and "is block (chain, id) cached" are cheap."""

    __slots__ = (
        "_index",
        "_n_blocks",
        "_newest",
        "_oldest",
        "cached_tokens",
        "hit_tokens",
        "query_tokens",
    )

    def __init__(self) -> None:
        self._index: dict[Hashable, tuple[list[int], list[_Node]]] = {}
        self._oldest: _Node | None = None
        self._newest: _Node | None = None
        self._n_blocks = 0
        self.cached_tokens = 0
        self.query_tokens = 0
        self.hit_tokens = 0

    def __len__(self) -> int:
        return self._n_blocks

    def match(self, hashes: Sequence[int], block_tokens: int, prompt_tokens: int) -> int:
        """Tokens of the prompt already cached (leading blocks only, at most prompt - 1);
        the hit blocks become the newest."""
        keys = as_block_runs(hashes)
        self.query_tokens += prompt_tokens
        hit = 0
        touched: list[tuple[int, int]] = []
        for lo, hi in keys.runs:
            n = self._covered(keys.chain, lo, hi)
            if n:
                touched.append((lo, lo + n))
            hit += n
            if n < hi - lo:
                break
        for lo, hi in touched:
            self._touch(keys.chain, lo, hi, block_tokens)
        tokens = min(hit * block_tokens, max(prompt_tokens - 1, 0))
        self.hit_tokens += tokens
        return tokens

    def insert(self, hashes: Sequence[int], block_tokens: int) -> None:
        """Record a computed prompt's blocks as most recently used."""
        keys = as_block_runs(hashes)
        for lo, hi in keys.runs:
            self._touch(keys.chain, lo, hi, block_tokens)

    def shrink_to(self, max_tokens: int) -> None:
        """Evict least-recently-used blocks until at most `max_tokens` remain cached."""
        while self.cached_tokens > max_tokens and self._oldest is not None:
            node = self._oldest
            over = -(-(self.cached_tokens - max_tokens) // node.tokens)  # blocks to drop
            los, nodes = self._index[node.chain]
            j = bisect.bisect_left(los, node.lo)
            if over >= node.hi - node.lo:
                self._drop(node, node.hi - node.lo)
                del los[j], nodes[j]
                if not los:
                    del self._index[node.chain]
            else:
                self._drop(node, over, unlink=False)
                node.lo += over
                los[j] = node.lo

    # -- internals -----------------------------------------------------------------------------

    def _covered(self, chain: Hashable, lo: int, hi: int) -> int:
        """Blocks lo, lo + 1, ... of `chain` cached without a gap (at most hi - lo)."""
        iv = self._index.get(chain)
        if iv is None:
            return 0
        los, nodes = iv
        j = bisect.bisect_right(los, lo) - 1
        if j < 0 or nodes[j].hi <= lo:
            return 0
        pos = nodes[j].hi
        while pos < hi and j + 1 < len(nodes) and nodes[j + 1].lo == pos:
            j += 1
            pos = nodes[j].hi
        return min(pos, hi) - lo

    def _touch(self, chain: Hashable, lo: int, hi: int, tokens: int) -> None:
        """Blocks [lo, hi) of `chain` become the newest (cached or not before)."""
        los, nodes = self._index.setdefault(chain, ([], []))
        j0 = bisect.bisect_right(los, lo) - 1
        if j0 < 0 or nodes[j0].hi <= lo:
            j0 += 1
        j1 = j0
        while j1 < len(nodes) and nodes[j1].lo < hi:
            j1 += 1
        new = _Node(chain, lo, hi, tokens)
        keep: list[_Node] = [new]
        for node in nodes[j0:j1]:
            left, right = node.lo < lo, node.hi > hi
            self._drop(node, min(node.hi, hi) - max(node.lo, lo), unlink=not (left or right))
            if left and right:  # the touched range splits the node: its upper part stays put
                upper = _Node(chain, hi, node.hi, node.tokens)
                self._link_after(node, upper)
                node.hi = lo
                keep = [node, new, upper]
            elif left:
                node.hi = lo
                keep.insert(0, node)
            elif right:
                node.lo = hi
                keep.append(node)
        los[j0:j1] = [n.lo for n in keep]
        nodes[j0:j1] = keep
        self._link_after(self._newest, new)
        self._n_blocks += hi - lo
        self.cached_tokens += (hi - lo) * tokens

    def _drop(self, node: _Node, blocks: int, unlink: bool = True) -> None:
        """Uncount `blocks` of `node`; take the node off the LRU list unless `unlink` is False
        (the caller keeps part of it)."""
        self._n_blocks -= blocks
        self.cached_tokens -= blocks * node.tokens
        if not unlink:
            return
        older, newer = node.older, node.newer
        if older is None:
            self._oldest = newer
        else:
            older.newer = newer
        if newer is None:
            self._newest = older
        else:
            newer.older = older
        node.older = node.newer = None

    def _link_after(self, at: _Node | None, node: _Node) -> None:
        """Put `node` just after `at` in LRU order (`at` None: the list is empty)."""
        if at is None:
            self._oldest = self._newest = node
            return
        node.older, node.newer = at, at.newer
        if at.newer is None:
            self._newest = node
        else:
            at.newer.older = node
        at.newer = node
