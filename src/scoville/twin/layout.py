"""How a replica is laid out and what it achieves: parallelism (TP, EP, data-parallel attention,
pipeline stages), speculative decoding (draft length and a declared acceptance curve), and the
achievable fractions of datasheet peaks (`Efficiency`). Plain frozen dataclasses, read by the
step cost model (`costmodel.py`) and set from twin URLs and framework profiles.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal

from scoville.twin.catalogue import Hardware, ModelArch
from scoville.twin.shape import Precision

KvDtype = Literal["bf16", "fp8"]

# Cumulative acceptance of draft position k (the probability that drafts 1..k are all
# accepted) for a DeepSeek-style MTP head. The DeepSeek-V3 report gives 85-90 % for the
# second token; later positions decay as vLLM's multi-layer MTP per-position figures do
# (vllm-project/vllm#48892: 76, 62, 51, 42, 36, 31, 27, 24 %). An assumption: declare your
# own with `mtp_al=` (InferenceX pins one acceptance length per model and draft length).
DEFAULT_ACCEPTANCE: tuple[float, ...] = (0.80, 0.62, 0.51, 0.42, 0.36, 0.31, 0.27, 0.24)


@dataclass(frozen=True, slots=True)
class SpecDecode:
    """Speculative decoding / MTP: `draft_tokens` proposed per step, verified in one forward
    pass of 1 + draft rows per sequence. `acceptance_length` (tokens emitted per verify step,
    >= 1) is declared, or follows `DEFAULT_ACCEPTANCE` with its accepted drafts multiplied by
    `acceptance_scale` (the profile book's, fitted: how many of the curve's drafts the
    workload the twin is calibrated on accepts)."""

    draft_tokens: int = 0
    acceptance_length: float | None = None
    draft_layers: int = 1  # an MTP module is one transformer block (plus the shared LM head)
    acceptance_scale: float = 1.0  # multiplies the curve's accepted drafts, not a declared length
    # mean output tokens before a forced continuation repeats itself (0 = never): see
    # `steps_per_token`; read on the default curve only, never with a declared length
    loop_after_tokens: float = 0.0

    def tokens_per_step(self) -> float:
        """Tokens a verify step emits per sequence before any repetition (the curve's L)."""
        if self.draft_tokens <= 0:
            return 1.0
        if self.acceptance_length is not None:
            return min(self.acceptance_length, 1.0 + self.draft_tokens)
        accepted = self.acceptance_scale * sum(DEFAULT_ACCEPTANCE[: self.draft_tokens])
        return min(1.0 + accepted, 1.0 + self.draft_tokens)

    def steps_per_token(self, out_tokens: int) -> float:
        """Verify steps per emitted token, averaged over an output of `out_tokens` tokens.

        A benchmark that forces its output length (ignore_eos) makes the model go on past the
        point where its answer would end, and a forced continuation falls into repetition,
        whose drafts are all accepted. With `loop_after_tokens` N > 0, the share of outputs
        repeating by token n is 1 - exp(-n / N) (their natural ends exponential, mean N), so
        a step emits L(n) = A - (A - L) exp(-n / N) tokens, A = 1 + drafts and L the curve's
        length; the mean of 1 / L(n) over n in [0, T] is, in closed form,
        (1 / (A T)) (T + N ln((A - (A - L) exp(-T / N)) / L)). N = 0 (the default), a
        declared length or T < 1: 1 / L, the same at every position."""
        flat = self.tokens_per_step()
        n = self.loop_after_tokens
        if n <= 0 or self.draft_tokens <= 0 or self.acceptance_length is not None:
            return 1.0 / flat
        t = max(1.0, float(out_tokens))
        top = 1.0 + self.draft_tokens
        return (t + n * math.log((top - (top - flat) * math.exp(-t / n)) / flat)) / (top * t)

    def describe(self) -> str:
        """The acceptance a prediction rests on, in one line ("" without drafts)."""
        d, flat = self.draft_tokens, self.tokens_per_step()
        if d <= 0:
            return ""
        if self.acceptance_length is not None:
            return f"{flat:.2f} tokens per verify step of {d} draft(s), declared (mtp_al)"
        text = (
            f"{d} draft(s) on the default curve: {flat:.2f} tokens per verify step "
            f"(acceptance_scale {self.acceptance_scale:g})"
        )
        if self.loop_after_tokens <= 0:
            return text + "; outputs never repeat (loop_after=0)"
        return text + (
            f"; a forced-length output repeats itself after {self.loop_after_tokens:,.0f} output "
            "tokens on average, every draft then accepted: "
            f"{1 / self.steps_per_token(1024):.2f} tokens per step over a 1,024-token output, "
            f"{1 / self.steps_per_token(8192):.2f} over 8,192 (loop_after=0: text that ends "
            "at EOS; mtp_al= declares a measured length)"
        )


@dataclass(frozen=True, slots=True)
class Efficiency:
    """Achievable fractions of datasheet peaks and fixed costs (see docs/design/twin.md)."""

    hbm_bw: float = 0.80  # aiconfigurator mem_bw_empirical_scaling_factor (weight streaming)
    attention_hbm_bw: float = 0.65  # paged-KV decode attention (gathers 16-token blocks)
    gemm_max: float = 0.70  # large-M GEMM fraction of dense peak (cuBLAS/CUTLASS practice)
    gemm_m_half_tokens: float = 8.0  # rows at which a GEMM reaches half of gemm_max (small-M tiles)
    attention_compute: float = 0.45  # flash-attention prefill fraction of BF16 peak
    link: float = 0.80  # NCCL bus-bandwidth fraction of the per-direction link rate
    # per TP all-reduce; None = the hardware fabric's latency for the group size
    allreduce_latency_s: float | None = None
    collective_latency_scale: float = 1.0  # multiplies every fabric latency (fitted)
    # attention data-parallel ranks' balance: mean / busiest rank's decode tokens per step
    dp_balance: float = 1.0
    # routed experts' popularity under the served traffic, falling as rank^-a (0 = uniform
    # routing): fewer distinct experts per TP-sliced step (`shape.expected_distinct_experts`)
    expert_concentration: float = 0.0
    alltoall_latency_s: float = 15e-6  # dispatch/combine latency per MoE layer in a domain
    layer_overhead_s: float = 20e-6  # per layer per step: kernel fixed latency, graph replay
    moe_layer_overhead_s: float = 0.0  # more per MoE layer per step (routing, permutes)
    # the same where the experts are expert-parallel (TEP, wide EP): the EP path's own kernels
    # (permuting tokens into the local experts' buffers and back); None = moe_layer_overhead_s
    ep_moe_layer_overhead_s: float | None = None
    # more per sparse-attention (indexer) layer per step: the indexer's projections, key
    # quantisation, logits and top-k, small kernels whose fixed latency a small batch pays
    sparse_layer_overhead_s: float = 0.0
    # more per decoding sequence per speculative verify step on the busiest rank: the host-side
    # and small-kernel work that grows with the batch (draft bookkeeping, acceptance, the
    # accepted tokens' KV slots and output), which a step's fixed overhead does not hold
    spec_seq_overhead_s: float = 0.0
    # more per draft (MTP) pass of a speculative step: each pass is a forward of its own (its
    # own graph launch, embedding of the last token, sampling of the draft), beyond its layer's
    # kernels, per-layer cost and collectives
    draft_pass_overhead_s: float = 0.0
    # host time per request scheduled in a step (scheduling, input preparation, output
    # processing) that the step waits for when the engine schedules synchronously, i.e. with
    # async scheduling off (`async_scheduling`); with it on, the next step's host work runs
    # while this step computes, and the fixed step_overhead_s is all a step pays on the host
    sync_seq_overhead_s: float = 0.0
    async_scheduling: bool = True
    step_overhead_s: float = 400e-6  # per step: scheduling, sampling, detokenise (CPU side)
    gpu_memory_utilization: float = 0.90  # vLLM default
    # TensorRT-LLM sizes its pool as a fraction of the memory left after weights and
    # activations (free_gpu_memory_fraction); None = the vLLM rule above
    kv_free_memory_fraction: float | None = None
    activation_reserve_gb: float = 2.0  # activations + CUDA graphs, outside the KV pool
    # routed-expert (grouped GEMM) weight-streaming efficiency of the kernel stack per expert
    # weight format class (bf16, fp8, fp4, int4), multiplying hbm_bw for that operator
    expert_kernel: tuple[tuple[str, float], ...] = ()
    # the routed experts' large-M grouped-GEMM rate as a fraction of the stack's dense GEMM
    # rate (many small per-expert problems, permutes, in-loop dequantisation): prefill, mostly
    expert_gemm: float = 1.0
    # a declared untuned kernel path (kernels=untuned) for the model's quantised weights:
    # multiplies the weight-streaming and GEMM efficiency of every weight operator
    kernel_scale: float = 1.0
    # MLA decode attention over a 16-bit latent cache, which a kernel stack may run on another
    # path than over an FP8 cache (ROCm's before its persistent FP8 kernel): that path's compute
    # rate as a fraction of the BF16 dense peak (1: no path of its own), and its fixed time per
    # attention head on the GPU per layer per decode step
    mla16_rate: float = 1.0
    mla16_head_layer_s: float = 0.0
    # the same over an FP8 latent cache, where a kernel stack's FP8 path has costs of its own
    mla8_rate: float = 1.0
    mla8_head_layer_s: float = 0.0
    # the engine runs prefill (context) attention in FP8 where the KV cache is FP8 or the
    # attention projections are quantised (`Profile.fp8_context_attention`)
    fp8_context_attention: bool = False

    def mla_path(self, cache: str) -> tuple[float, float]:
        """The MLA decode path over a latent cache of dtype `cache` (`mla_cache`; "" for none):
        its compute rate as a fraction of the BF16 peak and its fixed time per attention head on
        the GPU per layer per decode step."""
        if cache == "bf16":
            return self.mla16_rate, self.mla16_head_layer_s
        if cache == "fp8":
            return self.mla8_rate, self.mla8_head_layer_s
        return 1.0, 0.0

    def at_speed(self, speed: float) -> Efficiency:
        """The same kernels run by software `speed` times as fast (`software.software_speed`):
        every achievable fraction of a peak times `speed`, never above the peak (so no step
        beats the roofline), and every fixed kernel and host time divided by it. Collectives
        (the fabric's latency and bandwidth) are the communication library's and do not move."""
        if speed == 1.0:
            return self

        def up(fraction: float) -> float:
            return min(1.0, fraction * speed)

        ep_moe = self.ep_moe_layer_overhead_s
        return replace(
            self,
            hbm_bw=up(self.hbm_bw),
            attention_hbm_bw=up(self.attention_hbm_bw),
            gemm_max=up(self.gemm_max),
            attention_compute=up(self.attention_compute),
            mla16_rate=up(self.mla16_rate),
            mla8_rate=up(self.mla8_rate),
            step_overhead_s=self.step_overhead_s / speed,
            layer_overhead_s=self.layer_overhead_s / speed,
            moe_layer_overhead_s=self.moe_layer_overhead_s / speed,
            ep_moe_layer_overhead_s=None if ep_moe is None else ep_moe / speed,
            sparse_layer_overhead_s=self.sparse_layer_overhead_s / speed,
            spec_seq_overhead_s=self.spec_seq_overhead_s / speed,
            draft_pass_overhead_s=self.draft_pass_overhead_s / speed,
            sync_seq_overhead_s=self.sync_seq_overhead_s / speed,
            mla16_head_layer_s=self.mla16_head_layer_s / speed,
            mla8_head_layer_s=self.mla8_head_layer_s / speed,
        )

    def expert_scale(self, fmt: str) -> float:
        """The routed-expert weight-streaming factor for weights in format `fmt`."""
        return dict(self.expert_kernel).get(format_class(fmt), 1.0)


def format_class(fmt: str) -> str:
    """bf16 / fp8 / fp4 / int4: the kernel family a weight format runs on."""
    if fmt in ("mxfp4", "nvfp4"):
        return "fp4"
    if fmt.startswith("int4"):
        return "int4"
    return "fp8" if fmt == "fp8" else "bf16"


@dataclass(frozen=True, slots=True)
class Parallel:
    """One replica: `tp` ranks per pipeline stage, `pp` stages (tp * pp GPUs). Experts are
    TP-sliced (ep=1) or expert-parallel over the tp ranks (ep=tp). With `dp_attention` the
    tp ranks run attention data-parallel (each rank its own sequences and KV: an MLA latent is
    no longer replicated) and experts expert-parallel over all of them (wide EP)."""

    tp: int = 1
    ep: int = 1
    precision: Precision = "native"
    kv_dtype: KvDtype = "bf16"
    fp4_activations: bool = False  # W4A4 when the hardware has FP4 (else W4A8 / W4A16)
    dp_attention: bool = False
    pp: int = 1
    expert_skew: float = 1.0  # tokens on the busiest EP rank / mean (1 = uniform routing)
    spec: SpecDecode = SpecDecode()

    @property
    def gpus(self) -> int:
        return self.tp * self.pp

    @property
    def dp(self) -> int:
        """Attention data-parallel ranks: the tp ranks under DP attention, else 1."""
        return self.tp if self.dp_attention else 1

    @property
    def expert_ranks(self) -> int:
        """Ranks the routed experts are sharded over as whole experts: the tp ranks under EP or
        DP attention, else 1 (every rank holds a TP slice of every expert)."""
        return self.tp if (self.dp_attention or self.ep > 1) else 1


def mla_cache(model: ModelArch, par: Parallel) -> str:
    """The latent cache's dtype ("bf16" or "fp8") where the replica decodes MLA attention, else
    "": which of a kernel stack's own MLA decode paths (`Efficiency.mla_path`) it runs."""
    return par.kv_dtype if model.attention == "mla" else ""


def compute_dtype(fmt: str, hw: Hardware, fp4_activations: bool) -> str:
    """Which tensor-core rate a weight format runs at on this hardware."""
    t = hw.dense_tflops
    if fmt in ("mxfp4", "nvfp4", "int4_g32", "int4_g128"):
        if t.fp4 is not None and fp4_activations:
            return "fp4"
        if t.fp4 is not None and t.fp8 is not None:
            return "fp8"  # W4A8: native MX/NV FP4 hardware dequantises into FP8 MMA
        return "bf16" if t.bf16 is not None else "fp8"  # W4A16 (Marlin / Triton on Hopper)
    if fmt == "fp8" and t.fp8 is not None:
        return "fp8"
    return "bf16" if t.bf16 is not None else "fp8"


def fp8_context_attention(eff: Efficiency, hw: Hardware, par: Parallel, attention: str) -> bool:
    """Whether a prompt's attention runs at the FP8 peak: the engine runs its context kernels in
    FP8 (`Efficiency.fp8_context_attention`) over an FP8 cache or attention projections in
    FP8 or FP4 (format `attention`), on hardware with FP8 tensor cores."""
    return (
        eff.fp8_context_attention
        and hw.dense_tflops.fp8 is not None
        and (par.kv_dtype == "fp8" or format_class(attention) in ("fp8", "fp4"))
    )


def peak_flops(hw: Hardware, dtype: str) -> float:
    v = {"bf16": hw.dense_tflops.bf16, "fp8": hw.dense_tflops.fp8, "fp4": hw.dense_tflops.fp4}[
        dtype
    ]
    if v is None:
        v = hw.dense_tflops.bf16 or hw.dense_tflops.fp8
    assert v is not None
    return float(v) * 1e12
