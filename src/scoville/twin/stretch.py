"""A stretch of plain decode steps costed as arrays: the costs `StepModel.cost` gives the same
steps one at a time, to the last bit.

Within a stretch (`Replica._stretch`) the batch does not change: the same sequences decode,
each context grows by one token a step, and no event falls due. Only the attention groups
depend on the contexts, so a step's cost is `StepModel.cost` with the context sum as an array,
one element per step. The arithmetic is the same IEEE double arithmetic in the same order:
numpy adds, multiplies and divides elementwise as Python floats do (no fused operations), a
branch on a value becomes `np.where` over the same two results, and sums along the stretch
use `np.add.accumulate`, which adds in order (`accumulate`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numpy.typing import NDArray

from scoville.twin.step import StepBatch, StepCost

if TYPE_CHECKING:
    from scoville.twin.costmodel import StepModel

Ints = NDArray[np.int64]
Floats = NDArray[np.float64]


def decode_costs(sm: StepModel, n_dec: int, ctx: Ints, swa: int, verify: float | None) -> StepCost:
    """`sm.cost` of decode-only steps of `n_dec` sequences whose context sums are `ctx` (one
    per step) and whose windowed sum is `swa`: a `StepCost` whose fields are arrays (or
    floats where a field does not depend on the contexts)."""
    b = StepBatch(n_dec, cast(int, ctx), swa, 0, 0.0, 0.0, 0, n_dec, 0, verify)
    rows = 1 + sm.spec.draft_tokens
    tokens = n_dec * rows
    weights, tail, comm_s, overhead_s = sm.sized(b, tokens, rows)
    groups = [_timed(sm, op) for op in sm.attention(b, tokens, rows)]
    compute_s, memory_s, flops, nbytes = _add_up([*groups, *tail], weights)
    floor_s = np.maximum(flops / sm.best_peak, nbytes / sm.bw)
    total = compute_s + memory_s + comm_s + overhead_s
    step = StepCost(total, compute_s, memory_s, comm_s, overhead_s, flops, nbytes, floor_s)
    return sm.per_token(b, step, tokens, rows)


def _timed(sm: StepModel, op: tuple[Any, Any, float, float, float]) -> tuple[Any, ...]:
    """`StepModel._timed` of one group whose FLOPs and bytes are arrays."""
    flops, nbytes, peak, m_rows, bw_eff = op
    e = sm.eff
    eff_c = e.gemm_max * m_rows / (m_rows + e.gemm_m_half_tokens) if m_rows > 0 else 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        t_c = np.where(np.asarray(flops) > 0, flops / (peak * eff_c), 0.0)
    return t_c, nbytes / (sm.bw * bw_eff), flops, nbytes


def _add_up(groups: list[tuple[Any, ...]], start: tuple[Any, ...]) -> tuple[Any, ...]:
    """`step.add_up` over arrays: a group adds its compute side or its memory side, by which
    binds (adding 0.0 to the other side leaves it as it was)."""
    compute_s, memory_s, flops, nbytes = start
    for t_c, t_m, f, n in groups:
        binds = t_c > t_m
        compute_s = compute_s + np.where(binds, t_c, 0.0)
        memory_s = memory_s + np.where(binds, 0.0, t_m)
        flops = flops + f
        nbytes = nbytes + n
    return compute_s, memory_s, flops, nbytes


def accumulate(start: float, values: Any, n: int) -> float:
    """`start` plus the first `n` of `values` (or `n` times `values`, a float), added one at
    a time in order, as `n` steps each add theirs."""
    terms = np.empty(n + 1)
    terms[0] = start
    terms[1:] = values[:n] if isinstance(values, np.ndarray) else values
    return float(np.add.accumulate(terms)[-1])
