"""What the KV cache stores per token and what attention reads and computes per decoded token,
for the whole model: full-context layers, sliding-window layers, and compressed / sparse
attention (DeepSeek V4's CSA and HCA), whose sizes are catalogue facts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scoville.twin.catalogue import CompressedKv, ModelArch
from scoville.twin.shape import ModelShape

KV_BYTES: dict[str, float] = {"bf16": 2.0, "fp8": 1.0}


@dataclass(frozen=True, slots=True)
class KvLayout:
    """Per whole model (all layers, one replica). Three kinds of term: per token of context
    (`*_per_ctx_token`), per token inside the window (`*_per_window_token`, capped at
    `window_tokens` per sequence), and per query row (`*_per_query`, the top-k entries a
    sparse layer reads once the context holds `sparse_full_ctx_tokens` tokens, a share of
    them before). Prefill FLOPs use causal pairs in place of context tokens."""

    store_bytes_per_ctx_token: float
    store_bytes_per_window_token: float
    window_tokens: int
    read_bytes_per_ctx_token: float
    read_bytes_per_query: float
    decode_flops_per_ctx_token: float
    decode_flops_per_window_token: float
    prefill_flops_per_pair: float
    prefill_flops_per_window_pair: float
    flops_per_query: float
    sparse_full_ctx_tokens: float = 0.0

    def sparse_fill(self, ctx_tokens: float, queries: float) -> float:
        """Share of the top-k read at the mean context of `queries` rows (1 once full). Per
        sequence it is min(1, ctx / full); at the mean it is an upper bound of the mean."""
        if queries <= 0 or self.sparse_full_ctx_tokens <= 0:
            return 1.0
        fill = ctx_tokens / queries / self.sparse_full_ctx_tokens
        if isinstance(fill, np.ndarray):  # one per step of a stretch (`twin.stretch`)
            return np.minimum(1.0, fill)
        return min(1.0, fill)


def kv_layout(m: ModelArch, shape: ModelShape, kv_dtype: str) -> KvLayout:
    """The layout for one KV dtype ('bf16' or 'fp8')."""
    if m.compressed_kv is not None:
        return _compressed(m.compressed_kv, shape, kv_dtype)
    per_layer = shape.kv_elems_per_token_per_layer * KV_BYTES[kv_dtype]
    full, swa = shape.n_full_layers, shape.n_swa_layers
    return KvLayout(
        store_bytes_per_ctx_token=per_layer * full,
        store_bytes_per_window_token=per_layer * swa,
        window_tokens=m.sliding_window if swa else 0,
        read_bytes_per_ctx_token=per_layer * full,
        read_bytes_per_query=0.0,
        decode_flops_per_ctx_token=shape.attn_flops_per_pair_per_layer * full,
        decode_flops_per_window_token=shape.attn_flops_per_pair_per_layer * swa,
        prefill_flops_per_pair=shape.attn_prefill_flops_per_pair_per_layer * full,
        prefill_flops_per_window_pair=shape.attn_prefill_flops_per_pair_per_layer * swa,
        flops_per_query=0.0,
    )


def _compressed(ckv: CompressedKv, shape: ModelShape, kv_dtype: str) -> KvLayout:
    """Every layer: the raw window. A dense compressed layer (ratio r): 1/r entry per token,
    all read. A sparse layer (ratio `sparse_ratio`): 1/r entry and 1/r indexer key per token;
    the indexer scores every key, attention reads `index_topk` entries per query row (fewer
    while the context holds fewer entries: `sparse_fill`)."""
    entry_b = ckv.entry_bytes[kv_dtype]  # type: ignore[index]
    sparse = [r for r in ckv.compress_ratios if r == ckv.sparse_ratio]
    dense = [r for r in ckv.compress_ratios if r > 0 and r != ckv.sparse_ratio]
    n_window = len(ckv.compress_ratios) if ckv.window_tokens else 0
    dense_entries = sum(1.0 / r for r in dense)  # entries per context token, all layers
    sparse_entries = sum(1.0 / r for r in sparse)
    pair = float(shape.attn_flops_per_pair_per_layer)
    pf_pair = float(shape.attn_prefill_flops_per_pair_per_layer)
    index_flops = 2.0 * ckv.index_n_heads * ckv.index_head_dim * sparse_entries
    index_bytes = ckv.index_entry_bytes * sparse_entries
    return KvLayout(
        store_bytes_per_ctx_token=entry_b * (dense_entries + sparse_entries) + index_bytes,
        store_bytes_per_window_token=entry_b * n_window,
        window_tokens=ckv.window_tokens,
        read_bytes_per_ctx_token=entry_b * dense_entries + index_bytes,
        read_bytes_per_query=entry_b * ckv.index_topk * len(sparse),
        decode_flops_per_ctx_token=pair * dense_entries + index_flops,
        decode_flops_per_window_token=pair * n_window,
        prefill_flops_per_pair=pf_pair * dense_entries + index_flops,
        prefill_flops_per_window_pair=pf_pair * n_window,
        flops_per_query=pair * ckv.index_topk * len(sparse),
        sparse_full_ctx_tokens=float(ckv.sparse_ratio * ckv.index_topk) if sparse else 0.0,
    )
