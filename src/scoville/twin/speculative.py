"""Speculative decoding's (MTP's) cost per emitted token: a verify step of `StepModel.cost`
scaled by the verify steps per emitted token, with its draft passes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scoville.twin.step import StepCost

if TYPE_CHECKING:
    from scoville.twin.costmodel import StepModel


def per_emitted_token(
    sm: StepModel, step: StepCost, decode_share: float, n_decode: int, per_token: float
) -> StepCost:
    """Scale a verify step to one engine step per emitted token: the decode share of the
    step (by query rows), the draft passes and the per-sequence verify cost of the busiest
    rank's decoding sequences are multiplied by the verify steps per emitted token
    (1 / L, averaged over the batch's sequences: `StepBatch.verify_share`). A draft pass is a
    forward of its own through `draft_layers` decoder layers, one row per sequence: each
    layer's share of the step's work, its per-layer cost and its collectives (those of one
    layer at the sequences' own rows), then the LM head and the pass's fixed cost."""
    spec, eff = sm.spec, sm.eff
    compute_s, memory_s, comm_s, overhead_s = (
        step.compute_s, step.memory_s, step.comm_s, step.overhead_s
    )  # fmt: skip
    flops, nbytes, floor_s = step.flops, step.hbm_bytes, step.floor_s
    layers = sm.model.num_layers
    per_layer_s = (memory_s + compute_s) / layers
    # a draft (MTP) layer is one more decoder layer: an indexer too where the model has one
    sparse_s = eff.sparse_layer_overhead_s if sm.model.n_indexer_layers else 0.0
    passes = spec.draft_tokens
    busiest = sm.busiest_rank_decode(n_decode)  # decoding sequences on the busiest rank
    draft_work_s = passes * (
        spec.draft_layers * per_layer_s + sm.lm_head_bytes / (sm.bw * eff.hbm_bw)
    )
    draft_comm_s = passes * spec.draft_layers * sm.collectives.step_s(n_decode, busiest) / layers
    draft_fixed_s = passes * (
        spec.draft_layers * (eff.layer_overhead_s + sparse_s) + eff.draft_pass_overhead_s
    )
    verify_s = eff.spec_seq_overhead_s * busiest
    f = decode_share * per_token + (1.0 - decode_share)
    c, m = compute_s * f, memory_s * f + draft_work_s * per_token
    co = comm_s * f + draft_comm_s * per_token
    o = overhead_s * f + (verify_s + draft_fixed_s) * per_token
    return StepCost(c + m + co + o, c, m, co, o, flops * f, nbytes * f, floor_s * f)
