"""`twin explain`: what a claimed single-user speed implies about bandwidth and FLOP/s per TP
(`explain`), and a verdict on it: is it plausible on the hardware, and if not, what would it
need? A verdict reads the `explain` rows (implied bandwidth per TP, and the twin's own batch-1
step split into weight/KV streaming, collective latency and fixed overheads).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scoville.twin.catalogue import Hardware, ModelArch
from scoville.twin.costmodel import Efficiency, Parallel, StepBatch, StepModel

# above this fraction of datasheet HBM bandwidth no decode kernel has been shown to sustain
# batch-1 weight streaming (the twin's own hbm_bw default is 0.80)
ACHIEVABLE_HBM_FRACTION = 0.85


@dataclass(frozen=True, slots=True)
class Implied:
    """What one GPU of a `tp`-GPU replica must sustain to deliver the claimed speed."""

    tp: int
    tpot_s: float
    hbm_tb_s: float  # bytes streamed per token / TPOT
    tflops: float  # FLOPs per token / TPOT
    hbm_fraction: float | None  # of the hardware's peak bandwidth, when hardware is given
    twin_tpot_s: float | None  # the twin's own batch-1 decode step on that hardware
    # the twin's step split: streaming/compute time, collective latency+bytes, fixed overheads
    twin_work_s: float = 0.0
    twin_comm_s: float = 0.0
    twin_step_overhead_s: float = 0.0
    twin_layer_overhead_s: float = 0.0


def explain(
    model: ModelArch,
    tok_s_per_user: float,
    context_tokens: int,
    hardware: Hardware,
    tps: Sequence[int] = (1, 2, 4, 8),
    efficiency: Efficiency | None = None,
) -> list[Implied]:
    """Batch-1 decode at `context_tokens` of context: each token streams the dense weights,
    the top-k experts of every MoE layer and the whole KV cache once."""
    tpot_s = 1.0 / tok_s_per_user
    eff = efficiency or Efficiency()
    out = []
    domain = hardware.fabric.scaleup_gpus
    for tp in (t for t in tps if t <= domain):
        sm = StepModel(hardware, model, Parallel(tp=tp), eff)
        w = sm.window_tokens
        b = StepBatch(
            n_decode=1,
            decode_ctx_tokens=context_tokens,
            decode_ctx_swa_tokens=min(context_tokens, w) if w else 0,
            n_sampled=1,
        )
        cost = sm.cost(b)
        peak = float(hardware.hbm_tb_s or 0.0)
        bw = cost.hbm_bytes / tpot_s / 1e12
        out.append(
            Implied(
                tp,
                tpot_s,
                bw,
                cost.flops / tpot_s / 1e12,
                bw / peak if peak else None,
                cost.total_s,
                cost.compute_s + cost.memory_s,
                cost.comm_s,
                eff.step_overhead_s,
                cost.overhead_s - eff.step_overhead_s,
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class Verdict:
    plausible: bool
    line: str  # "plausible: ..." or "needs ...: ..."
    deciding: str  # which of the twin's overheads decide single-user speed, and by how much


def _share(r: Implied) -> str:
    total = r.twin_tpot_s or 0.0
    parts = {
        "weight/KV streaming": r.twin_work_s,
        "per-step overhead": r.twin_step_overhead_s,
        "per-layer kernel overhead": r.twin_layer_overhead_s,
        "collective latency": r.twin_comm_s,
    }
    ranked = sorted(parts.items(), key=lambda kv: -kv[1])
    return ", ".join(f"{k} {v * 1e3:.3f} ms ({v / total:.0%})" for k, v in ranked if total > 0)


def judge(rows: Sequence[Implied]) -> Verdict:
    """Plausible when some TP within the scale-up domain needs at most ACHIEVABLE_HBM_FRACTION
    of peak bandwidth and the twin's own step at that TP is no slower than the claim. Else
    the verdict names what is missing: bandwidth (more GPUs or fewer bytes per token), or
    lower fixed overheads / speculative decoding of a stated acceptance length."""
    if not rows:
        return Verdict(False, "needs a scale-up domain: no TP fits the hardware", "")
    claim_s = rows[0].tpot_s
    best = min(rows, key=lambda r: r.twin_tpot_s or float("inf"))
    deciding = f"the twin's fastest batch-1 step (TP{best.tp}): {_share(best)}"
    feasible = [r for r in rows if r.hbm_fraction is not None]
    fits = [r for r in feasible if (r.hbm_fraction or 0.0) <= ACHIEVABLE_HBM_FRACTION]
    if not fits:
        low = min(feasible, key=lambda r: r.hbm_fraction or 0.0, default=None)
        need = f"{low.hbm_fraction:.0%} of peak HBM bandwidth at TP{low.tp}" if low else "?"
        return Verdict(
            False,
            f"needs more memory bandwidth per token than the hardware has ({need}): a wider "
            "replica, fewer bytes per token (lower precision) or speculative decoding",
            deciding,
        )
    twin_s = best.twin_tpot_s or 0.0
    if twin_s <= claim_s:
        return Verdict(
            True,
            f"plausible: TP{best.tp} streams the bytes at {best.hbm_fraction or 0:.0%} of peak "
            f"and the twin's own step ({twin_s * 1e3:.3f} ms) is within the claimed "
            f"{claim_s * 1e3:.3f} ms",
            deciding,
        )
    fixed_s = best.twin_step_overhead_s + best.twin_layer_overhead_s + best.twin_comm_s
    budget_s = claim_s - best.twin_work_s
    al = twin_s / claim_s
    if budget_s > 0:
        fix = (
            f"fixed per-token costs (step + layer overhead + collective latency) of at most "
            f"{budget_s * 1e3:.3f} ms against the twin's {fixed_s * 1e3:.3f} ms"
        )
    else:
        fix = "a faster memory system (the streaming alone exceeds the claim)"
    return Verdict(
        False,
        f"needs {fix}, or speculative decoding with an acceptance length of at least {al:.2f} "
        f"(the twin's batch-1 step is {twin_s * 1e3:.3f} ms against the claimed "
        f"{claim_s * 1e3:.3f} ms; bandwidth alone would allow it at TP{fits[0].tp}, "
        f"{fits[0].hbm_fraction or 0:.0%} of peak)",
        deciding,
    )
