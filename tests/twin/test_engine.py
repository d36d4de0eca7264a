"""The event kernel and engine: exact token counts, scheduling behaviour, physical sanity."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoville.client.plan import length_requests
from scoville.client.seam import GenerateRequest
from scoville.records.model import ErrorKind, RequestRecord
from scoville.twin.catalogue import load_catalogue
from scoville.twin.cluster import Cluster, DisaggConfig, TwinConfig
from scoville.twin.costmodel import Parallel, StepBatch, StepModel
from scoville.twin.engine import EngineConfig, Seq
from scoville.twin.fast import run_point
from scoville.twin.kernel import EventKernel
from scoville.twin.simulate import sweep

CAT = load_catalogue()


def _cfg(hw: str = "H200", model: str = "gpt-oss-120b", **kw: object) -> TwinConfig:
    return TwinConfig(CAT.get_hardware(hw), CAT.get_model(model), **kw)  # type: ignore[arg-type]


def _measured(res_records: list[RequestRecord]) -> list[RequestRecord]:
    return [r for r in res_records if r.phase == "measure"]


def _median(xs: list[float]) -> float:
    return sorted(xs)[len(xs) // 2]


def _tpot_s(r: RequestRecord) -> float:
    return (r.chunk_ns[-1] - r.chunk_ns[0]) / (len(r.chunk_ns) - 1) / 1e9


def _ttft_s(r: RequestRecord) -> float:
    return (r.chunk_ns[0] - r.start_ns) / 1e9


def test_kernel_fires_in_time_then_insertion_order() -> None:
    k = EventKernel()
    seen: list[tuple[int, str]] = []
    k.schedule(5, lambda t: seen.append((t, "b")))
    k.schedule(5, lambda t: seen.append((t, "c")))
    k.schedule(1, lambda t: (seen.append((t, "a")), k.schedule(5, lambda u: seen.append((u, "d")))))
    assert k.run() == 5
    assert seen == [(1, "a"), (5, "b"), (5, "c"), (5, "d")]
    with pytest.raises(ValueError, match="past"):
        k.schedule(4, lambda t: None)


def test_records_have_exact_tokens_and_ordered_times() -> None:
    res = sweep(_cfg(), 2048, 64, [1, 8], requests_per_point=16, warmup_per_point=2)
    for point in res:
        assert len(point.records) == 18
        for r in point.records:
            assert r.ok and r.output_tokens == 64 and len(r.chunk_ns) == 64
            assert r.chunk_tokens == (1,) * 64
            assert r.start_ns <= r.chunk_ns[0]
            assert list(r.chunk_ns) == sorted(r.chunk_ns) and r.chunk_ns[-1] == r.end_ns
        m = _measured(point.records)
        assert point.window.sent == 16 == len(m)
        assert point.window.start_ns == min(r.start_ns for r in m)
        assert point.window.end_ns == max(r.end_ns for r in m)
    assert res[1].window.start_ns > res[0].window.end_ns  # points follow one another


def test_single_request_timing_matches_the_step_model() -> None:
    cfg = _cfg(model="Llama-3.1-8B")
    sm = StepModel(cfg.hardware, cfg.model, Parallel())
    (r,) = run_point(cfg, length_requests(1, 1000, 3), "c1", concurrency=1).records
    prefill = sm.cost(StepBatch(prefill_tokens=1000, prefill_pairs=1000 * 1001 / 2, n_sampled=1))
    d1 = sm.cost(StepBatch(n_decode=1, decode_ctx_tokens=1001, n_sampled=1))
    d2 = sm.cost(StepBatch(n_decode=1, decode_ctx_tokens=1002, n_sampled=1))
    assert r.chunk_ns[0] == int(prefill.total_s * 1e9)
    assert r.chunk_ns[1] - r.chunk_ns[0] == int(d1.total_s * 1e9)
    assert r.chunk_ns[2] - r.chunk_ns[1] == int(d2.total_s * 1e9)


def test_long_prompt_is_chunked_under_the_token_budget() -> None:
    cfg = _cfg(model="Llama-3.1-8B", engine=EngineConfig(max_num_batched_tokens=512))
    (r,) = run_point(cfg, length_requests(1, 2000, 2), "c1", concurrency=1).records
    whole = run_point(
        _cfg(model="Llama-3.1-8B"), length_requests(1, 2000, 2), "c1", concurrency=1
    ).records[0]
    assert _ttft_s(r) > _ttft_s(whole)  # 4 chunks pay 4 x the per-step weights and overhead


def test_decode_never_beats_the_weight_streaming_floor() -> None:
    cfg = _cfg()
    sm = StepModel(cfg.hardware, cfg.model, Parallel())
    res = sweep(cfg, 1024, 32, [1, 4, 16], requests_per_point=16, warmup_per_point=0)
    floor_s = (sm.dense_bytes + sm.lm_head_bytes) / sm.bw
    for point in res:
        for r in point.records:
            gaps = [b - a for a, b in zip(r.chunk_ns, r.chunk_ns[1:], strict=False)]
            assert min(gaps) / 1e9 >= floor_s


def test_throughput_per_gpu_rises_with_concurrency_until_kv_binds() -> None:
    res = sweep(
        _cfg(),
        8192,
        256,
        [1, 2, 4, 8, 16, 32, 64, 128, 256],
        requests_per_point=None,
        warmup_per_point=0,
    )
    tputs = []
    for p in res:
        m = _measured(p.records)
        dur_s = (p.window.end_ns - p.window.start_ns) / 1e9
        tputs.append(
            (sum(r.input_tokens + r.output_tokens for r in m) / dur_s, p.extras["kv_occupancy_max"])
        )
    unbound = [t for t, occ in tputs if occ < 0.999]
    assert len(unbound) >= 6
    assert all(b >= a for a, b in itertools.pairwise(unbound))
    assert res[-1].extras["kv_occupancy_max"] > 0.99  # 256 x 8.4k tokens overflow one H200


def test_kv_pressure_preempts_and_still_delivers_every_token() -> None:
    small = CAT.get_hardware("H200").model_copy(update={"hbm_gb": 80.0, "memory_reported_gb": None})
    cfg = TwinConfig(small, CAT.get_model("gpt-oss-120b"))
    res = run_point(cfg, length_requests(64, 4096, 512), "c64", concurrency=64)
    assert res.extras["preemptions"] > 0
    assert res.extras["kv_occupancy_max"] == pytest.approx(1.0, abs=0.01)
    for r in res.records:
        assert r.ok and len(r.chunk_ns) == 512
        assert list(r.chunk_ns) == sorted(r.chunk_ns)


def test_request_larger_than_the_window_is_rejected() -> None:
    (r,) = run_point(
        _cfg(model="Qwen3-30B-A3B"), length_requests(1, 40000, 2000), "c1", concurrency=1
    ).records
    assert r.error == ErrorKind.CONTEXT_OVERFLOW and not r.chunk_ns


def test_prefix_cache_hits_skip_prefill() -> None:
    hashes = tuple(range(16))
    reqs = [
        GenerateRequest(
            f"r{i}", "completions", 8192, 8, prompt="", prefix_hashes=hashes, block_size_tokens=512
        )
        for i in range(4)
    ]
    res = run_point(_cfg(), reqs, "c1", concurrency=1)
    first, *rest = res.records
    assert first.cached_tokens == 0
    assert all(r.cached_tokens == 8191 for r in rest)  # one token is always recomputed
    assert all(_ttft_s(r) < _ttft_s(first) / 5 for r in rest)
    assert res.extras["prefix_hit_rate"] == pytest.approx(3 * 8191 / (4 * 8192))
    off = replace(_cfg(), engine=EngineConfig(prefix_caching=False))
    assert all(r.cached_tokens == 0 for r in run_point(off, reqs, "c1", concurrency=1).records)


def test_session_router_is_sticky_and_round_robin_spreads() -> None:
    cl = Cluster(_cfg(replicas=4, router="session"), EventKernel())
    picks = {cl._route(cl.entry, Seq(i, 0, 10, 1, session="alice")).name for i in range(8)}
    assert len(picks) == 1
    rr = Cluster(_cfg(replicas=4), EventKernel())
    assert [rr._route(rr.entry, Seq(i, 0, 10, 1)).name for i in range(5)] == [
        "r0",
        "r1",
        "r2",
        "r3",
        "r0",
    ]


def test_replicas_multiply_throughput_and_accelerators() -> None:
    one = run_point(_cfg(), length_requests(32, 1024, 64), "c16", concurrency=16)
    two = run_point(_cfg(replicas=2), length_requests(32, 1024, 64), "c16", concurrency=16)
    assert two.extras["n_accelerators"] == 2
    assert (two.window.end_ns - two.window.start_ns) < (one.window.end_ns - one.window.start_ns)


def test_disaggregation_lowers_tpot_and_adds_kv_transfer_to_ttft() -> None:
    agg = run_point(_cfg(replicas=2), length_requests(96, 8192, 256), "c32", concurrency=32)
    dis = run_point(
        _cfg(disagg=DisaggConfig(1, 1)), length_requests(96, 8192, 256), "c32", concurrency=32
    )
    assert dis.extras["n_accelerators"] == agg.extras["n_accelerators"] == 2
    tpot_agg = _median([_tpot_s(r) for r in agg.records])
    tpot_dis = _median([_tpot_s(r) for r in dis.records])
    assert tpot_dis < 0.8 * tpot_agg  # decode no longer waits behind prefill chunks
    # the client's first token comes from the decode replica: it waits for the KV transfer
    # (8192 x 73,728 B over NVLink, 1.68 ms) and the decode step, and arrives with the 2nd
    transfer_s = 8192 * 73_728 / (450e9 * 0.8)
    first_agg = min(_ttft_s(r) for r in agg.records)
    first_dis = min(_ttft_s(r) for r in dis.records)
    assert first_dis > first_agg + transfer_s
    assert all(r.chunk_ns[1] == r.chunk_ns[0] for r in dis.records)


def test_open_loop_sends_at_the_given_times() -> None:
    arrivals = [0, 10_000_000, 20_000_000, 500_000_000]
    res = run_point(
        _cfg(model="Llama-3.1-8B"), length_requests(4, 512, 8), "r", arrival_ns=arrivals, start_ns=7
    )
    assert [r.start_ns for r in res.records] == [7 + t for t in arrivals]
    assert res.window.mode == "rate"
    assert res.window.level == pytest.approx(3 / 0.5)  # 3 gaps over 0.5 s
    assert all(len(r.chunk_ns) == 8 for r in res.records)


@settings(max_examples=40, deadline=None)
@given(
    lengths=st.lists(
        st.tuples(st.integers(1, 3000), st.integers(1, 2000)), min_size=1, max_size=24
    ),
    hbm_gb=st.sampled_from([75.0, 80.0, 141.0]),  # 75 GB leaves ~9k KV tokens: preemption
    budget=st.sampled_from([256, 2048, 8192]),
    disagg=st.booleans(),
)
def test_engine_accounting_balances_under_any_load(
    lengths: list[tuple[int, int]], hbm_gb: float, budget: int, disagg: bool
) -> None:
    """Every sequence finishes with exactly its tokens; KV and context sums return to zero."""
    hw = CAT.get_hardware("H200").model_copy(update={"hbm_gb": hbm_gb, "memory_reported_gb": None})
    cfg = TwinConfig(
        hw,
        CAT.get_model("gpt-oss-120b"),
        engine=EngineConfig(max_num_batched_tokens=budget, max_num_seqs=8),
        disagg=DisaggConfig(1, 1) if disagg else None,
    )
    kernel = EventKernel()
    cluster = Cluster(cfg, kernel)
    done: list[Seq] = []
    for i, (isl, osl) in enumerate(lengths):
        seq = Seq(i, 0, isl, osl, on_done=done.append)
        kernel.schedule(i * 1_000_000, lambda t, s=seq: cluster.submit(s, t))
    kernel.run()
    assert sorted(s.rid for s in done) == list(range(len(lengths)))
    for s in done:
        times = s.token_times()
        assert s.error is None and len(times) == s.max_tokens
        assert times == sorted(times) and times[0] >= s.arrival_ns
    for r in cluster.replicas:
        assert r.kv_used == 0 and r.sum_ctx == 0
        assert not r.running and not r.prefilling and not r.waiting


def test_range_ratio_draws_seeded_lengths_within_bounds() -> None:
    a = length_requests(200, 1000, 100, range_ratio=0.8, seed=3)
    b = length_requests(200, 1000, 100, range_ratio=0.8, seed=3)
    assert [(r.input_tokens, r.max_tokens) for r in a] == [
        (r.input_tokens, r.max_tokens) for r in b
    ]
    assert all(800 <= r.input_tokens <= 1000 and 80 <= r.max_tokens <= 100 for r in a)
    assert len({r.input_tokens for r in a}) > 50
    res = run_point(_cfg(model="Llama-3.1-8B"), a[:20], "c4", concurrency=4)
    assert [r.output_tokens for r in res.records] == [r.max_tokens for r in a[:20]]
