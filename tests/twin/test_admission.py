"""Admission per framework: KV reserved for future output, the scheduling lag of an arrival,
and what they do to time to first token under load."""

from __future__ import annotations

from dataclasses import replace

import pytest

from scoville.client.plan import length_requests
from scoville.errors import TargetError
from scoville.twin.admission import AdmissionPolicy, BatchWait, OutputLedger
from scoville.twin.catalogue import load_catalogue
from scoville.twin.cluster import TwinConfig
from scoville.twin.costmodel import Parallel, StepModel
from scoville.twin.engine import EngineConfig, Replica, Seq
from scoville.twin.fast import run_point
from scoville.twin.free_params import Owner
from scoville.twin.kernel import EventKernel
from scoville.twin.options import TwinOptions
from scoville.twin.profiles import ProfileBook
from scoville.twin.target import parse_twin_url

CAT = load_catalogue()
SGLANG = AdmissionPolicy(reserve_init=0.7, reserve_floor=0.098, reserve_decay_steps=600)


def test_sglang_ratio_decays_linearly_to_its_floor() -> None:
    assert SGLANG.reserve_ratio(0) == pytest.approx(0.7)
    assert SGLANG.reserve_ratio(300) == pytest.approx(0.399)  # halfway: 0.7 - 0.301
    assert SGLANG.reserve_ratio(600) == pytest.approx(0.098)
    assert SGLANG.reserve_ratio(5000) == pytest.approx(0.098)
    assert AdmissionPolicy(reserve_init=1.0, reserve_floor=1.0).reserve_ratio(77) == 1.0


def test_ledger_counts_output_still_to_come() -> None:
    ledger = OutputLedger()
    ledger.add_prefill(100)  # a prompt being prefilled, 100 tokens to emit
    ledger.add_decode(10)  # decoding, last token at step 10
    ledger.add_decode(20)
    # from step 5: 100 + (10 - 5 + 1) + (20 - 5 + 1)
    assert ledger.tokens_left(5) == 122
    ledger.remove_decode(10)
    ledger.remove_prefill(100)
    assert ledger.tokens_left(20) == 1


def _replica(policy: AdmissionPolicy) -> tuple[Replica, EventKernel]:
    cfg = TwinConfig(CAT.get_hardware("H200"), CAT.get_model("Llama-3.1-8B"))
    sm = StepModel(cfg.hardware, cfg.model, Parallel(), cfg.efficiency)
    kernel = EventKernel()
    return Replica("r0", sm, kernel, EngineConfig(admission=policy)), kernel


def _late_arrival(
    policy: AdmissionPolicy, first_tokens: int, at_step: int
) -> tuple[Replica, Seq, Seq]:
    """A (100-token prompt, `first_tokens` out) runs alone; B (100 in, 5 out) arrives as step
    `at_step - 1` ends (step 0 prefills A, the next steps decode it)."""
    replica, kernel = _replica(policy)
    late = Seq(1, 0, 100, 5)

    def on_token(t_ns: int, _n: int) -> None:
        if len(replica.step_times) == at_step and late.arrival_ns == 0:
            late.arrival_ns = t_ns
            replica.submit(late, t_ns)

    first = Seq(0, 0, 100, first_tokens, on_token=on_token)
    kernel.schedule(0, lambda t: replica.submit(first, t))
    kernel.run()
    assert len(late.token_times()) == 5 and not replica.inbox and replica.load() == 0
    return replica, first, late


@pytest.mark.parametrize(("lag", "first_step"), [(0, 3), (1, 4), (2, 5)])
def test_an_arrival_during_a_busy_replica_waits_lag_steps(lag: int, first_step: int) -> None:
    replica, first, late = _late_arrival(AdmissionPolicy(lag_steps=lag), 50, at_step=3)
    assert first.token_times()[0] == replica.step_times[0]  # an idle replica has no lag
    assert late.token_times()[0] == replica.step_times[first_step]


@pytest.mark.parametrize(("interval", "first_step"), [(1, 3), (5, 6), (30, 31)])
def test_sglang_takes_in_arrivals_only_every_recv_interval_decode_steps(
    interval: int, first_step: int
) -> None:
    """A's prefill (step 0) weighs 1000, so step 1 takes in; then each decode step counts 1:
    B, arriving as step 2 ends, joins at the start of step 1 + interval."""
    replica, _, late = _late_arrival(AdmissionPolicy(recv_interval=interval), 50, at_step=3)
    assert late.token_times()[0] == replica.step_times[first_step]


def test_an_arrival_waiting_to_be_taken_in_is_not_stranded_when_the_replica_idles() -> None:
    """B arrives as A's second step ends; A finishes in its third step, long before the count
    is due: the idle loop takes B in at once instead of leaving it in the inbox."""
    replica, _, late = _late_arrival(AdmissionPolicy(recv_interval=1000), 3, at_step=2)
    assert late.token_times()[0] == replica.step_times[3]  # right after A's last token


def _three_requests(policy: AdmissionPolicy) -> tuple[Replica, list[Seq]]:
    """Three 300-token prompts with 100 tokens each arrive at once on a 1,000-token pool:
    the prompts fit together (900), prompt + output of all three (1,200) do not."""
    replica, kernel = _replica(policy)
    replica.kv_capacity = 1000
    seqs = [Seq(i, 0, 300, 100) for i in range(3)]
    for s in seqs:
        kernel.schedule(0, lambda t, s=s: replica.submit(s, t))
    kernel.run()
    return replica, seqs


def test_full_reservation_queues_where_on_demand_admission_preempts() -> None:
    """TensorRT-LLM's GUARANTEED_NO_EVICT reserves prompt + max_tokens (400 each): two fit,
    the third waits for the first to finish, nothing is evicted. vLLM-style admission takes
    all three at once and must preempt when their outputs outgrow the pool."""
    reserved, (a, _b, c) = _three_requests(AdmissionPolicy(1.0, 1.0))
    assert reserved.stats.preemptions == 0
    assert c.token_times()[0] > a.token_times()[-1]
    on_demand, (a, _b, c) = _three_requests(AdmissionPolicy())
    assert on_demand.stats.preemptions > 0
    assert c.token_times()[0] == a.token_times()[0]  # all three prefilled in the first step
    for s in (a, c):
        assert len(s.token_times()) == 100


def _small_h200() -> TwinConfig:
    small = CAT.get_hardware("H200").model_copy(update={"hbm_gb": 80.0, "memory_reported_gb": None})
    return TwinConfig(small, CAT.get_model("gpt-oss-120b"))


def test_ledger_and_kv_return_to_zero_with_sglang_reservation() -> None:
    cfg = replace(_small_h200(), engine=EngineConfig(admission=SGLANG))
    kernel = EventKernel()
    replica = Replica("r0", cfg.step_model(), kernel, cfg.engine)
    done: list[Seq] = []
    for i in range(40):
        seq = Seq(i, 0, 3000 + 37 * i, 300 + 11 * i, on_done=done.append)
        kernel.schedule(i * 2_000_000, lambda t, s=seq: replica.submit(s, t))
    kernel.run()
    assert len(done) == 40 and all(len(s.token_times()) == s.max_tokens for s in done)
    assert replica.kv_used == 0 and replica.ledger.tokens_left(len(replica.step_times)) == 0
    assert replica.ledger.n_decoding == 0


def test_framework_profiles_choose_the_admission_policy() -> None:
    trt = parse_twin_url("twin:H200/gpt-oss-120b?framework=dynamo-trt")
    vllm = parse_twin_url("twin:H200/gpt-oss-120b?framework=vllm")
    sglang = parse_twin_url("twin:H200/gpt-oss-120b?framework=sglang")
    assert trt.engine.admission.reserve_init == 1.0 and trt.engine.admission.lag_steps == 2
    assert vllm.engine.admission.reserve_init == 0.0 and vllm.engine.admission.lag_steps == 2
    assert sglang.engine.admission == SGLANG.__class__(0.7, 0.098, 600, 2)
    # TensorRT-LLM's pool is 0.9 of what weights leave, more than vLLM's 0.9 of all HBM
    assert trt.efficiency.kv_free_memory_fraction == 0.9
    assert trt.step_model().kv_budget_bytes_per_gpu() > vllm.step_model().kv_budget_bytes_per_gpu()
    own = parse_twin_url("twin:H200/gpt-oss-120b?framework=trt&gpu_memory_utilization=0.8")
    assert own.efficiency.kv_free_memory_fraction is None


def test_sglang_takes_its_deployed_memory_fraction_unless_the_url_sets_one() -> None:
    """SGLang's --mem-fraction-static as InferenceX deploys it (0.8) leaves less KV than
    vLLM's 0.90 on the same GPU; an explicit gpu_memory_utilization wins over the profile."""
    sglang = parse_twin_url("twin:H200/gpt-oss-120b?framework=sglang")
    vllm = parse_twin_url("twin:H200/gpt-oss-120b?framework=vllm")
    own = parse_twin_url("twin:H200/gpt-oss-120b?framework=sglang&gpu_memory_utilization=0.9")
    assert sglang.efficiency.gpu_memory_utilization == 0.8
    assert (
        sglang.step_model().kv_budget_bytes_per_gpu() < vllm.step_model().kv_budget_bytes_per_gpu()
    )
    assert own.step_model().kv_budget_bytes_per_gpu() == vllm.step_model().kv_budget_bytes_per_gpu()


def _queued(*prompts: int, ready_step: int = 0) -> list[Seq]:
    return [Seq(i, 0, p, 10, ctx_target=p, ready_step=ready_step) for i, p in enumerate(prompts)]


def test_batch_wait_holds_prompts_until_enough_tokens_or_the_timeout() -> None:
    """TensorRT-LLM batch waiting with 3 steps and ratio 0.5 of a 1,000-token budget."""
    wait = BatchWait(AdmissionPolicy(batch_wait_iters=3, batch_wait_ratio=0.5))
    one = _queued(100)
    assert [wait.hold(one, 10, 0, 1000) for _ in range(4)] == [True, True, True, False]
    assert wait.waited == 0  # released and reset
    assert not wait.hold(_queued(300, 190), 10, 0, 1000)  # 300 + 190 + 10 decodes = 500
    assert wait.hold(_queued(300, 180), 10, 0, 1000)  # 490 < 500
    assert not wait.hold(one, 0, 0, 1000)  # nothing decoding: never wait
    assert not wait.hold(_queued(100, ready_step=5), 10, 0, 1000)  # nothing ready to hold
    assert not BatchWait(AdmissionPolicy()).hold(one, 10, 0, 1000)  # off by default


def test_batch_wait_from_the_url_delays_first_tokens_under_load() -> None:
    base = "twin:B200/Llama-3.1-8B?framework=trt&max_batched_tokens=2048"
    plain = parse_twin_url(base)
    held = parse_twin_url(base + "&batch_wait_iters=20&batch_wait_ratio=0.9")
    assert held.engine.admission.batch_wait_iters == 20
    assert held.engine.admission.batch_wait_ratio == 0.9
    assert plain.engine.admission.batch_wait_iters == 0
    ttfts = []
    for cfg in (plain, held):
        # no front-end time, so that arrivals reach the scheduler as the closed loop sends them
        # whatever the fitted front end is
        eng = replace(cfg.engine, frontend_s=0.0, frontend_s_per_token=0.0)
        cfg = replace(cfg, engine=eng)
        res = run_point(cfg, length_requests(256, 1024, 256), "c64", concurrency=64)
        xs = sorted((r.chunk_ns[0] - r.start_ns) for r in res.records)
        ttfts.append(xs[len(xs) // 2])
        assert all(r.ok and len(r.chunk_ns) == 256 for r in res.records)
    assert ttfts[1] > 1.2 * ttfts[0]  # prompts held until a second one is queued


def test_attention_dp_balance_holds_prompts_until_every_rank_has_one() -> None:
    """TensorRT-LLM's ADP balance over 4 ranks with a 3-step timeout."""
    wait = BatchWait(AdmissionPolicy(balance_iters=3, balance_ranks=4))
    three = _queued(500, 500, 500)
    assert [wait.hold(three, 10, 0, 10_000) for _ in range(4)] == [True, True, True, False]
    assert not wait.hold(_queued(500, 500, 500, 500), 10, 0, 10_000)  # one for every rank
    assert not wait.hold(three, 0, 0, 10_000)  # nothing decoding: never wait
    late = _queued(500, 500, 500) + _queued(500, ready_step=9)
    assert wait.hold(late, 10, 0, 10_000)  # the fourth is not ready yet


def test_attention_dp_balance_lets_the_ranks_prefill_together() -> None:
    # DeepSeek-R1 over 8 attention-DP ranks, 8k prompts arriving one by one: unbalanced, each
    # prompt's prefill stalls every rank's MoE exchange on its own; balanced, eight at a time
    base = "twin:H200/DeepSeek-R1?tp=8&ep=8&kv=fp8&dp_attention=1&framework=trt"
    plain = parse_twin_url(base)
    held = parse_twin_url(base + "&adp_balance_iters=60")
    assert held.engine.admission.balance_ranks == 8 and held.engine.admission.balance_iters == 60
    assert plain.engine.admission.balance_iters == 0
    tput = []
    for cfg in (plain, held):
        reqs = length_requests(96, 8192, 128, range_ratio=0.8, seed=3)
        res = run_point(cfg, reqs, "c32", concurrency=32)
        assert all(r.ok for r in res.records)
        tput.append(len(res.records) / (res.window.end_ns - res.window.start_ns))
    assert tput[1] > 1.2 * tput[0]
    with pytest.raises(TargetError, match="dp_attention=1"):
        parse_twin_url("twin:H200/DeepSeek-R1?tp=8&framework=trt&adp_balance_iters=60")


def test_the_front_end_delays_what_the_scheduler_sees_by_its_fixed_and_per_token_time() -> None:
    """A lone request on an idle replica: its whole token timeline moves later by the front
    end's time (25 ms + 2,000 tokens x 20 us = 65 ms), and the front end's time comes out of
    the closed loop's throughput, not out of any step."""
    base = parse_twin_url("twin:H200/Llama-3.1-8B?framework=vllm")
    quiet = replace(base, engine=replace(base.engine, frontend_s=0.0, frontend_s_per_token=0.0))
    slow = replace(base, engine=replace(base.engine, frontend_s=0.025, frontend_s_per_token=2e-5))
    runs = [run_point(c, length_requests(1, 2000, 16), "c1", concurrency=1) for c in (quiet, slow)]
    (a,), (b,) = (r.records for r in runs)
    assert b.chunk_ns[0] - a.chunk_ns[0] == 65_000_000
    assert [t - b.chunk_ns[0] for t in b.chunk_ns] == [t - a.chunk_ns[0] for t in a.chunk_ns]


def test_every_framework_profile_has_a_front_end_time() -> None:
    for fw in ("vllm", "sglang", "trt", "atom", "dynamo-trt", "mori-sglang"):
        engine = parse_twin_url(f"twin:H200/gpt-oss-120b?framework={fw}").engine
        assert 0 < engine.frontend_s <= 0.2 and 0 < engine.frontend_s_per_token <= 4e-5
        assert engine.frontend_ns(8192) > engine.frontend_ns(1024) > engine.frontend_ns(0) > 0


def test_a_serving_stack_that_tokenizes_replaces_the_engines_front_end_and_a_router_adds() -> None:
    """Dynamo tokenizes and hands the engine token ids, so a Dynamo-TRT request pays Dynamo's
    front end and not trtllm-serve's; a MoRI router forwards to SGLang's own servers, so it
    pays SGLang's front end plus the router's hop. Checked on books whose entries differ."""
    from scoville.twin.profiles import load_profiles

    data = load_profiles().model_dump(by_alias=True)
    data["frameworks"]["trt"].update(frontend_s=0.08, frontend_s_per_token=2e-5)
    data["frameworks"]["sglang"].update(frontend_s=0.03, frontend_s_per_token=1e-5)
    data["stacks"]["dynamo"].update(frontend_s=0.005, frontend_s_per_token=1e-6)
    data["stacks"]["mori"].update(frontend_s=0.002, frontend_s_per_token=5e-7)
    book = ProfileBook.model_validate(data)

    def ns(fw: str) -> int:
        url = f"twin:H200/DeepSeek-R1?tp=8&framework={fw}"
        return TwinOptions.parse_url(url).config(book).engine.frontend_ns(1000)

    assert ns("trt") == 100_000_000  # 80 ms + 1,000 x 20 us
    assert ns("dynamo-trt") == ns("dynamo-sglang") == 6_000_000  # 5 ms + 1,000 x 1 us
    assert ns("sglang") == 40_000_000
    assert ns("mori-sglang") == 42_500_000  # SGLang's 40 ms and the router's 2.5 ms


def test_a_front_end_parameter_is_fitted_on_the_rows_whose_requests_pass_it() -> None:
    from scoville.twin.calibration import CalPoint, Published
    from scoville.twin.free_params import FREE_PARAMS, point_owner

    def owner(fw: str) -> Owner:
        pub = Published(tput_per_gpu=1.0, tpot_ms=1.0)
        url = f"twin:B200/DeepSeek-R1?tp=8&precision=fp8&framework={fw}"
        return point_owner(CalPoint(id="x", url=url, isl_tokens=1, osl_tokens=1, published=pub,
                               split="dev", source="s"))  # fmt: skip

    rows = {fw: owner(fw) for fw in ("trt", "dynamo-trt", "sglang", "mori-sglang")}
    front = {p.name: p for p in FREE_PARAMS if "frontend" in p.name}
    assert {n.rsplit(".", 1)[0] for n in front} >= {"stacks.dynamo", "stacks.mori"}

    def touched(name: str) -> set[str]:
        return {fw for fw, o in rows.items() if front[name].touches(o)}

    assert touched("frameworks.trt.frontend_s") == {"trt"}
    assert touched("stacks.dynamo.frontend_s") == {"dynamo-trt"}
    assert touched("frameworks.sglang.frontend_s_per_token") == {"sglang", "mori-sglang"}
    assert touched("stacks.mori.frontend_s") == {"mori-sglang"}
    # the engine's own step costs still see its rows behind every stack
    layer = next(p for p in FREE_PARAMS if p.name == "frameworks.trt.layer_overhead_s")
    assert {fw for fw, o in rows.items() if layer.touches(o)} == {"trt", "dynamo-trt"}


def test_a_stack_that_runs_the_engine_as_its_worker_sets_its_step_time_and_fit() -> None:
    """Under Dynamo, TensorRT-LLM's steps pay the stack's engine step time (no trtllm-serve
    loop); SGLang, which Dynamo does not name there, keeps its own. Each time is fitted on the
    rows that pay it, and the step model charges it once per step."""
    from scoville.twin.calibration import CalPoint, Published
    from scoville.twin.free_params import FREE_PARAMS, point_owner
    from scoville.twin.profiles import load_profiles
    from scoville.twin.step import StepBatch

    data = load_profiles().model_dump(by_alias=True)
    data["frameworks"]["trt"]["step_overhead_s"] = 4e-3
    data["frameworks"]["sglang"]["step_overhead_s"] = 3e-4
    data["stacks"]["dynamo"]["engine_step_overhead_s"] = {"trt": 1e-3}
    book = ProfileBook.model_validate(data)

    def step_s(fw: str) -> float:
        cfg = TwinOptions.parse_url(f"twin:B200/DeepSeek-R1?tp=8&framework={fw}").config(book)
        assert cfg.efficiency.step_overhead_s in (4e-3, 3e-4, 1e-3)
        sm = StepModel(cfg.hardware, cfg.model, cfg.parallel, cfg.efficiency)
        return sm.cost(StepBatch(n_decode=1, decode_ctx_tokens=1000, n_sampled=1)).overhead_s

    assert step_s("trt") - step_s("dynamo-trt") == pytest.approx(3e-3)  # 4 ms against 1 ms
    assert step_s("dynamo-sglang") == pytest.approx(step_s("sglang"))

    def owner(fw: str) -> Owner:
        pub = Published(tput_per_gpu=1.0, tpot_ms=1.0)
        url = f"twin:B200/DeepSeek-R1?tp=8&precision=fp8&framework={fw}"
        return point_owner(CalPoint(id="x", url=url, isl_tokens=1, osl_tokens=1, published=pub,
                               split="dev", source="s"), book)  # fmt: skip

    rows = {fw: owner(fw) for fw in ("trt", "dynamo-trt", "sglang", "dynamo-sglang")}
    prm = {p.name: p for p in FREE_PARAMS}
    assert {fw for fw, o in rows.items() if prm["frameworks.trt.step_overhead_s"].touches(o)} == {
        "trt"
    }
    dyn = prm["stacks.dynamo.engine_step_overhead_s.trt"]
    assert {fw for fw, o in rows.items() if dyn.touches(o)} == {"dynamo-trt"}
    assert dyn.get(book) == 1e-3 and dyn.get(dyn.set(book, 2e-3)) == 2e-3
