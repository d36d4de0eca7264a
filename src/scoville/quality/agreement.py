"""Token agreement under greedy decoding: how far two targets generate the same tokens.

Per item, the first divergence position is the first index where the candidate's token differs
from the reference's (the shorter length when one is a prefix of the other; None when the
sequences are identical). Pure functions over token sequences.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scoville.quality.stats import Interval, Verdict, bootstrap_mean

Token = int | str
AGREEMENT_FLOOR = 0.98  # equivalent deployments match on more than 98 % of tokens (Token-DiFR)
MIN_ITEMS = 20  # fewer items than this and the bootstrap interval is not trusted for a verdict


def first_divergence(ref: Sequence[Token], cand: Sequence[Token]) -> int | None:
    """Index of the first differing token; None when both sequences are identical."""
    for i, (r, c) in enumerate(zip(ref, cand, strict=False)):
        if r != c:
            return i
    return None if len(ref) == len(cand) else min(len(ref), len(cand))


@dataclass(frozen=True, slots=True)
class TokenAgreement:
    """Agreement over items. `prefix_share`: reference tokens generated identically before the
    first divergence / all reference tokens (ratio of sums, bootstrap over items).
    `whole_match`: share of items whose sequences are identical. `divergence_positions`:
    first-divergence index of each diverging item. `still_matching`: (position, share of
    items whose sequences still agree at that position) at powers of two."""

    items: int
    prefix_share: Interval | None
    whole_match: Interval | None
    divergence_positions: tuple[int, ...]
    divergence_median: float | None
    still_matching: tuple[tuple[int, float], ...]
    verdict: Verdict


def _ratio_interval(
    num: Sequence[float], den: Sequence[float], level: float, seed: int, n_resamples: int = 2000
) -> Interval | None:
    a, b = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    if a.size == 0 or b.sum() <= 0:
        return None
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, a.size, size=(n_resamples, a.size))
    bs = b[idx].sum(axis=1)
    ratios = a[idx].sum(axis=1) / np.where(bs > 0, bs, np.nan)
    tail = (1.0 - level) / 2.0 * 100.0
    lo, hi = np.nanpercentile(ratios, [tail, 100.0 - tail])
    return Interval(float(a.sum() / b.sum()), float(lo), float(hi), level)


def _still_matching(matched: Sequence[int], lengths: Sequence[int]) -> list[tuple[int, float]]:
    """Share of items (among those at least that long) still identical at each position."""
    out: list[tuple[int, float]] = []
    pos, top = 1, max(lengths, default=0)
    while pos <= top:
        alive = [m for m, n in zip(matched, lengths, strict=True) if n >= pos]
        if alive:
            out.append((pos, sum(1 for m in alive if m >= pos) / len(alive)))
        pos *= 2
    return out


def token_agreement(
    pairs: Sequence[tuple[Sequence[Token], Sequence[Token]]],
    level: float = 0.95,
    seed: int = 0,
    floor: float = AGREEMENT_FLOOR,
) -> TokenAgreement:
    """Summarise (reference tokens, candidate tokens) pairs, one per item that both answered.

    Verdict: equivalent when the interval of `prefix_share` lies at or above `floor`, not
    equivalent when it lies below, else (or with fewer than `MIN_ITEMS`) not enough evidence."""
    divs = [first_divergence(r, c) for r, c in pairs]
    lengths = [len(r) for r, _ in pairs]
    matched = [n if d is None else d for d, n in zip(divs, lengths, strict=True)]
    prefix = _ratio_interval(matched, lengths, level, seed)
    whole = bootstrap_mean([1.0 if d is None else 0.0 for d in divs], level, seed=seed)
    positions = tuple(d for d in divs if d is not None)
    verdict: Verdict = "not enough evidence"
    if prefix is None or len(pairs) < MIN_ITEMS:
        pass
    elif prefix.lo >= floor:
        verdict = "equivalent"
    elif prefix.hi < floor:
        verdict = "not equivalent"
    return TokenAgreement(
        items=len(pairs),
        prefix_share=prefix,
        whole_match=whole,
        divergence_positions=positions,
        divergence_median=float(np.median(positions)) if positions else None,
        still_matching=tuple(_still_matching(matched, lengths)),
        verdict=verdict,
    )
