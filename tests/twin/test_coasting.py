"""The engine's plain decode steps run inline while no event falls due (`Replica._coast`), and
long runs of them are costed as arrays (`Replica._stretch`): a run must be the same, to the
nanosecond and the last statistic, as one stepped through the event kernel one step at a
time."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import astuple, replace
from unittest.mock import patch

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from scoville.twin import engine as engine_module
from scoville.twin.admission import AdmissionPolicy
from scoville.twin.catalogue import load_catalogue
from scoville.twin.cluster import DisaggConfig, TwinConfig
from scoville.twin.costmodel import Parallel, SpecDecode, StepModel
from scoville.twin.engine import EngineConfig, Replica, Seq
from scoville.twin.kernel import Callback, EventKernel
from scoville.twin.simulate import sweep

CAT = load_catalogue()
SGLANG = EngineConfig(
    mix_prefill_decode=False,
    admission=AdmissionPolicy(
        reserve_init=0.7, reserve_floor=0.098, reserve_decay_steps=600, lag_steps=2,
        recv_interval=4,
    ),
)  # fmt: skip
TRTLLM = EngineConfig(
    chunked_prefill=False,
    admission=AdmissionPolicy(reserve_init=1.0, reserve_floor=1.0, batch_wait_iters=3,
                              batch_wait_ratio=0.5, lag_steps=1),
)  # fmt: skip
CASES = {
    "vLLM, sliding window, lengths in a range": (
        TwinConfig(CAT.get_hardware("H200"), CAT.get_model("gpt-oss-120b")), 2048, 256, 0.5
    ),
    "SGLang, MTP, attention DP": (
        TwinConfig(
            CAT.get_hardware("B200"), CAT.get_model("DeepSeek-R1"),
            Parallel(tp=8, ep=8, dp_attention=True, spec=SpecDecode(draft_tokens=2)),
            engine=SGLANG,
        ), 1024, 512, 0.8,
    ),
    "TensorRT-LLM, two replicas": (
        TwinConfig(
            CAT.get_hardware("H100"), CAT.get_model("Llama-3.1-8B"), replicas=2,
            router="least_loaded", engine=TRTLLM,
        ), 1024, 128, 1.0,
    ),
    "disaggregated, a KV pool that preempts": (
        TwinConfig(
            CAT.get_hardware("H200"), CAT.get_model("Llama-3.1-70B"), Parallel(tp=2),
            disagg=DisaggConfig(prefill_replicas=1, decode_replicas=1),
            engine=replace(EngineConfig(), max_num_seqs=256),
        ), 4096, 2048, 0.8,
    ),
}  # fmt: skip


@contextmanager
def _stepped() -> Iterator[None]:
    """Every step through the kernel: it is never quiet, so nothing coasts."""
    with patch.object(EventKernel, "quiet_through", lambda self, t_ns: False):
        yield


def _run(case: str) -> list[object]:
    cfg, isl, osl, ratio = CASES[case]
    points = sweep(cfg, isl, osl, (1, 8, 64), requests_per_point=24, range_ratio=ratio)
    return [
        (
            [(r.request_id, r.start_ns, r.chunk_ns, r.output_tokens, r.error) for r in p.records],
            sorted(p.extras.items()),
        )
        for p in points
    ]


@pytest.mark.parametrize("case", list(CASES))
def test_coasted_decode_steps_give_the_run_stepped_one_by_one(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    scheduled: list[int] = []
    schedule = EventKernel.schedule

    def counting(self: EventKernel, t_ns: int, fn: Callback) -> None:
        scheduled.append(t_ns)
        schedule(self, t_ns, fn)

    monkeypatch.setattr(EventKernel, "schedule", counting)
    coasted = _run(case)
    n_coasted = len(scheduled)
    with _stepped():
        stepped = _run(case)
    assert coasted == stepped
    # and the coasting did happen: the kernel scheduled far fewer events
    assert n_coasted < 0.5 * (len(scheduled) - n_coasted)


def test_the_kernel_is_quiet_only_before_its_next_event_and_within_its_run() -> None:
    k = EventKernel()
    seen: list[tuple[int, bool, bool, bool]] = []
    k.schedule(100, lambda t: None)
    k.schedule(50, lambda t: seen.append((t, k.quiet_through(99), k.quiet_through(100), False)))
    k.run()
    k.schedule(300, lambda t: None)
    k.schedule(200, lambda t: seen.append((t, k.quiet_through(250), k.quiet_through(260), True)))
    k.run(until_ns=250)
    # an event at the very instant is not quiet (it was scheduled first, so it fires first);
    # past the run's horizon nothing may be acted out either
    assert seen == [(50, True, False, False), (200, True, False, True)]
    assert k.quiet_through(299) and not k.quiet_through(300)  # outside a run: the heap alone
    assert k.quiet_until() == 299


def test_the_kernel_says_the_last_quiet_instant() -> None:
    k = EventKernel()
    seen: list[int | None] = []
    k.schedule(10, lambda t: seen.append(k.quiet_until()))  # nothing else: no limit
    k.run()
    k.schedule(500, lambda t: None)
    k.schedule(20, lambda t: seen.append(k.quiet_until()))  # the next event, less one
    k.run(until_ns=600)
    k.schedule(900, lambda t: None)
    k.schedule(650, lambda t: seen.append(k.quiet_until()))  # the run's horizon comes first
    k.run(until_ns=800)
    assert seen == [None, 499, 800]


SMALL = CAT.get_hardware("H200").model_copy(update={"hbm_gb": 80.0, "memory_reported_gb": None})


class _Watched(EventKernel):
    """An event kernel that notes the replica's state before each event it runs."""

    def __init__(self, seen: list[object]) -> None:
        super().__init__()
        self.seen = seen
        self.rep: Replica | None = None

    def schedule(self, t_ns: int, fn: Callback) -> None:
        def noted(t: int) -> None:
            rep = self.rep
            assert rep is not None
            self.seen.append(
                (t, len(rep.step_times), rep.kv_used, rep.sum_ctx, rep.prefix.cached_tokens,
                 rep._recv_count, rep.batch_wait.waited, astuple(rep.stats))
            )  # fmt: skip
            fn(t)

        super().schedule(t_ns, noted)


def _replica_run(
    engine: EngineConfig,
    arrivals: list[tuple[int, int, int, int]],
    seen: list[object] | None = None,
) -> object:
    """One replica fed `arrivals` (time in us, prompt blocks, output tokens, shared prefix);
    `seen` gets its state before each event."""
    kernel = EventKernel() if seen is None else _Watched(seen)
    rep = Replica("r", StepModel(SMALL, CAT.get_model("gpt-oss-120b"), Parallel()), kernel, engine)
    if isinstance(kernel, _Watched):
        kernel.rep = rep
    seqs = []
    for i, (t_us, blocks, out, prefix) in enumerate(arrivals):
        hashes = tuple(range(prefix * 100, prefix * 100 + blocks))
        seq = Seq(
            i, t_us * 1000, blocks * 512 + 7, out, prefix_hashes=hashes, prefix_block_tokens=512
        )
        seqs.append(seq)
        kernel.schedule(t_us * 1000, lambda t, s=seq: rep.submit(s, t))
    kernel.run()
    return (
        [(s.token_times(), s.cached_tokens, s.preemptions, s.end_ns, s.error) for s in seqs],
        rep.stats, rep.step_times, rep.prefix.cached_tokens, rep.kv_used,
    )  # fmt: skip


ENGINES = [EngineConfig(), SGLANG, TRTLLM, EngineConfig(prefix_cache_tokens=4096)]
# ten long prompts fill the small pool while they decode; later arrivals fall mid-stretch
STRETCHED = [(0, 24, 2000, 0)] * 10 + [(0, 2, 1500, 1), (300_000, 1, 300, 0), (900_000, 1, 40, 2)]


def _stretches(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, str]]:
    """Each stretch's steps, and what ended it, as runs from now on make them."""
    ends: list[tuple[int, str]] = []
    stretch = Replica._stretch

    def spy(rep: Replica, t_ns: int, n_dec: int, events: EventKernel) -> int:
        k0 = len(rep.step_times)
        t_end = stretch(rep, t_ns, n_dec, events)
        k = len(rep.step_times)
        if k > k0:
            cut = "finish" if k in rep.finish_at else "pool" if rep._overfull(n_dec) else "event"
            ends.append((k - k0, cut))
        return t_end

    monkeypatch.setattr(Replica, "_stretch", spy)
    return ends


@pytest.mark.parametrize("engine", ENGINES)
def test_a_stretch_costed_as_arrays_runs_as_its_steps_one_by_one(
    engine: EngineConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    ends = _stretches(monkeypatch)
    seen_stretched: list[object] = []
    seen_coasted: list[object] = []
    stretched = _replica_run(engine, STRETCHED, seen_stretched)
    monkeypatch.setattr(engine_module, "STRETCH_AFTER", 1 << 30)  # coast, never as arrays
    coasted = _replica_run(engine, STRETCHED, seen_coasted)
    with _stepped():
        stepped = _replica_run(engine, STRETCHED)
    assert stretched == coasted == stepped
    # the same events, each finding the replica as the coasting loop left it: the prefix
    # cache, the receive count, batch waiting and the statistics too
    assert seen_stretched == seen_coasted
    assert sum(n for n, _ in ends) > 1000  # and stretches did run


def test_stretches_end_at_a_finish_a_full_pool_and_an_arrival(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ends = _stretches(monkeypatch)
    steps = len(_replica_run(EngineConfig(), STRETCHED)[2])  # type: ignore[index]
    assert sum(n for n, _ in ends) > 0.5 * steps  # most steps ran in stretches
    # cut where the next step finishes a sequence, where the pool is full, and before an
    # arrival (the kernel's next event)
    assert {cut for _, cut in ends} == {"finish", "pool", "event"}


# (arrival in us, prompt in 512-token blocks, output tokens, shared prefix 1-3 or none)
ARRIVAL = st.tuples(
    st.integers(0, 400_000), st.integers(1, 24), st.integers(1, 600), st.integers(0, 3)
)


@settings(max_examples=30, deadline=None)
@example([(0, 24, 2000, 0)] * 10, EngineConfig())  # the pool fills while all decode: preemption
# a short prompt queued behind TensorRT-LLM's full reservation: batch waiting holds it for
# three steps at a time while the pool stays shut, and the decode steps coast meanwhile
@example([(0, 15, 2001, 0)] * 12 + [(0, 15, 3001, 0), (10, 1, 8000, 0)], TRTLLM)
@given(
    st.lists(ARRIVAL, min_size=1, max_size=40),
    st.sampled_from(ENGINES),
)  # fmt: skip
def test_any_arrivals_run_the_same_coasted_or_stepped(
    arrivals: list[tuple[int, int, int, int]], engine: EngineConfig
) -> None:
    seen_stretched: list[object] = []
    seen_coasted: list[object] = []
    stretched = _replica_run(engine, arrivals, seen_stretched)
    with patch.object(engine_module, "STRETCH_AFTER", 1 << 30):  # coast, never as arrays
        coasted = _replica_run(engine, arrivals, seen_coasted)
    with _stepped():
        stepped = _replica_run(engine, arrivals)
    assert stretched == coasted == stepped
    assert seen_stretched == seen_coasted
