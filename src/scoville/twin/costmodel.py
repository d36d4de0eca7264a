"""The cost of one engine step: pure functions from (hardware, model, parallelism, batch) to time.

The event engine calls `StepModel.cost` once per step. Each step is a few operator groups
(dense linears, routed experts, attention, LM head); each takes the roofline maximum of its
FLOPs at an achievable fraction of peak and its HBM bytes at an achievable fraction of
bandwidth, and is attributed to compute or memory by which one binds. Tensor-parallel
all-reduces / expert-parallel all-to-alls and fixed launch overhead are added on top.
Efficiency defaults and their reasons are in `Efficiency` and docs/design/twin.md.
"""

from __future__ import annotations

from scoville.errors import TargetError
from scoville.twin.catalogue import Hardware, ModelArch
from scoville.twin.comm import Fabric, StepCollectives
from scoville.twin.kvlayout import KV_BYTES, kv_layout
from scoville.twin.layout import (
    Efficiency,
    KvDtype,
    Parallel,
    SpecDecode,
    compute_dtype,
    fp8_context_attention,
    mla_cache,
    peak_flops,
)
from scoville.twin.shape import (
    ModelShape,
    activation_bytes_per_token,
    effective_formats,
    expected_distinct_experts,
    model_shape,
    weight_bytes,
)
from scoville.twin.speculative import per_emitted_token
from scoville.twin.step import StepBatch, StepCost, Timed, add_up

__all__ = [
    "KV_BYTES",
    "Efficiency",
    "KvDtype",
    "Parallel",
    "SpecDecode",
    "StepBatch",
    "StepCost",
    "StepModel",
]


_Op = tuple[float, float, float, float, float]


class StepModel:
    """Precomputed per-replica constants; `cost(batch)` is the hot path (no allocation but
    the result). Byte and FLOP figures are per GPU: with `dp_attention` they are those of the
    busiest of the tp ranks, each holding 1/tp of the batch."""

    def __init__(
        self, hw: Hardware, model: ModelArch, par: Parallel, eff: Efficiency | None = None
    ) -> None:
        eff = eff or Efficiency()
        if par.tp < 1 or par.pp < 1 or par.ep not in (1, par.tp):
            raise TargetError(
                f"ep must be 1 or equal to tp, tp and pp >= 1 (got tp={par.tp}, ep={par.ep}, "
                f"pp={par.pp})."
            )
        if par.dp_attention and not model.is_moe:
            raise TargetError(
                f"dp_attention needs a mixture-of-experts model; {model.name} is dense."
            )
        self.hw, self.model, self.par, self.eff = hw, model, par, eff
        self.fabric = Fabric.of(hw, eff.link, eff.collective_latency_scale)
        if not par.dp_attention:
            self.fabric.check_group(par.tp, "tp", hw.name)
        # ranks sharing the batch (data-parallel attention) and ranks sharing the experts
        self.dp = par.dp
        self.ep = par.expert_ranks
        shape = model_shape(model)
        self.shape = shape
        fmts = effective_formats(model, par.precision, hw.fp4_weight_format)
        self.formats = fmts
        w = weight_bytes(shape, fmts, par.tp, self.ep, par.pp, par.dp_attention)
        self.lm_head_bytes, self.dense_bytes, self.expert_bytes = w.lm_head, w.dense, w.expert
        self.weight_bytes_per_gpu, self.dense_params = w.per_gpu, w.dense_params
        dense_dtype = compute_dtype(fmts["dense_mlp"], hw, par.fp4_activations)
        expert_dtype = compute_dtype(fmts["routed_experts"], hw, par.fp4_activations)
        dense_peak, expert_peak = peak_flops(hw, dense_dtype), peak_flops(hw, expert_dtype)
        attn_peak = peak_flops(hw, "bf16")
        self.best_peak = max(dense_peak, expert_peak, attn_peak)  # the datasheet's roofline
        # every matrix operator runs at the part's sustained matmul rate against its family's
        # reference part (the clock its power limit holds under dense load; 1.0 for most),
        # never past the datasheet's peak whatever the efficiencies
        rate = min(hw.matmul_rate, 1.0 / max(eff.gemm_max, eff.attention_compute, 1e-9))
        self.dense_peak = self._gemm_peak(dense_peak * rate, dense_dtype, eff)
        self.expert_peak = self._gemm_peak(expert_peak * rate, expert_dtype, eff)
        self.attn_peak = attn_peak * rate
        # prefill (context) attention: the BF16 peak, or the FP8 peak (`fp8_context_attention`)
        fp8_context = fp8_context_attention(eff, hw, par, fmts["attention"])
        self.attn_prefill_peak = peak_flops(hw, "fp8") * rate if fp8_context else self.attn_peak
        # achievable fractions of the weight operators: the kernel stack's grouped-GEMM
        # efficiency for the expert format, and a declared untuned path for both
        self.weight_scale = eff.kernel_scale
        self.expert_scale = eff.kernel_scale * eff.expert_scale(fmts["routed_experts"])
        self.expert_gemm_scale = eff.kernel_scale * eff.expert_gemm
        self.bw = float(hw.hbm_tb_s or 0.0) * 1e12
        self._init_attention(shape, par)
        self._init_comm(hw, model, par)
        self.act_bytes_per_token = activation_bytes_per_token(
            model, shape, par.tp, self.ep, par.dp_attention
        )
        moe_s = eff.moe_layer_overhead_s
        if self.ep > 1 and eff.ep_moe_layer_overhead_s is not None:
            moe_s = eff.ep_moe_layer_overhead_s  # the expert-parallel path's own kernels
        self.overhead_s = (
            eff.step_overhead_s
            + eff.layer_overhead_s * model.num_layers
            + moe_s * shape.n_moe_layers
            + eff.sparse_layer_overhead_s * model.n_indexer_layers
        )
        self.spec = par.spec
        self.tokens_per_step = par.spec.tokens_per_step()
        # under attention DP the step waits for the busiest rank: 1 / (mean / busiest)
        self._dp_imbalance = 1.0 / eff.dp_balance if par.dp_attention else 1.0
        # host time per scheduled request when scheduling is synchronous (each attention-DP
        # rank schedules its own share; the step waits for the busiest)
        sync_s = 0.0 if eff.async_scheduling else eff.sync_seq_overhead_s
        self.sync_request_s = sync_s * (self._dp_imbalance / self.dp)
        self._sized: dict[tuple[int, int, int], tuple[Timed, list[Timed], float, float]] = {}

    def _gemm_peak(self, peak: float, dtype: str, eff: Efficiency) -> float:
        """The peak a GEMM's efficiency multiplies, lowered where the fitted efficiency would
        take a large GEMM past the part's measured maximum achievable matmul rate."""
        measured = getattr(self.hw.matmul_tflops, dtype, None)
        if measured is None or eff.gemm_max <= 0:
            return peak
        return min(peak, float(measured) * 1e12 / eff.gemm_max)

    def _init_attention(self, shape: ModelShape, par: Parallel) -> None:
        m = self.model
        lay = self.kv_layout = kv_layout(m, shape, par.kv_dtype)
        # GQA KV heads split over TP (replicated beyond n_kv_heads); MLA's latent is replicated
        # on TP ranks; data-parallel attention gives each rank its own sequences (sharded).
        if par.dp_attention:
            self.kv_shard = par.tp
        else:
            self.kv_shard = min(par.tp, m.num_kv_heads) if m.attention != "mla" else 1
        self.kv_shard *= par.pp  # each stage stores the KV of its own layers
        self.kv_full_bytes_per_token = lay.store_bytes_per_ctx_token  # whole replica
        self.kv_swa_bytes_per_token = lay.store_bytes_per_window_token
        self.window_tokens = lay.window_tokens
        self.kv_read_bytes_per_token = lay.read_bytes_per_ctx_token
        self.kv_read_bytes_per_query = lay.read_bytes_per_query
        heads = par.tp
        self.attn_decode_full = lay.decode_flops_per_ctx_token / heads
        self.attn_decode_swa = lay.decode_flops_per_window_token / heads
        self.attn_prefill_full = lay.prefill_flops_per_pair / heads
        self.attn_prefill_swa = lay.prefill_flops_per_window_pair / heads
        self.attn_per_query = lay.flops_per_query / heads
        # MLA decode over a 16-bit or an FP8 latent cache: the kernel stack's own path for each
        # (its compute rate and a fixed time per attention head on this GPU per layer), where it
        # has one
        self.mla_rate, head_layer_s = self.eff.mla_path(mla_cache(m, par))
        heads_here = m.num_attention_heads / (1 if par.dp_attention else par.tp)
        self.mla_fixed_s = head_layer_s * heads_here * m.num_layers

    def _init_comm(self, hw: Hardware, model: ModelArch, par: Parallel) -> None:
        self.collectives = StepCollectives.of(
            self.fabric, model, self.shape.n_moe_layers, par, self.eff, self.ep
        )
        # pipeline: one activation hand-off per stage boundary per step
        self.pp_hop_s = (par.pp - 1) * self.fabric.link_for(par.gpus).alpha_s(2)
        if (par.tp > 1 or par.pp > 1) and self.fabric.scaleup.bytes_per_s <= 0:
            raise TargetError(
                f"Hardware {hw.name!r} has no scale-up link bandwidth; tp={par.tp} needs one "
                "(add scaleup_gb_s_bidir in a user YAML)."
            )

    def kv_budget_bytes_per_gpu(self) -> float:
        """HBM left for the KV pool on each GPU after weights and activation reserve."""
        hbm = self.hw.device_memory_bytes
        reserve = self.weight_bytes_per_gpu + self.eff.activation_reserve_gb * 1e9
        free_fraction = self.eff.kv_free_memory_fraction
        if free_fraction is not None:
            return (hbm - reserve) * free_fraction
        return hbm * self.eff.gpu_memory_utilization - reserve

    def kv_bytes_per_seq(self, ctx_tokens: int) -> float:
        """KV bytes of one sequence across the replica (all GPUs together)."""
        swa = min(ctx_tokens, self.window_tokens)
        return ctx_tokens * self.kv_full_bytes_per_token + swa * self.kv_swa_bytes_per_token

    def cost(self, b: StepBatch) -> StepCost:
        """Time of one step (per emitted token with speculative decoding: a verify step that
        emits L tokens per sequence is charged 1/L of its decode share per engine step).
        Each operator group costs max(FLOPs/achievable, bytes/achievable). A decode-only
        batch's weight, activation and LM-head groups and its collectives depend on its
        sizes alone, not on its contexts, so they are timed once per size (`sized`).
        `scoville.twin.stretch.decode_costs` is this function over arrays of contexts."""
        rows = 1 + self.spec.draft_tokens  # query rows per decoding sequence
        tokens = b.n_decode * rows + b.prefill_tokens
        weights, tail, comm_s, overhead_s = self.sized(b, tokens, rows)
        attention = self._timed(self.attention(b, tokens, rows))
        compute_s, memory_s, flops_sum, bytes_sum = add_up(attention + tail, weights)
        floor_s = max(flops_sum / self.best_peak, bytes_sum / self.bw)
        total = compute_s + memory_s + comm_s + overhead_s
        step = StepCost(
            total, compute_s, memory_s, comm_s, overhead_s, flops_sum, bytes_sum, floor_s
        )
        return self.per_token(b, step, tokens, rows)

    def sized(
        self, b: StepBatch, tokens: int, rows: int
    ) -> tuple[Timed, list[Timed], float, float]:
        """The groups that depend on the batch's sizes alone: the weight groups summed, the
        tail groups, the collectives' time and the fixed overhead (cached for decode-only
        batches, keyed by their sizes)."""
        key = (b.n_decode, b.n_sampled, b.n_prefill_chunks)
        sized = None if b.prefill_tokens else self._sized.get(key)
        if sized is None:
            comm = self.collectives.step_s(tokens, self._rank_tokens(b, tokens))
            weights = add_up(self._timed(self._weights(b, tokens)))  # the first groups, summed
            overhead = self.overhead_s + self.pp_hop_s if tokens > 0 else 0.0
            if b.n_decode:
                overhead += self.mla_fixed_s
            overhead += self.sync_request_s * (b.n_decode + b.n_prefill_chunks)
            sized = (weights, self._timed(self._tail(b, tokens, rows)), comm, overhead)
            if not b.prefill_tokens:
                self._sized[key] = sized
        return sized

    def per_token(self, b: StepBatch, step: StepCost, tokens: int, rows: int) -> StepCost:
        """With speculative decoding, the verify step per emitted token; else the step."""
        if self.spec.draft_tokens and b.n_decode:
            share = (
                b.verify_share if b.verify_share is not None else b.n_decode / self.tokens_per_step
            )
            dec_share = b.n_decode * rows / tokens
            return per_emitted_token(self, step, dec_share, b.n_decode, share / b.n_decode)
        return step

    def _timed(self, ops: list[_Op]) -> list[Timed]:
        """Each operator group's (compute s, memory s, FLOPs, bytes) on the busiest GPU."""
        e = self.eff
        out: list[Timed] = []
        for flops, nbytes, peak, m_rows, bw_eff in ops:
            eff_c = e.gemm_max * m_rows / (m_rows + e.gemm_m_half_tokens) if m_rows > 0 else 1.0
            t_c = flops / (peak * eff_c) if flops > 0 else 0.0
            out.append((t_c, nbytes / (self.bw * bw_eff), flops, nbytes))
        return out

    def _weights(self, b: StepBatch, tokens: int) -> list[_Op]:
        """(flops, bytes, peak FLOP/s, GEMM rows, HBM fraction) of the dense linears and the
        routed experts on the busiest GPU."""
        if tokens <= 0:
            return []
        rank_tokens = self._rank_tokens(b, tokens)  # tokens the busiest rank computes
        dense_bw, dense_peak = (
            self.eff.hbm_bw * self.weight_scale,
            self.dense_peak * self.weight_scale,
        )
        ops: list[_Op] = [
            (2.0 * rank_tokens * self.dense_params * self.dp, self.dense_bytes, dense_peak,
             rank_tokens, dense_bw)
        ]  # fmt: skip
        if self.shape.n_moe_layers:
            ops.append(self._experts(tokens))
        return ops

    def attention(self, b: StepBatch, tokens: int, rows: int) -> list[_Op]:
        """The attention groups on the busiest GPU (rows 0: not a GEMM): the MLA decode path
        where the cache dtype has one, then flash attention with the KV reads and writes."""
        ops: list[_Op] = []
        if tokens <= 0:
            return ops
        # sparse top-k reads: per query row, a share of the top-k while contexts are short
        dec_q = b.n_decode * self.kv_layout.sparse_fill(b.decode_ctx_tokens, b.n_decode)
        imb = self._dp_imbalance  # the busiest attention-DP rank's share of the decode work
        dec_flops = (
            (
                self.attn_decode_full * b.decode_ctx_tokens
                + self.attn_decode_swa * b.decode_ctx_swa_tokens
                + self.attn_per_query * dec_q
            )
            * rows
            * imb
        )
        attn_flops = dec_flops
        pf_flops = 0.0
        if b.prefill_tokens or b.n_prefill_chunks:  # a prompt's attention runs on its own
            pf_ranks = self.dp / min(self.dp, max(1, b.n_prefill_chunks))  # attention-DP rank
            pf_q = b.prefill_tokens * self.kv_layout.sparse_fill(b.prefill_pairs, b.prefill_tokens)
            pf_flops = pf_ranks * (
                self.attn_prefill_full * b.prefill_pairs
                + self.attn_prefill_swa * b.prefill_pairs_swa
                + self.attn_per_query * pf_q
            )
            attn_flops += pf_flops
        # flash-attention's fraction of its peak (as the GEMMs' fraction is of theirs): the
        # decode rows' at the BF16 peak, the prompts' at the context kernels' (one rate for both)
        attn_peak = self.attn_peak
        if pf_flops and self.attn_prefill_peak != self.attn_peak:
            attn_peak = attn_flops / (
                (attn_flops - pf_flops) / self.attn_peak + pf_flops / self.attn_prefill_peak
            )
        attn_peak *= self.eff.attention_compute
        dec_read = (
            self.kv_read_bytes_per_token * b.decode_ctx_tokens
            + self.kv_swa_bytes_per_token * b.decode_ctx_swa_tokens
            + self.kv_read_bytes_per_query * dec_q * rows
        ) * imb
        kv_read = self.kv_read_bytes_per_token * b.prefill_ctx_read_tokens + dec_read
        if self.mla_rate < 1.0:
            # the cache dtype's MLA decode path: one kernel that reads the decode rows' latent
            # cache while it computes at its own fraction of the BF16 peak (its roofline)
            mla_bw = self.eff.attention_hbm_bw
            ops.append(
                (dec_flops, dec_read / self.kv_shard, self.attn_peak * self.mla_rate, 0.0, mla_bw)
            )
            attn_flops, kv_read = attn_flops - dec_flops, kv_read - dec_read
        kv_write = tokens * (self.kv_full_bytes_per_token + self.kv_swa_bytes_per_token)
        ops.append(
            (
                attn_flops,
                (kv_read + kv_write) / self.kv_shard,
                attn_peak,
                0.0,
                self.eff.attention_hbm_bw,
            )
        )
        return ops

    def _tail(self, b: StepBatch, tokens: int, rows: int) -> list[_Op]:
        """The step's last groups: BF16 activations written and read back between kernels
        (not fused away), then the LM head over the sampled rows."""
        if tokens <= 0:
            return []
        w_bw = self.eff.hbm_bw
        act_tokens = (tokens - b.prefill_tokens) * self._dp_imbalance + b.prefill_tokens
        n_s = b.n_sampled * rows
        head_flops = 2.0 * n_s * self.shape.embedding_params / self.par.tp
        return [
            (0.0, act_tokens * self.act_bytes_per_token, self.dense_peak, 0.0, w_bw),
            (head_flops, self.lm_head_bytes, self.dense_peak, float(max(n_s, 1)), w_bw),
        ]

    def _rank_tokens(self, b: StepBatch, tokens: int) -> float:
        """Tokens on the busiest rank: all of them under TP; under data-parallel attention the
        busiest rank's share of the decode rows (an even share / `dp_balance`) plus the prefill
        chunks, which cannot be split across ranks (each prompt belongs to one rank, so a
        chunk stalls every rank's MoE exchange)."""
        if self.dp == 1:
            return float(tokens)
        ranks_with_prefill = min(self.dp, max(1, b.n_prefill_chunks))
        return (
            self.busiest_rank_decode(tokens - b.prefill_tokens)
            + b.prefill_tokens / ranks_with_prefill
        )

    def busiest_rank_decode(self, n: float) -> float:
        """The busiest rank's share of `n` decode rows (or sequences): all of them under TP,
        an even share / `dp_balance` under data-parallel attention."""
        return n / self.dp * self._dp_imbalance if self.dp > 1 else float(n)

    def _experts(self, tokens: int) -> _Op:
        """Routed experts on the busiest GPU. TP-sliced: every GPU reads a 1/tp slice of each
        touched expert, as popular as the traffic's routing makes them (`expert_concentration`).
        Expert-parallel: each rank holds E/ep whole experts and computes the tokens routed to
        them, `expert_skew` x the mean on the busiest rank (distinct experts counted as uniform)."""
        sh = self.shape
        k = self.model.experts_per_token
        conc = self.eff.expert_concentration if self.ep == 1 else 0.0
        touched = expected_distinct_experts(sh.n_routed_experts, k, tokens, conc)
        peak = self.expert_peak * self.expert_gemm_scale
        bw = self.eff.hbm_bw * self.expert_scale
        if self.ep == 1:
            flops = 2.0 * tokens * k * sh.expert_params * sh.n_moe_layers / self.par.tp
            return (
                flops,
                touched * self.expert_bytes * sh.n_moe_layers,
                peak,
                tokens * k / touched,  # rows per expert GEMM
                bw,
            )
        skew = self.par.expert_skew
        per_rank = sh.n_routed_experts / self.ep
        touched_rank = min(per_rank, touched / self.ep * skew)
        assignments = tokens * k / self.ep * skew
        return (
            2.0 * assignments * sh.expert_params * sh.n_moe_layers,
            touched_rank * self.expert_bytes * sh.n_moe_layers,
            peak,
            assignments / touched_rank,
            bw,
        )
