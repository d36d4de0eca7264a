"""What one engine step computes (`StepBatch`) and what it costs (`StepCost`): the values the
step cost model (`costmodel.py`) and the event engine pass each other.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

# one operator group's (compute s, memory s, FLOPs, bytes): its roofline's two sides
Timed = tuple[float, float, float, float]


class StepBatch(NamedTuple):
    """What one step computes (a named tuple: the engine builds one a step, and a tuple is
    built in half the time of a frozen dataclass). Context sums are in tokens; `*_swa` cap
    each context at the sliding window. `prefill_pairs_*` = sum over chunks of
    c * (p + (c + 1) / 2), the causal query-key pairs of a chunk of c tokens after p
    already-computed tokens."""

    n_decode: int = 0
    decode_ctx_tokens: int = 0
    decode_ctx_swa_tokens: int = 0
    prefill_tokens: int = 0
    prefill_pairs: float = 0.0
    prefill_pairs_swa: float = 0.0
    prefill_ctx_read_tokens: int = 0  # sum of p over chunks (KV re-read of earlier chunks)
    n_sampled: int = 0  # sequences that sample a token this step (LM head rows)
    n_prefill_chunks: int = 0  # prompts being prefilled (each lands on one attention-DP rank)
    # speculative decoding: the decoding sequences' verify steps per emitted token, summed
    # (each its `SpecDecode.steps_per_token` for its output length); None = n_decode / L
    verify_share: float | None = None


class StepCost(NamedTuple):
    """Time of one step (seconds), split so that compute + memory + comm + overhead == total."""

    total_s: float
    compute_s: float
    memory_s: float
    comm_s: float
    overhead_s: float
    flops: float  # per GPU
    hbm_bytes: float  # per GPU
    floor_s: float  # max(flops / best peak, bytes / peak bandwidth): nothing runs faster

    def then(self, other: StepCost) -> StepCost:
        """Two batches run one after the other (a prefill batch, then the decode batch)."""
        return StepCost(*(a + b for a, b in zip(self, other, strict=True)))


def add_up(groups: Iterable[Timed], start: Timed = (0.0, 0.0, 0.0, 0.0)) -> Timed:
    """(compute s, memory s, FLOPs, bytes) of a step: each operator group costs the larger
    side of its roofline, counted as compute or memory by which one binds; added in order
    to `start` (the sums of the groups before them)."""
    compute_s, memory_s, flops, nbytes = start
    for t_c, t_m, f, n in groups:
        if t_c > t_m:
            compute_s += t_c
        else:
            memory_s += t_m
        flops += f
        nbytes += n
    return compute_s, memory_s, flops, nbytes
