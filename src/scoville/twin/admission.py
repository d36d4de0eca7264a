"""How a serving framework admits a new request into a running batch: the KV it reserves for
the request's future output tokens, and how many steps an arrival waits before the scheduler
can see it (overlap / async scheduling). The replica (`twin.engine`) asks this module at each
admission; the framework profiles (`twin.profiles`) choose the policy.

Reservation, as a fraction of each admitted request's remaining output tokens:
- vLLM V1: 0 (blocks allocated as tokens are generated; a full pool preempts).
- TensorRT-LLM `GUARANTEED_NO_EVICT` (its default capacity policy): 1 (prompt + max_tokens
  reserved at admission, so nothing is ever evicted, and a request waits until that fits).
- SGLang: a `new_token_ratio` that starts at 0.7, decays linearly to 0.7 x 0.14 over 600
  decode steps and resets to 0.7 on a retraction (preemption).

Batch waiting (TensorRT-LLM `batch_wait_timeout_iters`, `batch_wait_max_tokens_ratio`; off by
default, set by InferenceX's 1k/1k Llama recipes): while decodes run, new prompts are held for
up to N steps until the step's tokens reach the ratio x max_num_tokens.

Attention-DP balance (TensorRT-LLM `attention_dp_config: enable_balance`, `timeout_iters`):
with attention data-parallel, a prompt's prefill runs on one rank and stalls every rank at the
MoE exchange, so while decodes run new prompts are held for up to N steps until there is one
for every rank, and the ranks prefill together.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

# SGLang's default weight of a non-decode step in its receive skipper
# (sglang/srt/managers/scheduler_recv_skipper.py, SGLANG_SCHEDULER_RECV_SKIPPER_WEIGHT_DEFAULT)
RECV_PREFILL_WEIGHT = 1000


@dataclass(frozen=True, slots=True)
class AdmissionPolicy:
    """A framework's admission rules (defaults: no reservation, no lag, no batch waiting)."""

    # fraction of remaining output tokens reserved in KV at admission, right after a start or a
    # preemption; it decays linearly to `reserve_floor` over `reserve_decay_steps` steps
    reserve_init: float = 0.0
    reserve_floor: float = 0.0
    reserve_decay_steps: int = 0
    # an arrival while the replica is busy is first scheduled at step index len(step_times) +
    # lag: 1 for the client round trip that misses the schedule formed at a step end, 1 more
    # when the scheduler builds step k+1 while step k runs (overlap / async scheduling)
    lag_steps: int = 0
    batch_wait_iters: int = 0  # 0 = off
    batch_wait_ratio: float = 0.0
    # SGLang --scheduler-recv-interval: new requests are taken in only when the weighted count of
    # steps since the last take reaches it; a decode (or verify) step weighs 1, a step with
    # prefill RECV_PREFILL_WEIGHT, so a take follows every prefill (1 = every step, the default)
    recv_interval: int = 1
    # attention-DP balance: hold prompts for up to `balance_iters` steps until `balance_ranks`
    # are ready (0 = off)
    balance_iters: int = 0
    balance_ranks: int = 1

    def recv_weight(self, had_prefill: bool) -> int:
        """What one finished step adds to the count toward the next take of new requests."""
        return RECV_PREFILL_WEIGHT if had_prefill else 1

    def reserve_ratio(self, steps_since_reset: int) -> float:
        """The fraction of remaining output reserved, `steps_since_reset` steps after the
        last start or preemption."""
        if self.reserve_decay_steps <= 0 or steps_since_reset <= 0:
            return self.reserve_init
        done = min(1.0, steps_since_reset / self.reserve_decay_steps)
        return self.reserve_init - (self.reserve_init - self.reserve_floor) * done


class OutputLedger:
    """Output tokens still to come from every admitted sequence, kept in O(1) per event:
    prefilling sequences by count, decoding ones by the sum of their last step index."""

    __slots__ = ("n_decoding", "prefill_tokens_left", "sum_finish_step")

    def __init__(self) -> None:
        self.prefill_tokens_left = 0
        self.sum_finish_step = 0
        self.n_decoding = 0

    def add_prefill(self, tokens_left: int) -> None:
        self.prefill_tokens_left += tokens_left

    def remove_prefill(self, tokens_left: int) -> None:
        self.prefill_tokens_left -= tokens_left

    def add_decode(self, finish_step: int) -> None:
        self.sum_finish_step += finish_step
        self.n_decoding += 1

    def remove_decode(self, finish_step: int) -> None:
        self.sum_finish_step -= finish_step
        self.n_decoding -= 1

    def tokens_left(self, next_step: int) -> int:
        """Output tokens the admitted sequences have yet to emit from step `next_step` on
        (a decoding sequence whose last step is f emits f - next_step + 1 more)."""
        decoding = self.sum_finish_step - self.n_decoding * (next_step - 1)
        return self.prefill_tokens_left + decoding


class Waiting(Protocol):
    """What batch waiting reads of a queued sequence."""

    ctx_target: int
    ready_step: int


class BatchWait:
    """TensorRT-LLM's two holds on new prompts while decodes run. Batch waiting: for up to
    `batch_wait_iters` steps, until the prompt tokens ready to schedule plus one token per
    decoding sequence reach `batch_wait_ratio` x the step's token budget. Attention-DP
    balance: for up to `balance_iters` steps, until `balance_ranks` prompts are ready."""

    __slots__ = ("policy", "waited")

    def __init__(self, policy: AdmissionPolicy) -> None:
        self.policy = policy
        self.waited = 0

    def hold(
        self, queue: Iterable[Waiting], n_decode: int, next_step: int, max_tokens: int
    ) -> bool:
        p = self.policy
        limit = max(p.batch_wait_iters, p.balance_iters)
        if not limit or not n_decode or self.waited >= limit:
            self.waited = 0
            return False
        want = p.batch_wait_ratio * max_tokens
        tokens, n_ready = n_decode, 0
        for seq in queue:
            if seq.ready_step > next_step or (tokens >= want and n_ready >= p.balance_ranks):
                break
            n_ready += 1
            tokens += min(seq.ctx_target, max(0, max_tokens - tokens))
        if not n_ready:  # no prompt to hold
            return False
        short = self.waited < p.batch_wait_iters and tokens < want
        unbalanced = self.waited < p.balance_iters and n_ready < p.balance_ranks
        if not (short or unbalanced):
            self.waited = 0
            return False
        self.waited += 1
        return True
