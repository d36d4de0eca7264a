"""The cost of one engine step: pure functions from (hardware, model, parallelism, batch) to time.

The event engine calls `StepModel.cost` once per step. Each step is a few operator groups
(dense linears, routed experts, attention, LM head); each takes the roofline maximum of its
FLOPs at an achievable fraction of peak and its HBM bytes at an achievable fraction of
bandwidth, and is attributed to compute or memory by which one binds. Tensor-parallel
all-reduces / expert-parallel all-to-alls and fixed launch overhead are added on top.
Efficiency defaults and their reasons are in `Efficiency` and docs/design/twin.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from scoville.errors import TargetError
from scoville.twin.catalogue import BITS_PER_WEIGHT, Hardware, ModelArch
from scoville.twin.shape import (
    ModelShape,
    Precision,
    activation_bytes_per_token,
    effective_formats,
    expected_distinct_experts,
    model_shape,
)

KvDtype = Literal["bf16", "fp8"]
KV_BYTES: dict[str, float] = {"bf16": 2.0, "fp8": 1.0}


@dataclass(frozen=True, slots=True)
class Efficiency:
    """Achievable fractions of datasheet peaks and fixed costs (see docs/design/twin.md)."""

    hbm_bw: float = 0.80  # aiconfigurator mem_bw_empirical_scaling_factor (weight streaming)
    attention_hbm_bw: float = 0.65  # paged-KV decode attention (gathers 16-token blocks)
    gemm_max: float = 0.70  # large-M GEMM fraction of dense peak (cuBLAS/CUTLASS practice)
    gemm_m_half_tokens: float = 8.0  # rows at which a GEMM reaches half of gemm_max (small-M tiles)
    attention_compute: float = 0.45  # flash-attention prefill fraction of BF16 peak
    link: float = 0.80  # NCCL bus-bandwidth fraction of the per-direction link rate
    allreduce_latency_s: float = 30e-6  # per TP all-reduce, FITTED (calibration.yaml: H100 TP8)
    alltoall_latency_s: float = 15e-6  # dispatch/combine latency per MoE layer
    layer_overhead_s: float = 20e-6  # per layer per step: kernel fixed latency, graph replay
    step_overhead_s: float = 400e-6  # per step: scheduling, sampling, detokenise (CPU side)
    gpu_memory_utilization: float = 0.90  # vLLM default
    activation_reserve_gb: float = 2.0  # activations + CUDA graphs, outside the KV pool


@dataclass(frozen=True, slots=True)
class Parallel:
    """How one replica is laid out: `tp` GPUs, experts TP-sliced (ep=1) or EP over them."""

    tp: int = 1
    ep: int = 1
    precision: Precision = "native"
    kv_dtype: KvDtype = "bf16"
    fp4_activations: bool = False  # W4A4 when the hardware has FP4 (else W4A8 / W4A16)


@dataclass(frozen=True, slots=True)
class StepBatch:
    """What one step computes. Context sums are in tokens; `*_swa` cap each context at the
    sliding window. `prefill_pairs_*` = sum over chunks of c * (p + (c + 1) / 2), the causal
    query-key pairs of a chunk of c tokens after p already-computed tokens."""

    n_decode: int = 0
    decode_ctx_tokens: int = 0
    decode_ctx_swa_tokens: int = 0
    prefill_tokens: int = 0
    prefill_pairs: float = 0.0
    prefill_pairs_swa: float = 0.0
    prefill_ctx_read_tokens: int = 0  # sum of p over chunks (KV re-read of earlier chunks)
    n_sampled: int = 0  # sequences that sample a token this step (LM head rows)


@dataclass(frozen=True, slots=True)
class StepCost:
    """Time of one step (seconds), split so that compute + memory + comm + overhead == total."""

    total_s: float
    compute_s: float
    memory_s: float
    comm_s: float
    overhead_s: float
    flops: float  # per GPU
    hbm_bytes: float  # per GPU
    floor_s: float  # max(flops / best peak, bytes / peak bandwidth): nothing runs faster


def _compute_dtype(fmt: str, hw: Hardware, fp4_activations: bool) -> str:
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


def _peak_flops(hw: Hardware, dtype: str) -> float:
    v = {"bf16": hw.dense_tflops.bf16, "fp8": hw.dense_tflops.fp8, "fp4": hw.dense_tflops.fp4}[
        dtype
    ]
    if v is None:
        v = hw.dense_tflops.bf16 or hw.dense_tflops.fp8
    assert v is not None
    return float(v) * 1e12


_Op = tuple[float, float, float, float, float]


class StepModel:
    """Precomputed per-replica constants; `cost(batch)` is the hot path (no allocation but
    the result). All byte and FLOP figures are per GPU of a `tp`-GPU replica."""

    def __init__(
        self, hw: Hardware, model: ModelArch, par: Parallel, eff: Efficiency = Efficiency()
    ) -> None:
        if par.tp < 1 or par.ep not in (1, par.tp):
            raise TargetError(f"ep must be 1 or equal to tp (got tp={par.tp}, ep={par.ep}).")
        self.hw, self.model, self.par, self.eff = hw, model, par, eff
        shape = model_shape(model)
        self.shape = shape
        fmts = effective_formats(model, par.precision)
        self.formats = fmts
        self._init_weights(shape, fmts, par.tp)
        self.dense_peak = _peak_flops(
            hw, _compute_dtype(fmts["dense_mlp"], hw, par.fp4_activations)
        )
        self.expert_peak = _peak_flops(
            hw, _compute_dtype(fmts["routed_experts"], hw, par.fp4_activations)
        )
        self.attn_peak = _peak_flops(hw, "bf16")
        self.best_peak = max(self.dense_peak, self.expert_peak, self.attn_peak)
        self.bw = float(hw.hbm_tb_s or 0.0) * 1e12
        self._init_attention(shape, par)
        self._init_comm(hw, model, par)
        self.act_bytes_per_token = activation_bytes_per_token(model, shape, par.tp)
        self.overhead_s = eff.step_overhead_s + eff.layer_overhead_s * model.num_layers

    def _init_weights(self, shape: ModelShape, fmts: dict[str, str], tp: int) -> None:
        """Bytes streamed per step (dense groups, LM head; routed experts per expert-layer)
        and stored per GPU, by each group's format; dense FLOP-bearing parameters."""
        byte = {k: BITS_PER_WEIGHT[v] / 8.0 for k, v in fmts.items()}
        dense_total = shape.n_dense_layers * (
            shape.attention_params_per_layer * byte["attention"]
            + shape.dense_mlp_params_per_layer * byte["dense_mlp"]
        ) + shape.n_moe_layers * (
            shape.attention_params_per_layer * byte["attention"]
            + shape.shared_params_per_layer * byte["shared_experts"]
            + shape.router_params_per_layer * 2.0
        )
        self.lm_head_bytes = shape.embedding_params * byte["embeddings"] / tp
        self.dense_bytes = dense_total / tp  # streamed every step
        self.expert_bytes = shape.expert_params * byte["routed_experts"] / tp  # per expert-layer
        self.weight_bytes_per_gpu = (
            self.dense_bytes
            + 2 * self.lm_head_bytes
            + self.expert_bytes * shape.n_routed_experts * shape.n_moe_layers
        )
        self.dense_params = (
            shape.n_dense_layers
            * (shape.attention_params_per_layer + shape.dense_mlp_params_per_layer)
            + shape.n_moe_layers
            * (
                shape.attention_params_per_layer
                + shape.shared_params_per_layer
                + shape.router_params_per_layer
            )
        ) / tp

    def _init_attention(self, shape: ModelShape, par: Parallel) -> None:
        m = self.model
        kv_byte = KV_BYTES[par.kv_dtype]
        per_layer = shape.kv_elems_per_token_per_layer * kv_byte
        # GQA KV heads split over TP (replicated beyond n_kv_heads); MLA's latent is replicated.
        self.kv_shard = min(par.tp, m.num_kv_heads) if m.attention == "gqa" else 1
        self.kv_full_bytes_per_token = per_layer * shape.n_full_layers  # whole replica
        self.kv_swa_bytes_per_token = per_layer * shape.n_swa_layers
        self.window_tokens = m.sliding_window if shape.n_swa_layers else 0
        heads = par.tp
        self.attn_decode_full = shape.attn_flops_per_pair_per_layer * shape.n_full_layers / heads
        self.attn_decode_swa = shape.attn_flops_per_pair_per_layer * shape.n_swa_layers / heads
        self.attn_prefill_full = (
            shape.attn_prefill_flops_per_pair_per_layer * shape.n_full_layers / heads
        )
        self.attn_prefill_swa = (
            shape.attn_prefill_flops_per_pair_per_layer * shape.n_swa_layers / heads
        )

    def _init_comm(self, hw: Hardware, model: ModelArch, par: Parallel) -> None:
        link = float(hw.scaleup_gb_s_bidir or 0.0) / 2.0 * 1e9 * self.eff.link
        self.link_bytes_per_s = link
        self.n_allreduce = (
            0
            if par.tp == 1
            else (2 * model.num_layers - (self.shape.n_moe_layers if par.ep > 1 else 0))
        )
        self.n_alltoall = self.shape.n_moe_layers if par.ep > 1 else 0
        if par.tp > 1 and link <= 0:
            raise TargetError(
                f"Hardware {hw.name!r} has no scale-up link bandwidth; tp={par.tp} needs one "
                "(add scaleup_gb_s_bidir in a user YAML)."
            )

    def kv_budget_bytes_per_gpu(self) -> float:
        """HBM left for the KV pool on each GPU after weights and activation reserve."""
        hbm = float(self.hw.hbm_gb or 0.0) * 1e9
        return (
            hbm * self.eff.gpu_memory_utilization
            - self.weight_bytes_per_gpu
            - self.eff.activation_reserve_gb * 1e9
        )

    def kv_bytes_per_seq(self, ctx_tokens: int) -> float:
        """KV bytes of one sequence across the replica (all GPUs together)."""
        swa = min(ctx_tokens, self.window_tokens)
        return ctx_tokens * self.kv_full_bytes_per_token + swa * self.kv_swa_bytes_per_token

    def cost(self, b: StepBatch) -> StepCost:
        """Time of one step. Each operator group costs max(FLOPs/achievable, bytes/achievable)."""
        e = self.eff
        tokens = b.n_decode + b.prefill_tokens
        compute_s = memory_s = 0.0
        flops_sum = bytes_sum = 0.0
        for flops, nbytes, peak, m_rows, bw_eff in self._operators(b, tokens):
            eff_c = e.gemm_max * m_rows / (m_rows + e.gemm_m_half_tokens) if m_rows > 0 else 1.0
            t_c = flops / (peak * eff_c) if flops > 0 else 0.0
            t_m = nbytes / (self.bw * bw_eff)
            if t_c > t_m:
                compute_s += t_c
            else:
                memory_s += t_m
            flops_sum += flops
            bytes_sum += nbytes
        comm_s = self._comm_s(tokens)
        overhead_s = self.overhead_s if tokens > 0 else 0.0
        floor_s = max(flops_sum / self.best_peak, bytes_sum / self.bw)
        total = compute_s + memory_s + comm_s + overhead_s
        return StepCost(
            total, compute_s, memory_s, comm_s, overhead_s, flops_sum, bytes_sum, floor_s
        )

    def _operators(self, b: StepBatch, tokens: int) -> list[_Op]:
        """(flops, bytes, peak FLOP/s, GEMM rows, HBM fraction) per operator group; rows 0 =
        not a GEMM."""
        ops: list[_Op] = []
        w_bw = self.eff.hbm_bw
        if tokens <= 0:
            return ops
        ops.append(
            (2.0 * tokens * self.dense_params, self.dense_bytes, self.dense_peak, tokens, w_bw)
        )
        sh = self.shape
        if sh.n_moe_layers:
            k = self.model.experts_per_token
            touched = expected_distinct_experts(sh.n_routed_experts, k, tokens)
            ops.append(
                (
                    2.0 * tokens * k * sh.expert_params * sh.n_moe_layers / self.par.tp,
                    touched * self.expert_bytes * sh.n_moe_layers,
                    self.expert_peak,
                    tokens * k / touched,  # rows per expert GEMM
                    w_bw,
                )
            )
        attn_flops = (
            self.attn_decode_full * b.decode_ctx_tokens
            + self.attn_decode_swa * b.decode_ctx_swa_tokens
            + self.attn_prefill_full * b.prefill_pairs
            + self.attn_prefill_swa * b.prefill_pairs_swa
        )
        kv_read = (
            self.kv_full_bytes_per_token * (b.decode_ctx_tokens + b.prefill_ctx_read_tokens)
            + self.kv_swa_bytes_per_token * b.decode_ctx_swa_tokens
        )
        kv_write = tokens * (self.kv_full_bytes_per_token + self.kv_swa_bytes_per_token)
        ops.append(
            (
                attn_flops,
                (kv_read + kv_write) / self.kv_shard,
                self.attn_peak * self.eff.attention_compute / self.eff.gemm_max,
                0.0,
                self.eff.attention_hbm_bw,
            )
        )
        # BF16 activations written and read back between kernels (not fused away)
        ops.append((0.0, tokens * self.act_bytes_per_token, self.dense_peak, 0.0, w_bw))
        n_s = b.n_sampled
        head_flops = 2.0 * n_s * sh.embedding_params / self.par.tp
        ops.append((head_flops, self.lm_head_bytes, self.dense_peak, float(max(n_s, 1)), w_bw))
        return ops

    def _comm_s(self, tokens: int) -> float:
        if self.n_allreduce == 0 and self.n_alltoall == 0:
            return 0.0
        tp = self.par.tp
        h = self.model.hidden_size
        e = self.eff
        ar_bytes = tokens * h * 2.0 * 2.0 * (tp - 1) / tp  # ring: 2(n-1)/n of the BF16 buffer
        t = self.n_allreduce * (e.allreduce_latency_s + ar_bytes / self.link_bytes_per_s)
        if self.n_alltoall:
            k = self.model.experts_per_token
            # dispatch FP8 (1 B) + combine BF16 (2 B) of this rank's tokens to other ranks
            a2a_bytes = tokens / tp * k * h * 3.0 * (tp - 1) / tp
            t += self.n_alltoall * (2 * e.alltoall_latency_s + a2a_bytes / self.link_bytes_per_s)
        return t
