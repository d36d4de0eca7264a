"""One serving replica in simulated time: continuous batching, chunked prefill, KV admission,
preemption and the prefix cache, stepping through `StepModel.cost`.

`scoville.twin.cluster` routes sequences to replicas; the replica schedules its own step ends
on a `Kernel` (its state and what is read off it: `scoville.twin.replica`). Token times are
kept per replica as one list of step-end times, and each sequence remembers which steps
produced its tokens (segments), so a decode step costs O(1) bookkeeping however large the
batch. Plain decode steps run inline while no event falls due (`Replica._coast`).
"""

from __future__ import annotations

import numpy as np

from scoville.twin.costmodel import StepCost
from scoville.twin.kernel import EventKernel
from scoville.twin.replica import ReplicaState, Role
from scoville.twin.seq import EngineConfig, ReplicaStats, Seq
from scoville.twin.stretch import decode_costs

__all__ = ["EngineConfig", "Replica", "ReplicaStats", "Role", "Seq"]


REJECT_BASE_NS = 2_000_000  # request parsing and validation before a 400 (2 ms)
REJECT_NS_PER_TOKEN = 1_000  # prompt tokenization, about 1 M tokens/s
# a coast tries to cost its steps as arrays after this many steps one by one, if at least
# STRETCH_MIN more can follow (below that, numpy's call overhead outweighs the saving), at
# most STRETCH_MAX at a time (an event may cut the stretch short: the rest is wasted)
STRETCH_AFTER, STRETCH_MIN, STRETCH_MAX = 4, 16, 1024


class Replica(ReplicaState):
    """A TP group serving one queue. `role` splits prefill and decode for disaggregation."""

    # -- admission -----------------------------------------------------------------------------

    def submit(self, seq: Seq, t_ns: int) -> None:
        """Queue a sequence (fresh, or with KV already computed when role == 'decode').

        A sequence that could never fit (context window, or the whole KV pool) ends at once
        with `seq.error` set, as a real server rejects it."""
        if seq.ctx_target == 0:
            seq.ctx_target = seq.prompt_tokens
        if self.refuses(seq):
            # A real server tokenizes and validates before it rejects: a fixed cost plus about
            # a microsecond per prompt token. (A zero-time rejection would also let a closed
            # loop of doomed requests spin without the clock ever moving.)
            reject_ns = REJECT_BASE_NS + REJECT_NS_PER_TOKEN * seq.prompt_tokens
            self.kernel.schedule(t_ns + reject_ns, lambda t: self._finish(seq, t))
            return
        if self._busy:  # the schedules already formed (overlap, client round trip) miss it
            seq.ready_step = len(self.step_times) + self.cfg.admission.lag_steps
            if self.cfg.admission.recv_interval > 1:
                self.inbox.append(seq)  # taken in at a later receive (`_take_in`)
                return
        self.waiting.append(seq)
        if not (self._busy or self._start_pending):
            # the idle scheduler forms its batch once every arrival of this instant is queued
            # (a batch of simultaneous arrivals, not the first alone); a late submission
            # (wall-clock serving) never starts a step before the last ended
            self._start_pending = True
            self.kernel.schedule(max(t_ns, self._free_at_ns), self._start_idle)

    def _start_idle(self, t_ns: int) -> None:
        self._start_pending = False
        assert not self._busy  # no step ends while an idle replica's first step is pending
        self._start_step(t_ns)

    def _take_in(self, next_step: int) -> None:
        """SGLang's receive skipper: arrivals join the queue only when the weighted count of
        steps since the last take reaches `recv_interval` (or when nothing else would run)."""
        due = self._recv_count >= self.cfg.admission.recv_interval
        if due:
            self._recv_count = 0  # a take is attempted whether or not anything arrived
        idle = not (self.running or self.prefilling)  # an idle loop takes them within ms
        if not (due or idle):
            return
        while self.inbox and (idle or self.inbox[0].ready_step <= next_step):
            self.waiting.append(self.inbox.popleft())

    def _admit(self, budget: int, next_step: int) -> tuple[list[tuple[Seq, int]], int]:
        """Move waiting sequences in (FCFS) while KV, seat and token budget allow."""
        chunks: list[tuple[Seq, int]] = []
        cfg = self.cfg
        ratio = cfg.admission.reserve_ratio(next_step - self._reserve_from_step)
        n_run = len(self.running)
        if self.batch_wait.hold(self.waiting, n_run, next_step, cfg.max_num_batched_tokens):
            return [], budget
        while self.waiting and budget > 0:
            seq = self.waiting[0]
            need = self._fit(seq, budget, next_step, ratio, bool(chunks))
            if need is None:
                break
            self.waiting.popleft()
            self.kv_used += need
            seq.kv_charge = need
            out_left = seq.max_tokens - seq.emitted
            if self.role == "decode":
                self._enter_decode(seq, next_step, base=seq.emitted, charged_from=next_step)
                self._release_held(seq, next_step)
                budget -= 1
                continue
            if cfg.prefix_caching and seq.preemptions == 0:  # every prompt is a query (vLLM)
                seq.cached_tokens = self.prefix.match(
                    seq.prefix_hashes, seq.prefix_block_tokens, seq.prompt_tokens
                )
            seq.computed = seq.cached_tokens if seq.preemptions == 0 else 0
            self.prefilling.append(seq)
            self.ledger.add_prefill(out_left)
            c = min(seq.ctx_target - seq.computed, budget)
            chunks.append((seq, c))
            budget -= c
        self._shrink_prefix()
        return chunks, budget

    def _fit(self, seq: Seq, budget: int, next_step: int, ratio: float, after: bool) -> int | None:
        """The KV `seq` takes if it can enter at `next_step`, or None where FCFS admission
        stops at it: no seat, not ready while others run (or after a prompt admitted this step,
        `after`), a whole prompt over the budget, or no KV for it and the reserve."""
        cfg = self.cfg
        if len(self.running) + len(self.prefilling) >= cfg.max_num_seqs:
            return None
        if seq.ready_step > next_step and (self.running or self.prefilling or after):
            return None
        decode_only = self.role == "decode"
        if not (decode_only or cfg.chunked_prefill) and not self._fits_whole(seq, budget):
            return None
        kv_tokens = seq.ctx_target - (1 if decode_only else 0)
        need = kv_tokens + self._swa_charge(kv_tokens)
        out_left = seq.max_tokens - seq.emitted
        reserve = ratio * (self.ledger.tokens_left(next_step) + out_left) if ratio else 0
        return None if self.kv_used + need + reserve > self.kv_capacity else need

    # -- stepping ------------------------------------------------------------------------------

    def _start_step(self, t_ns: int) -> None:
        next_step = len(self.step_times)
        self._take_in(next_step)
        while self.running and self._overfull(len(self.running)):
            self._preempt(next(reversed(self.running)), next_step)
        n_dec = len(self.running)
        budget = self.cfg.max_num_batched_tokens - n_dec
        chunks: list[tuple[Seq, int]] = []
        for seq in self.prefilling:
            if budget <= 0:
                break
            c = min(seq.ctx_target - seq.computed, budget)
            chunks.append((seq, c))
            budget -= c
        more, budget = self._admit(budget, next_step)
        chunks.extend(more)
        n_dec = len(self.running)  # decode-only admissions join this step
        if n_dec == 0 and not chunks:
            self._busy = False
            return
        self._busy = True
        cost = self._cost(n_dec, chunks)
        self.kernel.schedule(self._launch(t_ns, n_dec, chunks, cost), self._end_step)

    def _launch(self, t_ns: int, n_dec: int, chunks: list[tuple[Seq, int]], cost: StepCost) -> int:
        """Charge the step's decode KV and log its cost; returns when it ends."""
        self.kv_used += n_dec
        occ = self.kv_used / self.kv_capacity if self.kv_capacity else 0.0
        self.stats.add(cost, occ)
        self._chunks, self._n_dec = chunks, n_dec
        t_end = _ends_at(t_ns, cost)
        if self.step_log is not None:
            self.step_log.append(
                (t_end, cost.compute_s, cost.memory_s, cost.comm_s, cost.overhead_s, occ)
            )
        return t_end

    def _cost(self, n_dec: int, chunks: list[tuple[Seq, int]]) -> StepCost:
        """The step's cost; without mixing, a prefill batch runs before the decode batch and
        the decoding sequences wait for it (SGLang's default), so the two costs add."""
        if self.cfg.mix_prefill_decode or not chunks or not n_dec:
            return self.model.cost(self._batch(n_dec, chunks))
        p = self.model.cost(self._batch(0, chunks))
        return p.then(self.model.cost(self._batch(n_dec, [])))

    def _end_step(self, t_ns: int) -> None:
        self._close_step(t_ns)
        if self._events is not None:
            t_ns = self._coast(t_ns, self._events)
        self._start_step(t_ns)

    def _coast(self, t_ns: int, events: EventKernel) -> int:
        """Run plain decode steps inline, without the kernel, while nothing could change the
        batch: no sequence is admitted (none waits, or the queue's head cannot enter), prefills
        or streams, none finishes at the step and none is preempted, and no event falls due
        before the step ends (`quiet_through`). Each step has the side effects `_start_step`
        and `_end_step` give it; a long run of them with none waiting is costed as arrays
        (`_stretch`). Returns the last step's end."""
        n_dec = len(self.running)
        if not n_dec or self.inbox or self.prefilling or self.streaming:
            return t_ns
        cfg, queue = self.cfg, self.waiting
        budget = cfg.max_num_batched_tokens - n_dec
        steps, stretch = 0, True
        while True:
            k = len(self.step_times)
            if k in self.finish_at or self._overfull(n_dec):
                break  # a finish or a preemption: the step `_start_step` forms
            if queue and budget > 0:
                ratio = cfg.admission.reserve_ratio(k - self._reserve_from_step)
                if self._fit(queue[0], budget, k, ratio, False) is not None:
                    break  # an admission: the step `_start_step` forms
            elif stretch and steps >= STRETCH_AFTER and not queue:
                k0 = len(self.step_times)
                t_ns = self._stretch(t_ns, n_dec, events)
                stretch = len(self.step_times) - k0 == STRETCH_MAX  # a whole one: try again
                continue
            cost = self.model.cost(self._batch(n_dec, []))
            t_end = _ends_at(t_ns, cost)
            if not events.quiet_through(t_end):
                break
            self._take_in(k)  # its receive count only: the inbox is empty
            if not self.batch_wait.hold(queue, n_dec, k, cfg.max_num_batched_tokens):
                self._shrink_prefix()  # as `_admit` does once no prompt can enter
            t_ns = self._launch(t_ns, n_dec, [], cost)
            self._tick(t_ns)  # all `_close_step` does for a step with no chunk or finish
            steps += 1
        return t_ns

    def _stretch(self, t_ns: int, n_dec: int, events: EventKernel) -> int:
        """The coast's next steps at once (`STRETCH_MAX` at most), while none waits, if at
        least `STRETCH_MIN` remain before a finish or a full pool: their costs as arrays
        (`twin.stretch`), cut at the first that would end after the kernel's next event, then
        each step's side effects as the loop gives them, summed in order. Returns the last
        step's end."""
        k0, kv0 = len(self.step_times), self.kv_used
        n = min(STRETCH_MAX, (self.kv_capacity - kv0) // n_dec)  # before the pool is full
        if self.finish_at:
            n = min(n, min(self.finish_at) - k0)
        w = self.model.window_tokens
        if n < STRETCH_MIN or self.step_log is not None or (w and self.n_short):
            return t_ns  # short, logged step by step, or windows still filling: the loop
        verify = self.sum_verify if self._spec is not None else None
        ctx = self.sum_ctx + n_dec * np.arange(n, dtype=np.int64)
        cost = decode_costs(self.model, n_dec, ctx, n_dec * w, verify)
        total = np.asarray(cost.total_s)
        ends = t_ns + np.cumsum(np.maximum(1, (total * 1e9).astype(np.int64)))
        last = events.quiet_until()
        if last is not None:
            n = int(np.searchsorted(ends[:n], last, side="right"))
        if not n:
            return t_ns
        # `_take_in` then `_tick`, n times: a due count restarts, then each step counts one
        interval = max(1, self.cfg.admission.recv_interval)
        r = 0 if self._recv_count >= interval else self._recv_count
        self._recv_count = (r + n - 1) % interval + 1
        # with none waiting, batch waiting only resets, and the prefix shrinks to the last
        # step's limit (the pool only fills along the stretch)
        self.batch_wait.hold(self.waiting, n_dec, k0, self.cfg.max_num_batched_tokens)
        self._shrink_prefix(kv0 + (n - 1) * n_dec)
        self.kv_used = kv0 + n * n_dec
        used = kv0 + n_dec * np.arange(1, n + 1, dtype=np.int64)
        self.stats.add_steps(cost, used / self.kv_capacity, n)  # `_launch`'s, n times
        self._chunks, self._n_dec = [], n_dec
        self.step_times.extend(ends[:n].tolist())
        self._free_at_ns = t_end = self.step_times[-1]
        self.sum_ctx += n * n_dec
        return t_end

    def _overfull(self, n_dec: int) -> bool:
        """Whether the KV pool cannot take one more token for each of `n_dec` decoding
        sequences (the step must preempt first)."""
        return self.kv_used + n_dec > self.kv_capacity

    def _tick(self, t_ns: int) -> int:
        """A step ends at `t_ns`: the replica's clock, its receive count and its running
        sequences' contexts move on; returns the step's index."""
        k = len(self.step_times)
        self.step_times.append(t_ns)
        self._free_at_ns = t_ns
        self._recv_count += self.cfg.admission.recv_weight(bool(self._chunks))
        self.sum_ctx += self._n_dec
        return k

    def _close_step(self, t_ns: int) -> None:
        """The step that ends at `t_ns`: its tokens, its finished prefills and sequences."""
        k = self._tick(t_ns)
        for seq in self._held:  # handed-over first tokens, streamed ahead of this step's
            assert seq.on_token is not None
            seq.on_token(t_ns, seq.held_tokens)
            seq.held_tokens = 0
        self._held.clear()
        for seq in self.streaming:
            if seq.on_token is not None:
                seq.on_token(t_ns, 1)
        for seq, c in self._chunks:
            seq.computed += c
            if seq.computed >= seq.ctx_target:
                self._prefill_done(seq, k, t_ns)
        for seq in self.finish_at.pop(k, ()):
            del self.running[seq]
            self.streaming.pop(seq, None)
            self.ledger.remove_decode(seq.finish_step)
            self.sum_ctx -= seq.prompt_tokens + seq.max_tokens
            self._verify(seq, -1.0)
            self.kv_used -= seq.kv_charge + (k + 1 - seq.kv_decode_from)
            seq.segments.append((self.step_times, seq.seg_start, k + 1))
            seq.emitted = seq.max_tokens
            self._finish(seq, t_ns)

    def _prefill_done(self, seq: Seq, k: int, t_ns: int) -> None:
        self.prefilling.remove(seq)
        self.ledger.remove_prefill(seq.max_tokens - seq.emitted)
        if seq.preemptions == 0 and seq.prefix_hashes and self.cfg.prefix_caching:
            self.prefix.insert(seq.prefix_hashes, seq.prefix_block_tokens)
        seq.emitted += 1
        if self.role == "prefill" and seq.emitted < seq.max_tokens:
            # The client's first token comes from the decode replica: Dynamo's frontend keeps
            # the prefill worker's output (it only carries the KV hand-off), TensorRT-LLM's
            # generation-only request returns it with its first step, SGLang's decode server
            # streams it once the request holds decode KV. So the decode queue counts in TTFT.
            seq.held_tokens = 1
        elif seq.on_token is not None:
            seq.on_token(t_ns, 1)
        if self.role == "prefill" or seq.emitted >= seq.max_tokens:
            self.kv_used -= seq.kv_charge
            if not seq.held_tokens:
                seq.segments.append((self.step_times, k, k + 1))
            if seq.emitted >= seq.max_tokens:
                self._finish(seq, t_ns)
            elif self.on_prefilled is not None:
                self.on_prefilled(seq, t_ns)
            return
        self._enter_decode(seq, k, base=seq.emitted - 1, charged_from=k + 1)

    def _release_held(self, seq: Seq, step: int) -> None:
        """A handed-over sequence's held first token reaches the client with the decode
        replica's first step for it (streamed then by `_end_step`)."""
        if seq.held_tokens:
            seq.segments.append((self.step_times, step, step + 1))
            if seq.on_token is None:
                seq.held_tokens = 0
            else:
                self._held.append(seq)

    def _enter_decode(self, seq: Seq, first_step: int, base: int, charged_from: int) -> None:
        seq.seg_start, seq.seg_base, seq.kv_decode_from = first_step, base, charged_from
        seq.finish_step = first_step + (seq.max_tokens - base) - 1
        self.running[seq] = None
        if seq.on_token is not None:
            self.streaming[seq] = None
        self.finish_at.setdefault(seq.finish_step, []).append(seq)
        self.ledger.add_decode(seq.finish_step)
        ctx = seq.prompt_tokens + seq.emitted
        self.sum_ctx += ctx
        self._verify(seq, 1.0)
        if ctx < self.model.window_tokens:
            self.n_short += 1

    def _preempt(self, seq: Seq, next_step: int) -> None:
        """Recompute-style preemption: drop the KV, requeue at the front."""
        del self.running[seq]
        self.streaming.pop(seq, None)
        self.finish_at[seq.finish_step].remove(seq)
        self.ledger.remove_decode(seq.finish_step)
        self._reserve_from_step = next_step  # a retraction resets the reserve ratio
        emitted = seq.seg_base + (next_step - seq.seg_start)
        seq.segments.append((self.step_times, seq.seg_start, next_step))
        self.sum_ctx -= seq.prompt_tokens + emitted
        self._verify(seq, -1.0)
        self.kv_used -= seq.kv_charge + (next_step - seq.kv_decode_from)
        seq.emitted = emitted
        seq.ctx_target = seq.prompt_tokens + emitted
        seq.computed = 0
        seq.preemptions += 1
        self.stats.preemptions += 1
        self.waiting.appendleft(seq)

    def _finish(self, seq: Seq, t_ns: int) -> None:
        seq.end_ns = t_ns
        if seq.on_done is not None:
            seq.on_done(seq)


def _ends_at(t_ns: int, cost: StepCost) -> int:
    """When a step started at `t_ns` ends: its cost in whole nanoseconds, at least one."""
    return t_ns + max(1, int(cost.total_s * 1e9))
