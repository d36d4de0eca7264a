"""What a twin replica serves and reports: a request in flight (`Seq`, with the step times
of its tokens), the scheduler's limits (`EngineConfig`) and the replica's busy-time
accounting (`ReplicaStats`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from scoville.twin.admission import AdmissionPolicy

TokenCallback = Callable[[int, int], None]  # (t_ns, tokens)


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """Scheduler limits (vLLM names and defaults where they exist)."""

    max_num_seqs: int = 512
    max_num_batched_tokens: int = 8192
    block_size_tokens: int = 16
    prefix_caching: bool = True
    # Prefix-cache capacity in tokens: None = whatever KV memory is free (vLLM), -1 = never
    # evicts (an unbounded cache tier, the bound a trace's theoretical hit rate assumes).
    prefix_cache_tokens: int | None = None
    # Framework scheduler policy: chunked prefill (vLLM, SGLang) or whole prompts that must
    # fit the step's remaining token budget (TensorRT-LLM's default); prefill mixed into the
    # decode step (vLLM, TRT-LLM) or run as its own batch before it (SGLang).
    chunked_prefill: bool = True
    mix_prefill_decode: bool = True
    # KV reserved for future output at admission, and the scheduling lag of an arrival
    admission: AdmissionPolicy = field(default_factory=AdmissionPolicy)


@dataclass(slots=True, eq=False)
class Seq:
    """One request inside the twin. Token counts are exact; times are step-end times."""

    rid: int
    arrival_ns: int
    prompt_tokens: int
    max_tokens: int
    prefix_hashes: Sequence[int] = ()
    prefix_block_tokens: int = 0
    session: str | None = None
    on_token: TokenCallback | None = None
    on_done: Callable[[Seq], None] | None = None
    emitted: int = 0
    ctx_target: int = 0  # tokens to prefill: prompt + tokens emitted before a preemption
    computed: int = 0  # prefill progress
    cached_tokens: int = 0
    kv_charge: int = 0  # KV tokens charged at admission
    kv_decode_from: int = 0  # first step index whose decode KV write is charged
    seg_start: int = 0  # step index of the current segment's first token
    seg_base: int = 0  # tokens emitted before the current segment
    finish_step: int = -1
    preemptions: int = 0
    ready_step: int = 0  # first step index whose schedule can include this sequence
    end_ns: int = 0
    error: str | None = None  # "context_overflow" | "kv_capacity": rejected at admission
    segments: list[tuple[list[int], int, int]] = field(default_factory=list)

    def token_times(self) -> list[int]:
        """Emission time of every output token, in order."""
        out: list[int] = []
        for times, a, b in self.segments:
            out.extend(times[a:b])
        return out


@dataclass(slots=True)
class ReplicaStats:
    """Seconds of busy time by what bound each operator, and KV occupancy (time-weighted)."""

    busy_s: float = 0.0
    compute_s: float = 0.0
    memory_s: float = 0.0
    comm_s: float = 0.0
    overhead_s: float = 0.0
    kv_occupancy_s: float = 0.0  # integral of used/capacity over busy time
    kv_occupancy_max: float = 0.0
    steps: int = 0
    preemptions: int = 0
