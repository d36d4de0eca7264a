"""A prompt's block keys stored as runs of consecutive hash ids, and an unlimited prefix cache
over runs: the agentic workload's compact form for a simulator that cannot afford a Python
step per block (a 142k-token prompt is ~2,200 blocks but ~40 runs).

`BlockRuns` is a `Sequence[int]` of block keys (so any block-level cache accepts it); a cache
that knows runs reads `chain` and `runs` instead. Equal (chain, hash id) = equal block.
"""

from __future__ import annotations

import bisect
from collections.abc import Hashable, Iterator, Sequence
from typing import overload

import numpy as np

Run = tuple[int, int]  # [lo, hi): hash ids lo, lo + 1, ..., hi - 1, in that order


def runs_of(hash_ids: Sequence[int]) -> tuple[Run, ...]:
    """Maximal runs of consecutive ids, in order: (3, 4, 5, 9, 10) -> ((3, 6), (9, 11))."""
    if not hash_ids:
        return ()
    ids = tuple(hash_ids)
    h0, n = ids[0], len(ids) - 1
    if ids[:n] == tuple(range(h0, h0 + n)):  # the usual shape: one run, then a tail
        last = ids[n]
        return ((h0, last + 1),) if last == h0 + n else ((h0, h0 + n), (last, last + 1))
    try:
        a = np.asarray(hash_ids, dtype=np.int64)
    except OverflowError:  # ids beyond 63 bits: one run per id
        return tuple((h, h + 1) for h in hash_ids)
    cut = np.flatnonzero(np.diff(a) != 1) + 1
    starts = np.concatenate(([0], cut))
    ends = np.concatenate((cut, [len(a)]))
    return tuple(zip(a[starts].tolist(), (a[ends - 1] + 1).tolist(), strict=True))


class BlockRuns(Sequence[int]):
    """The block keys of one prompt: ids of `runs` in order, all in namespace `chain` (the
    session namespace and the play's cache-bust marker). As a `Sequence[int]` it yields one
    key per block, `hash((chain, id))`, equal exactly when (chain, id) is."""

    __slots__ = ("_ends", "chain", "runs")

    def __init__(self, chain: Hashable, runs: tuple[Run, ...]) -> None:
        self.chain = chain
        self.runs = runs
        ends, n = [], 0
        for lo, hi in runs:
            n += hi - lo
            ends.append(n)
        self._ends = ends

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    @overload
    def __getitem__(self, i: int) -> int: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[int]: ...

    def __getitem__(self, i: int | slice) -> int | Sequence[int]:
        if isinstance(i, slice):
            return list(self)[i]
        n = len(self)
        if not -n <= i < n:
            raise IndexError(i)
        i %= n
        k = bisect.bisect_right(self._ends, i)
        before = self._ends[k - 1] if k else 0
        return hash((self.chain, self.runs[k][0] + i - before))

    def __iter__(self) -> Iterator[int]:
        chain = self.chain
        for lo, hi in self.runs:
            for h in range(lo, hi):
                yield hash((chain, h))


def as_block_runs(keys: Sequence[int]) -> BlockRuns:
    """`keys` as runs: a `BlockRuns` as it is, any other key sequence in a chain of its own
    (key k = id k of chain None)."""
    if isinstance(keys, BlockRuns):
        return keys
    return BlockRuns(None, runs_of(keys))


class RunSet:
    """An unlimited prefix cache over runs, fed in send order (the run-length twin of
    `PrefixTracker`): per chain, sorted disjoint [lo, hi) intervals, adjacent ones merged."""

    def __init__(self) -> None:
        self._chains: dict[Hashable, tuple[list[int], list[int]]] = {}

    def leading_blocks(self, keys: BlockRuns) -> int:
        """Blocks at the start of `keys` already seen (prefix semantics)."""
        iv = self._chains.get(keys.chain)
        if iv is None:
            return 0
        los, his = iv
        hit = 0
        for lo, hi in keys.runs:
            j = bisect.bisect_right(los, lo) - 1
            covered = min(his[j], hi) - lo if j >= 0 and his[j] > lo else 0
            hit += covered
            if covered < hi - lo:
                break
        return hit

    def add(self, keys: BlockRuns) -> None:
        los, his = self._chains.setdefault(keys.chain, ([], []))
        for lo, hi in keys.runs:
            i = bisect.bisect_left(his, lo)  # first interval ending at or after lo
            j = bisect.bisect_right(los, hi)  # first interval starting after hi
            if i < j:
                lo, hi = min(lo, los[i]), max(hi, his[j - 1])
            los[i:j] = [lo]
            his[i:j] = [hi]

    def observe(self, keys: BlockRuns, input_tokens: int, block_tokens: int) -> int:
        """Record one request; return the tokens an unlimited cache would have served."""
        hit = self.leading_blocks(keys)
        self.add(keys)
        return min(hit * block_tokens, input_tokens)
