"""Logprob divergence from top-k lists: per-token KL and total variation, top-token mismatch.

A server returns, at each generated position, its k most likely tokens with log-probabilities.
Both distributions are coarsened onto the same k + 1 buckets: the reference's top-k tokens
and one "rest" bucket holding everything else. The reference's bucket masses are exact (its
listed probabilities; rest = 1 - their sum). The candidate's mass of a reference token it also
lists is exact; a reference token missing from the candidate's list gets an equal share of the
candidate's unlisted mass (1 - the sum of its listed probabilities), shared among the missing
tokens and the rest bucket. KL and TV on a coarsening never exceed the values on the full
vocabulary (data processing), so with exact bucket masses these are lower bounds; the equal
share for missing tokens is an estimate, stated as such.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

Token = int | str
TopK = Mapping[Token, float]  # token -> logprob, the server's top-k at one position
PROB_FLOOR = 1e-10  # a bucket the candidate gives no mass still has this much (KL finite)


def buckets(ref: TopK, cand: TopK) -> tuple[list[float], list[float]]:
    """The reference's and candidate's probabilities on [ref top-k tokens..., rest]."""
    ref_tokens = list(ref)
    p = [math.exp(ref[t]) for t in ref_tokens]
    cand_listed = sum(math.exp(v) for v in cand.values())
    unlisted = max(0.0, 1.0 - cand_listed)
    missing = [t for t in ref_tokens if t not in cand]
    share = unlisted / (len(missing) + 1)
    q = [math.exp(cand[t]) if t in cand else share for t in ref_tokens]
    p.append(max(0.0, 1.0 - sum(p)))
    q.append(max(0.0, 1.0 - sum(q)))
    return p, q


def kl_tv(ref: TopK, cand: TopK) -> tuple[float, float]:
    """(KL(ref || cand) in nats, total variation) on the shared buckets."""
    p, q = buckets(ref, cand)
    kl = sum(pi * math.log(pi / max(qi, PROB_FLOOR)) for pi, qi in zip(p, q, strict=True) if pi > 0)
    tv = 0.5 * sum(abs(pi - qi) for pi, qi in zip(p, q, strict=True))
    return max(kl, 0.0), tv


def top_token(dist: TopK) -> Token | None:
    return max(dist, key=lambda t: dist[t]) if dist else None


@dataclass(frozen=True, slots=True)
class Divergence:
    """Distribution of per-position divergences over all scored positions.

    `top_mismatch_share`: positions where the reference's most likely token is not the
    candidate's. Quantiles of KL (nats) and TV over positions."""

    positions: int
    kl_mean: float
    kl_median: float
    kl_p90: float
    kl_max: float
    tv_mean: float
    tv_p90: float
    top_mismatch_share: float


def summarize(pairs: Sequence[tuple[TopK, TopK]]) -> Divergence | None:
    """Score (reference top-k, candidate top-k) pairs taken at the same position of the same
    prefix. None when there is none."""
    scored = [(kl_tv(r, c), top_token(r) != top_token(c)) for r, c in pairs if r and c]
    if not scored:
        return None
    kl = np.asarray([s[0][0] for s in scored])
    tv = np.asarray([s[0][1] for s in scored])
    return Divergence(
        positions=len(scored),
        kl_mean=float(kl.mean()),
        kl_median=float(np.median(kl)),
        kl_p90=float(np.percentile(kl, 90)),
        kl_max=float(kl.max()),
        tv_mean=float(tv.mean()),
        tv_p90=float(np.percentile(tv, 90)),
        top_mismatch_share=sum(1 for s in scored if s[1]) / len(scored),
    )
