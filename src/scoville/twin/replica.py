"""A serving replica's state, and what is read off it: the KV it could hold, the load it
carries, the batch its next step computes. `scoville.twin.engine.Replica` steps it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Literal

from scoville.twin.admission import BatchWait, OutputLedger
from scoville.twin.costmodel import StepBatch, StepModel
from scoville.twin.kernel import EventKernel, Kernel
from scoville.twin.prefix import PrefixCache, PrefixStore
from scoville.twin.seq import EngineConfig, ReplicaStats, Seq

Role = Literal["both", "prefill", "decode"]


class ReplicaState:
    """The queues, KV ledger, prefix cache and step history of one replica."""

    def __init__(
        self,
        name: str,
        model: StepModel,
        kernel: Kernel,
        config: EngineConfig | None = None,
        role: Role = "both",
        on_prefilled: Callable[[Seq, int], None] | None = None,
    ) -> None:
        config = config or EngineConfig()
        if model.kv_budget_bytes_per_gpu() <= 0:
            raise ValueError("weights leave no room for the KV cache")
        self.name, self.model, self.kernel, self.cfg, self.role = name, model, kernel, config, role
        self.on_prefilled = on_prefilled
        # simulated time only: plain decode steps run inline while no event falls due
        self._events = kernel if isinstance(kernel, EventKernel) else None
        unit = model.kv_full_bytes_per_token or model.kv_swa_bytes_per_token
        self._swa_ratio = (
            model.kv_swa_bytes_per_token / unit if model.kv_full_bytes_per_token else 0
        )
        per_gpu_unit = unit / model.kv_shard
        bs = config.block_size_tokens
        budget = model.kv_budget_bytes_per_gpu() * config.kv_share
        self.kv_capacity_blocks = int(budget / per_gpu_unit) // bs
        self.kv_capacity = self.kv_capacity_blocks * bs  # tokens of full-attention KV
        self.kv_used = 0
        self.waiting: deque[Seq] = deque()
        self.inbox: deque[Seq] = deque()  # arrived, not yet taken in (recv_interval > 1)
        self._recv_count = 0  # weighted steps since the last take
        self.prefilling: list[Seq] = []
        self.running: dict[Seq, None] = {}
        self.streaming: dict[Seq, None] = {}
        self.finish_at: dict[int, list[Seq]] = {}
        self.step_times: list[int] = []
        self.sum_ctx = 0
        # speculative decoding: the running sequences' verify steps per emitted token, summed
        self.sum_verify = 0.0
        self._spec = model.spec if model.spec.draft_tokens else None
        self.n_short = 0  # running sequences whose context is below the sliding window
        self.prefix: PrefixStore = PrefixCache()
        self.stats = ReplicaStats()
        # (t_end_ns, compute_s, memory_s, comm_s, overhead_s, kv occupancy) per step, when a
        # long-lived user (the Server adapter) needs per-window figures; None on the fast path
        self.step_log: list[tuple[int, float, float, float, float, float]] | None = None
        self._busy = False
        self._start_pending = False  # an idle replica's first step is due at this instant
        self._free_at_ns = 0
        self._chunks: list[tuple[Seq, int]] = []
        self._n_dec = 0
        self.ledger = OutputLedger()  # output tokens still to come, for KV reservation
        self.batch_wait = BatchWait(config.admission)
        self._held: list[Seq] = []  # admitted this step with a first token still to stream
        self._reserve_from_step = 0  # step of the start or last preemption (ratio decay)

    def refuses(self, seq: Seq) -> bool:
        """Whether this replica could never hold `seq` (its context window, a prompt over one
        rank's step budget where prompts are not chunked, or the whole KV pool); sets
        `seq.error` to say which, as a real server's validation does."""
        total = seq.prompt_tokens + seq.max_tokens
        if total > self.model.model.max_position_embeddings:
            seq.error = "context_overflow"
        elif seq.prompt_tokens > self.prompt_limit():
            seq.error = "max_num_tokens"
        elif total + self._swa_charge(total) > self.kv_capacity:
            seq.error = "kv_capacity"
        return seq.error is not None

    def prompt_limit(self) -> float:
        """The longest prompt one step can take whole: without chunked prefill, one rank's
        token budget (TensorRT-LLM refuses a longer one: "The sum of prompt length ... should
        not exceed max_num_tokens"); no limit with chunking, or on a decode replica, which
        receives prompts already computed."""
        if self.cfg.chunked_prefill or self.role == "decode":
            return float("inf")
        return self.cfg.max_num_batched_tokens // self.model.dp

    def load(self) -> int:
        """Sequences held (for least-loaded routing)."""
        return len(self.inbox) + len(self.waiting) + len(self.prefilling) + len(self.running)

    def _swa_charge(self, ctx: int) -> int:
        w = self.model.window_tokens
        return int(min(ctx, w) * self._swa_ratio + 0.999999) if w else 0

    def _shrink_prefix(self, kv_used: int | None = None) -> None:
        """The prefix cache holds what the KV pool does not (within its own limit, if any),
        the pool holding `kv_used` tokens (default: what it holds now)."""
        free = self.kv_capacity - (self.kv_used if kv_used is None else kv_used)
        limit = self.cfg.prefix_cache_tokens
        if limit is None:
            self.prefix.shrink_to(free)
        elif limit >= 0:
            self.prefix.shrink_to(min(limit, free))

    def _fits_whole(self, seq: Seq, budget: int) -> bool:
        """Unchunked prefill: the whole prompt must fit the step's remaining budget, unless
        nothing else runs this step (a prompt above the budget would otherwise never run)."""
        need = seq.ctx_target - (seq.cached_tokens if seq.preemptions == 0 else 0)
        idle = not self.running and not self.prefilling
        return need <= budget or (idle and budget >= self.cfg.max_num_batched_tokens)

    def _batch(self, n_dec: int, chunks: list[tuple[Seq, int]]) -> StepBatch:
        w = self.model.window_tokens
        verify = self.sum_verify if self._spec is not None else None
        swa = 0
        if w:
            short_n, short_sum = self._short_ctx()
            swa = (n_dec - short_n) * w + short_sum
        if not chunks:  # a decode-only step (the hot path: the tuple built positionally)
            return StepBatch(n_dec, self.sum_ctx, swa, 0, 0.0, 0.0, 0, n_dec, 0, verify)
        pf_tokens = 0
        pairs = pairs_swa = 0.0
        ctx_read = 0
        for seq, c in chunks:
            p = seq.computed
            pf_tokens += c
            pairs += c * (p + (c + 1) / 2)
            if w:
                pairs_swa += c * min(p + (c + 1) / 2, w)
            ctx_read += p
        done = sum(1 for seq, c in chunks if seq.computed + c >= seq.ctx_target)
        return StepBatch(
            n_prefill_chunks=len(chunks),
            n_decode=n_dec,
            decode_ctx_tokens=self.sum_ctx,
            decode_ctx_swa_tokens=swa,
            prefill_tokens=pf_tokens,
            prefill_pairs=pairs,
            prefill_pairs_swa=pairs_swa,
            prefill_ctx_read_tokens=ctx_read,
            n_sampled=n_dec + done,
            verify_share=verify,
        )

    def _short_ctx(self) -> tuple[int, int]:
        """(count, context sum) of running sequences shorter than the window; O(n) only
        while such sequences exist (rare: prompts are usually longer than the window)."""
        if not self.n_short:
            return 0, 0
        w = self.model.window_tokens
        total = n = 0
        next_step = len(self.step_times)
        for seq in self.running:
            ctx = seq.prompt_tokens + seq.seg_base + (next_step - seq.seg_start)
            if ctx < w:
                total += ctx
                n += 1
        self.n_short = n
        return n, total

    def _verify(self, seq: Seq, sign: float) -> None:
        """Add (+1) or take (-1) a decoding sequence's verify steps per emitted token, the
        mean over its whole output (`SpecDecode.steps_per_token`)."""
        if self._spec is not None:
            self.sum_verify += sign * self._spec.steps_per_token(seq.max_tokens)
