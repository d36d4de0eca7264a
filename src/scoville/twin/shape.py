"""Model arithmetic the step cost model builds on: parameter counts by group, KV elements
and attention FLOPs per token, stored bytes by weight format after a precision override,
experts touched by a batch, and activation traffic per token. Pure functions of a `ModelArch`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from scoville.twin.catalogue import BITS_PER_WEIGHT, ModelArch, WeightFormat

Precision = Literal["native", "bf16", "fp8", "fp4", "int4"]


@dataclass(frozen=True, slots=True)
class ModelShape:
    """Parameter counts and KV bytes derived from a `ModelArch` (per whole model)."""

    attention_params_per_layer: int
    dense_mlp_params_per_layer: int
    expert_params: int  # one routed expert of one layer
    shared_params_per_layer: int
    router_params_per_layer: int
    embedding_params: int  # input embeddings (gathered, not streamed) and the LM head each
    n_dense_layers: int
    n_moe_layers: int
    n_swa_layers: int
    n_full_layers: int
    kv_elems_per_token_per_layer: int
    attn_flops_per_pair_per_layer: int  # decode / absorbed form
    attn_prefill_flops_per_pair_per_layer: int
    n_routed_experts: int

    @property
    def total_params(self) -> int:
        per_moe = (
            self.attention_params_per_layer
            + self.shared_params_per_layer
            + self.router_params_per_layer
        )
        return (
            self.n_dense_layers
            * (self.attention_params_per_layer + self.dense_mlp_params_per_layer)
            + self.n_moe_layers * per_moe
            + self.n_moe_layers * self.expert_params * self.n_routed_experts
            + 2 * self.embedding_params
        )


def model_shape(m: ModelArch) -> ModelShape:
    """Parameter counts from config fields (biases and norms ignored: < 0.1 %)."""
    h = m.hidden_size
    if m.attention == "mla":
        qk = m.qk_nope_head_dim + m.qk_rope_head_dim
        q = (
            h * m.q_lora_rank + m.q_lora_rank * m.num_attention_heads * qk
            if m.q_lora_rank
            else (h * m.num_attention_heads * qk)
        )
        kv = h * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank * m.num_attention_heads * (
            m.qk_nope_head_dim + m.v_head_dim
        )
        attn = q + kv + m.num_attention_heads * m.v_head_dim * h
        kv_elems = m.kv_lora_rank + m.qk_rope_head_dim
        # absorbed decode: scores over (kv_lora + rope), values over kv_lora
        decode_pair = 2 * m.num_attention_heads * (2 * m.kv_lora_rank + m.qk_rope_head_dim)
        prefill_pair = 2 * m.num_attention_heads * (qk + m.v_head_dim)
    elif m.attention == "csa":
        attn = _csa_attention_params(m)
        kv_elems = m.head_dim  # one entry serves as K and V
        decode_pair = prefill_pair = 2 * m.num_attention_heads * 2 * m.head_dim
    else:
        hd = m.head_dim
        attn = h * hd * (2 * m.num_attention_heads + 2 * m.num_kv_heads)
        kv_elems = 2 * m.num_kv_heads * hd
        decode_pair = prefill_pair = 2 * m.num_attention_heads * 2 * hd
    n_moe = m.num_layers - m.first_k_dense_layers if m.is_moe else 0
    return ModelShape(
        attention_params_per_layer=attn,
        dense_mlp_params_per_layer=3 * h * m.intermediate_size,
        expert_params=3 * h * m.moe_intermediate_size if m.is_moe else 0,
        shared_params_per_layer=m.num_shared_experts * 3 * h * m.moe_intermediate_size,
        router_params_per_layer=h * m.num_routed_experts,
        embedding_params=m.vocab_size * h,
        n_dense_layers=m.num_layers - n_moe,
        n_moe_layers=n_moe,
        n_swa_layers=m.num_sliding_window_layers,
        n_full_layers=m.num_layers - m.num_sliding_window_layers,
        kv_elems_per_token_per_layer=kv_elems,
        attn_flops_per_pair_per_layer=decode_pair,
        attn_prefill_flops_per_pair_per_layer=prefill_pair,
        n_routed_experts=m.num_routed_experts,
    )


@dataclass(frozen=True, slots=True)
class WeightBytes:
    """One GPU's weights (`weight_bytes`): bytes streamed per step and stored, and the dense
    FLOP-bearing parameters."""

    lm_head: float  # the LM head's TP slice
    dense: float  # the dense groups, streamed every step
    expert: float  # one routed expert of one layer: a TP slice, or the whole expert under EP
    per_gpu: float  # stored on the GPU
    dense_params: float  # dense FLOP-bearing parameters


def weight_bytes(
    shape: ModelShape, fmts: dict[str, str], tp: int, ep: int, pp: int, dp_attention: bool
) -> WeightBytes:
    """Bytes streamed per step (dense groups, LM head; routed experts per expert-layer) and
    stored per GPU, by each group's format (`effective_formats`); dense FLOP-bearing
    parameters. Dense groups are split over TP, or replicated on every rank under data-parallel
    attention; a pipeline stage holds 1/pp of the layers."""
    byte = {k: BITS_PER_WEIGHT[v] / 8.0 for k, v in fmts.items()}
    dense_total = shape.n_dense_layers * (
        shape.attention_params_per_layer * byte["attention"]
        + shape.dense_mlp_params_per_layer * byte["dense_mlp"]
    ) + shape.n_moe_layers * (
        shape.attention_params_per_layer * byte["attention"]
        + shape.shared_params_per_layer * byte["shared_experts"]
        + shape.router_params_per_layer * 2.0
    )
    lm_head = shape.embedding_params * byte["embeddings"] / tp
    dense = dense_total / (1 if dp_attention else tp)
    # per expert-layer: a TP slice of every expert, or whole experts on their EP rank
    expert = shape.expert_params * byte["routed_experts"] / (1 if ep > 1 else tp)
    experts_per_gpu = shape.n_routed_experts / ep
    per_gpu = (dense + 2 * lm_head + expert * experts_per_gpu * shape.n_moe_layers) / pp
    dense_params = (
        shape.n_dense_layers * (shape.attention_params_per_layer + shape.dense_mlp_params_per_layer)
        + shape.n_moe_layers
        * (
            shape.attention_params_per_layer
            + shape.shared_params_per_layer
            + shape.router_params_per_layer
        )
    ) / tp
    return WeightBytes(lm_head, dense, expert, per_gpu, dense_params)


def _csa_attention_params(m: ModelArch) -> int:
    """DeepSeek V4 attention: low-rank query (h -> q_lora -> heads x head_dim), one shared K = V
    projection (h -> head_dim), grouped low-rank output (heads x head_dim -> o_groups x o_lora
    -> h). The KV compressors and the indexer (about 1.2 B of V4-Pro's 1.6 T) are not counted."""
    h, n, hd = m.hidden_size, m.num_attention_heads, m.head_dim
    q = h * m.q_lora_rank + m.q_lora_rank * n * hd if m.q_lora_rank else h * n * hd
    o = n * hd * m.o_lora_rank + m.o_groups * m.o_lora_rank * h if m.o_lora_rank else n * hd * h
    return q + h * hd + o


def effective_formats(
    m: ModelArch, precision: Precision, fp4_format: WeightFormat
) -> dict[str, str]:
    """Weight format per group after a precision override ('native' keeps the checkpoint's).
    `fp4_format` is the 4-bit float format of the hardware's checkpoints: NVFP4 (16-element
    blocks with an FP8 scale, 4.5 bits) from NVIDIA's ModelOpt, MXFP4 (32-element blocks with
    a power-of-two scale, 4.25 bits) from AMD's Quark.

    A 4-bit override lowers the MLP groups; on a dense model it lowers the attention
    projections too, as the published 4-bit dense checkpoints do (nvidia/Llama-3.3-70B-
    Instruct-NVFP4 excludes only lm_head: 41 B stored parameters, against 46 B with BF16
    attention; amd/Llama-3.3-70B-Instruct-MXFP4-Preview quantises every linear layer's
    weights and activations), while the 4-bit mixture-of-experts checkpoints keep attention
    at their higher precision (nvidia/DeepSeek-R1-NVFP4 excludes every `self_attn`)."""
    f: dict[str, str] = m.weight_formats.model_dump()
    if precision == "bf16":
        return dict.fromkeys(f, "bf16")
    if precision == "fp8":
        return {k: ("bf16" if k == "embeddings" else "fp8") for k in f}
    if precision in ("fp4", "int4"):
        low = fp4_format if precision == "fp4" else "int4_g128"
        groups = ["routed_experts", "dense_mlp", "shared_experts"]
        if not m.is_moe:
            groups.append("attention")
        for k in groups:
            if BITS_PER_WEIGHT[f[k]] > BITS_PER_WEIGHT[low]:
                f[k] = low
    return f


def expected_distinct_experts(
    n_experts: int, top_k: int, n_tokens: float, concentration: float = 0.0
) -> float:
    """Experts touched by T tokens, top-k each: sum over experts of 1 - (1 - q_e)^T, q_e the
    chance that one token picks expert e. Uniform routing (`concentration` 0) gives
    q_e = k/E, so E * (1 - (1 - k/E)^T). A positive `concentration` a makes the experts'
    popularity fall as rank^-a (`pick_chances`): the same k picks per token, fewer distinct
    experts in a batch."""
    if n_tokens <= 0 or n_experts == 0:
        return 0.0
    if concentration <= 0.0:
        untouched: float = (1.0 - top_k / n_experts) ** n_tokens
        return n_experts * (1.0 - untouched)
    return _distinct(n_experts, top_k, n_tokens, concentration)


@lru_cache(maxsize=4096)
def _distinct(n_experts: int, top_k: int, n_tokens: float, concentration: float) -> float:
    touched: float = sum(
        1.0 - (1.0 - q) ** n_tokens for q in pick_chances(n_experts, top_k, concentration)
    )
    return touched


@lru_cache(maxsize=64)
def pick_chances(n_experts: int, top_k: int, concentration: float) -> tuple[float, ...]:
    """Each expert's chance of being among one token's k picks when popularity falls as
    rank^-`concentration`: k x its share, an expert that would exceed 1 held at 1 and the
    rest shared again among the others, so the chances sum to k (a token's k picks are
    distinct)."""
    weights = [(r + 1.0) ** -concentration for r in range(n_experts)]
    chances = [0.0] * n_experts
    left, start = float(top_k), 0
    while start < n_experts:
        total = sum(weights[start:])
        if left * weights[start] / total < 1.0:
            for r in range(start, n_experts):
                chances[r] = left * weights[r] / total
            break
        chances[start] = 1.0  # the most popular: in every token's picks
        left -= 1.0
        start += 1
    return tuple(chances)


def activation_bytes_per_token(
    m: ModelArch, shape: ModelShape, tp: int, ep: int = 1, dp_attention: bool = False
) -> float:
    """HBM bytes of BF16 activations one token moves per step on one GPU: per layer the
    residual stream and norm output (written and read: 4 h, replicated on every TP rank),
    the attention projections' outputs (q, k/v or latent, attention output; each written
    and read, split over TP), and per expert the token copy in and out (2 h) plus the
    gate/up output (2 I, written and read) and the activated output (I, written and read).
    Under expert parallelism a routed expert's traffic lands on the one rank holding it (mean
    over `ep` ranks); under data-parallel attention each rank carries 1/tp of the tokens."""
    h = m.hidden_size
    if m.attention == "mla":
        q = m.num_attention_heads * (m.qk_nope_head_dim + m.qk_rope_head_dim)
        kv = m.kv_lora_rank + m.qk_rope_head_dim
        o = m.num_attention_heads * m.v_head_dim
    else:
        q = o = m.num_attention_heads * m.head_dim
        kv = (1 if m.attention == "csa" else 2) * m.num_kv_heads * m.head_dim
    if dp_attention:
        per_layer = (4 * h + 2 * (q + kv + o)) / tp
        mlp_dense = (2 * h + 6 * m.intermediate_size) * shape.n_dense_layers / tp
        shared = (2 * h + 6 * m.moe_intermediate_size) * m.num_shared_experts / tp
    else:
        per_layer = 4 * h + 2 * (q + kv + o) / tp
        mlp_dense = (2 * h + 6 * m.intermediate_size / tp) * shape.n_dense_layers
        shared = (2 * h + 6 * m.moe_intermediate_size / tp) * m.num_shared_experts
    if ep > 1:
        routed = (2 * h + 6 * m.moe_intermediate_size) * m.experts_per_token / ep
    else:
        routed = (2 * h + 6 * m.moe_intermediate_size / tp) * m.experts_per_token
    mlp_moe = (routed + shared) * shape.n_moe_layers
    return 2.0 * (per_layer * m.num_layers + mlp_dense + mlp_moe)
