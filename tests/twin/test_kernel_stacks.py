"""Kernel-stack efficiency: the routed-expert factor per weight format, the per-MoE-layer
overhead, a declared untuned kernel path, and the fit's rule for kernel-stack factors.

Golden numbers are worked by hand in the comments."""

from __future__ import annotations

from dataclasses import replace

import pytest

from scoville.errors import TargetError
from scoville.twin.catalogue import load_catalogue
from scoville.twin.costmodel import Efficiency, Parallel, StepBatch, StepModel
from scoville.twin.free_params import FREE_PARAMS, FreeParam, Owner, fittable
from scoville.twin.layout import format_class
from scoville.twin.profiles import VendorEfficiency, apply_profile, load_profiles
from scoville.twin.target import parse_twin_url

CAT = load_catalogue()
BATCH = StepBatch(n_decode=1, decode_ctx_tokens=1000, n_sampled=1)


def owner(url: str) -> Owner:
    """What a dev row at `url` depends on, as the fit sees it."""
    from scoville.twin.calibration import CalPoint, Published
    from scoville.twin.free_params import point_owner

    pub = Published(tput_per_gpu=1.0, tpot_ms=1.0)
    return point_owner(CalPoint(id="x", url=url, isl_tokens=1, osl_tokens=1, published=pub,
                           split="dev", source="s"))  # fmt: skip


def test_format_classes_name_the_kernel_family() -> None:
    got = [format_class(f) for f in ("bf16", "fp16", "fp8", "mxfp4", "nvfp4", "int4_g32")]
    assert got == ["bf16", "bf16", "fp8", "fp4", "fp4", "int4"]


def test_the_expert_factor_slows_only_experts_in_its_format() -> None:
    hw = CAT.get_hardware("H200")
    qwen, llama = CAT.get_model("Qwen3.5-397B-A17B"), CAT.get_model("Llama-3.1-70B")
    fp8 = Parallel(tp=8, precision="fp8")
    half_fp8 = Efficiency(expert_kernel=(("fp8", 0.5),))
    base = StepModel(hw, qwen, fp8).cost(BATCH)
    slow = StepModel(hw, qwen, fp8, half_fp8).cost(BATCH)
    # batch 1 is memory-bound: halving the experts' bandwidth doubles their streaming time,
    # so the step grows by exactly that time and nothing else changes
    grown = slow.memory_s - base.memory_s
    assert grown > 0 and slow.comm_s == base.comm_s and slow.overhead_s == base.overhead_s
    # the same factor on BF16 experts, or on a dense model, changes nothing
    bf16 = Parallel(tp=8, precision="bf16")
    assert StepModel(hw, qwen, bf16, half_fp8).cost(BATCH) == StepModel(hw, qwen, bf16).cost(BATCH)
    dense = Parallel(tp=2, precision="fp8")
    assert StepModel(hw, llama, dense, half_fp8).cost(BATCH) == StepModel(hw, llama, dense).cost(
        BATCH
    )
    # a factor of 0.25 grows the expert time three-fold (1/0.25 - 1 = 3 x the base time)
    quarter = StepModel(hw, qwen, fp8, Efficiency(expert_kernel=(("fp8", 0.25),))).cost(BATCH)
    assert quarter.memory_s - base.memory_s == pytest.approx(3 * grown)


def test_expert_streaming_and_expert_gemm_rate_are_separate_factors() -> None:
    hw = CAT.get_hardware("H200")
    qwen = CAT.get_model("Qwen3.5-397B-A17B")
    fp8 = Parallel(tp=8, precision="fp8")
    # 65,536 prompt tokens give each of the 512 experts 1,280 rows (top-10): compute-bound
    prefill = StepBatch(prefill_tokens=65536, prefill_pairs=65536 * 32768.5, n_sampled=1)
    base_pf, base_dec = StepModel(hw, qwen, fp8).cost(prefill), StepModel(hw, qwen, fp8).cost(BATCH)
    # the streaming factor does not touch a compute-bound expert GEMM...
    stream = Efficiency(expert_kernel=(("fp8", 0.5),))
    assert StepModel(hw, qwen, fp8, stream).cost(prefill).compute_s == base_pf.compute_s
    # ...and the grouped-GEMM rate does not touch batch-1 decode, which streams weights
    gemm = Efficiency(expert_gemm=0.5)
    assert StepModel(hw, qwen, fp8, gemm).cost(BATCH) == base_dec
    slow_pf = StepModel(hw, qwen, fp8, gemm).cost(prefill)
    assert slow_pf.compute_s > base_pf.compute_s and slow_pf.memory_s == base_pf.memory_s
    # halving the rate doubles the experts' compute time: the step grows by exactly that time
    quarter_pf = StepModel(hw, qwen, fp8, Efficiency(expert_gemm=0.25)).cost(prefill)
    grown = slow_pf.compute_s - base_pf.compute_s
    assert quarter_pf.compute_s - base_pf.compute_s == pytest.approx(3 * grown)


def test_moe_layer_overhead_counts_moe_layers_only() -> None:
    hw = CAT.get_hardware("H200")
    r1 = CAT.get_model("DeepSeek-R1")  # 61 layers, the first 3 dense: 58 MoE layers
    eff = Efficiency(step_overhead_s=0.0, layer_overhead_s=0.0, moe_layer_overhead_s=10e-6)
    cost = StepModel(hw, r1, Parallel(tp=8), eff).cost(BATCH)
    assert cost.overhead_s == pytest.approx(58 * 10e-6)
    llama = CAT.get_model("Llama-3.1-70B")
    assert StepModel(hw, llama, Parallel(tp=2), eff).cost(BATCH).overhead_s == 0.0


def test_a_family_without_a_stack_entry_runs_its_parents_kernels() -> None:
    book = load_profiles()
    data = book.model_dump(by_alias=True)
    data["vendors"]["Blackwell"]["expert_bw"] = {"fp8": 0.6}
    book = type(book).model_validate(data)
    ultra = apply_profile(book, "sglang", "NVIDIA", family="Blackwell Ultra").efficiency
    assert ultra.expert_scale("fp8") == 0.6 and ultra.expert_scale("bf16") == 1.0


def test_kernels_untuned_is_declared_in_the_url_and_costs_the_fitted_scale() -> None:
    tuned = parse_twin_url("twin:MI300X/Qwen3.5-397B-A17B?tp=8&precision=fp8&framework=sglang")
    untuned = parse_twin_url(
        "twin:MI300X/Qwen3.5-397B-A17B?tp=8&precision=fp8&framework=sglang&kernels=untuned"
    )
    assert untuned.labels["kernels"] == "untuned" and tuned.labels["kernels"] == "tuned"
    book = load_profiles()
    assert untuned.efficiency.kernel_scale == book.untuned_kernel_scale
    assert tuned.efficiency.kernel_scale == 1.0
    with pytest.raises(TargetError, match="kernels"):
        parse_twin_url("twin:MI300X/Qwen3.5-397B-A17B?kernels=slow")
    # the untuned scale multiplies every weight operator: at 0.5 the batch-1 step's weight
    # streaming (dense and experts) takes twice as long
    hw, qwen = CAT.get_hardware("MI300X"), CAT.get_model("Qwen3.5-397B-A17B")
    par = Parallel(tp=8, precision="fp8")
    eff = tuned.efficiency
    a = StepModel(hw, qwen, par, eff).cost(BATCH)
    b = StepModel(hw, qwen, par, replace(eff, kernel_scale=0.5)).cost(BATCH)
    assert b.total_s > a.total_s and b.comm_s == a.comm_s


def test_untuned_rows_inform_only_the_untuned_scale_and_stack_factors_need_two_models() -> None:
    untuned = Owner("Qwen3.5-397B-A17B", "sglang", "AMD", "CDNA3", "fp8", True)
    tuned = Owner("DeepSeek-R1", "sglang", "AMD", "CDNA3", "fp8", False)
    stack = FreeParam("vendors.CDNA3.expert_bw.fp8", 0.1, 1.4)
    assert stack.per_stack and stack.touches(tuned) and not stack.touches(untuned)
    assert not stack.touches(replace(tuned, expert_format="int4"))
    scale = FreeParam("untuned_kernel_scale", 0.1, 1.0)
    assert scale.touches(untuned) and not scale.touches(tuned) and not scale.per_stack
    hbm = FreeParam("vendors.CDNA3.hbm_bw_scale", 0.3, 1.25)
    assert hbm.touches(tuned) and not hbm.touches(untuned) and not hbm.per_stack
    assert not stack.touches(replace(tuned, model="Llama-3.1-70B", expert_format=""))
    # a kernel-stack factor needs two models; other parameters need one row
    assert not fittable(stack, [tuned, replace(tuned, framework="vllm")])
    assert fittable(stack, [tuned, replace(tuned, model="GLM-5")])
    assert fittable(hbm, [tuned]) and not fittable(hbm, [])
    # the grouped-GEMM rate is a stack factor of every expert format, never of a dense model
    grouped = FreeParam("vendors.CDNA3.expert_gemm", 0.2, 1.0)
    assert grouped.per_stack and not grouped.family_wide
    assert grouped.touches(tuned) and grouped.touches(replace(tuned, expert_format="int4"))
    assert not grouped.touches(replace(tuned, model="Llama-3.1-70B", expert_format=""))
    assert not fittable(grouped, [tuned]) and fittable(
        grouped, [tuned, replace(tuned, model="GLM-5")]
    )


def test_a_format_only_one_model_uses_does_not_steer_its_family_scales() -> None:
    from scoville.twin.free_params import lone_formats, lone_row

    kimi = Owner("Kimi-K2.5", "vllm", "NVIDIA", "Hopper", "int4", False)
    minimax = Owner("MiniMax-M2.5", "vllm", "NVIDIA", "Hopper", "fp8", False)
    glm = replace(minimax, model="GLM-5", framework="sglang")
    llama = Owner("Llama-3.1-70B", "vllm", "NVIDIA", "Hopper", "", False)
    lone = lone_formats([kimi, kimi, minimax, glm, llama])
    # INT4 experts on Hopper: one model, so its expert factor stays at the prior and the rows'
    # error (that model's port) must not move Hopper's HBM or GEMM scale
    assert lone == {("Hopper", "int4")}
    assert lone_row(kimi, lone) and not lone_row(minimax, lone) and not lone_row(llama, lone)
    hbm = FreeParam("vendors.Hopper.hbm_bw_scale", 0.7, 1.2)
    gemm = FreeParam("vendors.Hopper.gemm_scale", 0.3, 1.4)
    stack = FreeParam("vendors.Hopper.expert_bw.int4", 0.1, 1.4)
    layer = FreeParam("frameworks.vllm.layer_overhead_s", 2e-6, 80e-6)
    assert hbm.family_wide and gemm.family_wide
    assert not stack.family_wide and not layer.family_wide
    assert layer.touches(kimi)  # the framework's own costs still see every row
    # a second INT4 model makes the format's factor fittable, and its rows count again
    assert lone_formats([kimi, replace(kimi, model="GLM-5"), minimax, glm]) == set()


def test_the_fit_loss_counts_ttft_at_half_weight(monkeypatch: pytest.MonkeyPatch) -> None:
    import math

    import scoville.twin.fit as fit_mod
    from scoville.twin.calibration import CalPoint, Published

    p = CalPoint(
        id="x",
        url="twin:H200/gpt-oss-120b?tp=1",
        isl_tokens=1024,
        osl_tokens=1024,
        concurrency=4,
        published=Published(tput_per_gpu=100.0, tpot_ms=10.0, ttft_ms=50.0),
        split="dev",
        source="s",
    )
    # throughput and TPOT exact, TTFT 4x long (capped at 2x): ln 2 at weight 0.5 of 2.5
    pred = {"tput_per_gpu": 100.0, "tpot_ms": 10.0, "ttft_ms": 200.0}
    monkeypatch.setattr(fit_mod, "simulate_point", lambda *a, **k: pred)
    assert fit_mod.loss([p], load_profiles()) == pytest.approx(0.5 * math.log(2) / 2.5)
    # a row without a published TTFT is judged on the other two alone
    q = p.model_copy(update={"published": Published(tput_per_gpu=50.0, tpot_ms=10.0)})
    assert fit_mod.loss([q], load_profiles()) == pytest.approx(math.log(2) / 2)


def test_expert_parallel_experts_pay_the_ep_paths_own_moe_layer_cost() -> None:
    hw = CAT.get_hardware("B200")
    r1 = CAT.get_model("DeepSeek-R1")  # 58 MoE layers
    eff = Efficiency(
        step_overhead_s=0.0, layer_overhead_s=0.0, moe_layer_overhead_s=10e-6,
        ep_moe_layer_overhead_s=30e-6,
    )  # fmt: skip
    tp = StepModel(hw, r1, Parallel(tp=8), eff).cost(BATCH).overhead_s
    tep = StepModel(hw, r1, Parallel(tp=8, ep=8), eff).cost(BATCH).overhead_s
    dep = StepModel(hw, r1, Parallel(tp=8, dp_attention=True), eff).cost(BATCH).overhead_s
    assert tp == pytest.approx(58 * 10e-6)
    assert tep == pytest.approx(58 * 30e-6) and dep == pytest.approx(58 * 30e-6)
    # without a cost of its own the EP path pays the tensor-parallel path's
    same = replace(eff, ep_moe_layer_overhead_s=None)
    assert StepModel(hw, r1, Parallel(tp=8, ep=8), same).cost(BATCH).overhead_s == tp


def test_the_ep_paths_cost_is_fitted_on_expert_parallel_rows_only() -> None:
    tp = owner("twin:B200/DeepSeek-R1?tp=8&precision=fp8&framework=sglang")
    tep = owner("twin:B200/DeepSeek-R1?tp=8&ep=8&precision=fp8&framework=sglang")
    dense = owner("twin:B200/Llama-3.1-70B?tp=8&ep=8&precision=fp8&framework=sglang")
    assert tep.expert_parallel and not tp.expert_parallel and not dense.expert_parallel
    ep_cost = FreeParam("frameworks.sglang.ep_moe_layer_overhead_s", 1e-7, 80e-6)
    tp_cost = FreeParam("frameworks.sglang.moe_layer_overhead_s", 1e-7, 80e-6)
    assert ep_cost.touches(tep) and not ep_cost.touches(tp) and not ep_cost.touches(dense)
    # the shipped book sets SGLang's EP path apart, so its TP-path cost leaves EP rows alone
    assert tep.ep_moe_own and tp_cost.touches(tp) and not tp_cost.touches(tep)
    assert not FreeParam("frameworks.trt.ep_moe_layer_overhead_s", 1e-7, 80e-6).touches(tep)
    # a DEP prefill pool beside TP-sliced decode workers runs both paths, so both costs read it
    mixed = owner(
        "twin:B200/DeepSeek-R1?tp=8&precision=fp8&kv=fp8&disagg=1P3D&prefill_tp=8"
        "&prefill_attention=dp&framework=dynamo-trt"
    )
    assert mixed.expert_parallel and mixed.tp_sliced
    for cost in ("moe_layer_overhead_s", "ep_moe_layer_overhead_s"):
        assert FreeParam(f"frameworks.trt.{cost}", 1e-7, 80e-6).touches(mixed), cost


def test_the_sparse_path_is_paid_on_indexer_layers_only() -> None:
    # indexer layers by the configs: GLM-5 and DeepSeek-V3.2 index on every layer (78, 61);
    # DeepSeek-V4-Flash only on its ratio-4 layers (21 of 43); DeepSeek-R1 has no indexer
    hw = CAT.get_hardware("B200")
    eff = Efficiency(
        step_overhead_s=0.0, layer_overhead_s=0.0, moe_layer_overhead_s=0.0,
        sparse_layer_overhead_s=10e-6,
    )  # fmt: skip
    par = Parallel(tp=8, precision="fp8")
    for name, layers in (
        ("GLM-5", 78), ("DeepSeek-V3.2", 61), ("DeepSeek-V4-Flash", 21), ("DeepSeek-R1", 0)
    ):  # fmt: skip
        cost = StepModel(hw, CAT.get_model(name), par, eff).cost(BATCH)
        assert cost.overhead_s == pytest.approx(layers * 10e-6), name


def test_the_sparse_path_factor_is_fitted_on_indexer_models_only() -> None:
    glm = owner("twin:B200/GLM-5?tp=8&precision=fp8&framework=sglang")
    r1 = owner("twin:B200/DeepSeek-R1?tp=8&precision=fp8&framework=sglang")
    assert glm.indexer and not r1.indexer
    sparse = FreeParam("frameworks.sglang.sparse_layer_overhead_s", 1e-6, 160e-6)
    assert sparse.touches(glm) and not sparse.touches(r1)
    assert not FreeParam("frameworks.vllm.sparse_layer_overhead_s", 1e-6, 1e-4).touches(glm)
    # the per-layer cost every model pays still sees both
    assert FreeParam("frameworks.sglang.layer_overhead_s", 2e-6, 80e-6).touches(r1)


def test_a_fit_in_several_processes_is_the_fit_in_one() -> None:
    """`jobs` only spreads a trial's simulations over processes: the fitted book and both dev
    losses are the same to the bit, and the fit did move the parameter."""
    from scoville.twin.calibration import CalPoint, Published
    from scoville.twin.fit import fit
    from scoville.twin.free_params import select_params

    def row(conc: int, ttft_ms: float) -> CalPoint:
        pub = Published(ttft_ms=ttft_ms)  # TTFT alone: the front end must grow
        return CalPoint(id=f"c{conc}", url="twin:H200/gpt-oss-120b?tp=1&framework=vllm",
                        isl_tokens=1024, osl_tokens=256, concurrency=conc, published=pub,
                        split="dev", source="s")  # fmt: skip

    rows = [row(1, 300.0), row(2, 320.0), row(4, 350.0)]
    params = select_params("frameworks.vllm.frontend_s_per")
    one = fit(rows, load_profiles(), params=params, passes=1, jobs=1)
    two = fit(rows, load_profiles(), params=params, passes=1, jobs=2)
    assert one == two
    moved = params[0].get(one[0]) != params[0].get(load_profiles())
    assert moved and one[2] < one[1]


def test_the_16_bit_mla_path_is_the_named_engines_on_its_kernel_stack() -> None:
    fixed = VendorEfficiency(mla16_head_layer_s={"sglang": 1e-6}, mla16_rate={"sglang": 0.1})
    book = load_profiles()
    book = book.model_copy(update={"vendors": {**book.vendors, "CDNA4": fixed}})
    for framework, rate, head_s in (
        ("sglang", 0.1, 1e-6), ("mori-sglang", 0.1, 1e-6), ("vllm", 1.0, 0.0), ("atom", 1.0, 0.0)
    ):  # fmt: skip
        eff = apply_profile(book, framework, "AMD", family="CDNA4").efficiency
        assert (eff.mla16_rate, eff.mla16_head_layer_s) == (rate, head_s), framework
    # another family (MI300X is CDNA3) does not run CDNA4's kernels: it has its own values
    eff = apply_profile(book, "sglang", "AMD", family="CDNA3").efficiency
    cdna3 = book.vendors["CDNA3"]
    assert (eff.mla16_rate, eff.mla16_head_layer_s) == (
        cdna3.mla16_rate["sglang"],
        cdna3.mla16_head_layer_s["sglang"],
    )
    assert (eff.mla16_rate, eff.mla16_head_layer_s) != (0.1, 1e-6)


def test_the_16_bit_mla_decode_path_is_paid_on_a_16_bit_latent_cache_only() -> None:
    hw = CAT.get_hardware("MI355X")
    r1, qwen = CAT.get_model("DeepSeek-R1"), CAT.get_model("Qwen3.5-397B-A17B")
    fixed = Efficiency(mla16_head_layer_s=1e-6)
    bf16, fp8 = Parallel(tp=4, precision="fp4"), Parallel(tp=4, precision="fp4", kv_dtype="fp8")
    base = StepModel(hw, r1, bf16).cost(BATCH)
    # 128 heads over TP4 = 32 heads on a GPU, 61 layers: 32 x 61 x 1 us = 1.952 ms per decode step
    slow = StepModel(hw, r1, bf16, fixed).cost(BATCH)
    assert slow.overhead_s - base.overhead_s == pytest.approx(1.952e-3)
    assert slow.memory_s == base.memory_s and slow.compute_s == base.compute_s
    # TP8 halves the heads on a GPU; attention DP keeps all 128 on each rank
    tp8 = StepModel(hw, r1, replace(bf16, tp=8), fixed).cost(BATCH)
    tp8_base = StepModel(hw, r1, replace(bf16, tp=8)).cost(BATCH)
    assert tp8.overhead_s - tp8_base.overhead_s == pytest.approx(0.976e-3)
    dpa = replace(bf16, tp=8, ep=8, dp_attention=True)
    grown = StepModel(hw, r1, dpa, fixed).cost(BATCH).overhead_s
    assert grown - StepModel(hw, r1, dpa).cost(BATCH).overhead_s == pytest.approx(7.808e-3)
    # an FP8 cache, a model without MLA and a step with no decoding sequence pay nothing
    assert StepModel(hw, r1, fp8, fixed).cost(BATCH) == StepModel(hw, r1, fp8).cost(BATCH)
    q = Parallel(tp=4, precision="fp8")
    assert StepModel(hw, qwen, q, fixed).cost(BATCH) == StepModel(hw, qwen, q).cost(BATCH)
    prefill = StepBatch(prefill_tokens=1024, prefill_pairs=1024 * 512.5, n_sampled=1)
    pf = StepModel(hw, r1, bf16, fixed).cost(prefill)
    assert pf == StepModel(hw, r1, bf16).cost(prefill)


def test_the_16_bit_mla_decode_rate_grows_with_context_and_heads_on_a_gpu() -> None:
    hw = CAT.get_hardware("MI355X")
    r1 = CAT.get_model("DeepSeek-R1")
    slow = Efficiency(mla16_rate=0.01)
    bf16 = Parallel(tp=4, precision="fp4")

    def extra(par: Parallel, ctx: int) -> float:
        b = StepBatch(n_decode=16, decode_ctx_tokens=16 * ctx, n_sampled=16)
        return StepModel(hw, r1, par, slow).cost(b).total_s - StepModel(hw, r1, par).cost(b).total_s

    # at 1 % of the BF16 peak the decode attention binds on compute and takes time in
    # proportion to the context it reads: 8x the context costs 8x the time
    short, long = extra(bf16, 1024), extra(bf16, 8192)
    assert short > 0 and long == pytest.approx(8 * short, rel=0.02)

    # TP8 halves each GPU's heads, and so the path's compute (each GPU still reads the whole
    # latent cache, so the step's time falls by less)
    def compute(par: Parallel) -> float:
        b = StepBatch(n_decode=16, decode_ctx_tokens=16 * 8192, n_sampled=16)
        return (
            StepModel(hw, r1, par, slow).cost(b).compute_s
            - StepModel(hw, r1, par).cost(b).compute_s
        )

    tp8 = replace(bf16, tp=8)
    assert compute(tp8) == pytest.approx(compute(bf16) / 2, rel=0.02)
    assert 0 < extra(tp8, 8192) < long / 2
    # the roofline floor holds only the true FLOPs and bytes: it does not move
    b = StepBatch(n_decode=16, decode_ctx_tokens=16 * 8192, n_sampled=16)
    assert StepModel(hw, r1, bf16, slow).cost(b).floor_s == StepModel(hw, r1, bf16).cost(b).floor_s


def test_the_mla_decode_path_computes_while_it_reads_its_cache() -> None:
    """One kernel: a rate at which the path's compute fits under its cache reads costs nothing
    over the reads; below that, only the compute beyond the reads is paid."""
    hw = CAT.get_hardware("MI300X")
    r1 = CAT.get_model("DeepSeek-R1")
    par = Parallel(tp=8, precision="fp8")
    b = StepBatch(n_decode=64, decode_ctx_tokens=64 * 4800, n_sampled=64)

    def step(rate: float) -> float:
        return StepModel(hw, r1, par, Efficiency(mla16_rate=rate)).cost(b).total_s

    base = StepModel(hw, r1, par).cost(b).total_s
    # 30 % and 60 % of the BF16 peak both hide under 21.6 GB of latent reads: the same time
    assert step(0.3) == pytest.approx(step(0.6), rel=1e-9)
    assert step(0.3) == pytest.approx(base, rel=1e-3)
    # at 1 % the compute binds: the time grows as the rate falls, by less than the compute
    # alone (the reads it hid are no longer paid on top)
    t1, t05 = step(0.01), step(0.005)
    assert t1 > base and t05 - t1 > t1 - base


def test_the_16_bit_mla_path_is_a_kernel_stack_factor_of_16_bit_mla_rows() -> None:
    bf16 = owner("twin:MI355X/DeepSeek-R1?tp=8&precision=fp4&framework=sglang")
    fp8 = owner("twin:MI355X/DeepSeek-R1?tp=8&precision=fp4&kv=fp8&framework=sglang")
    qwen = owner("twin:MI355X/Qwen3.5-397B-A17B?tp=8&precision=fp8&framework=sglang")
    h200 = owner("twin:H200/DeepSeek-R1?tp=8&framework=sglang")
    kimi = owner("twin:MI355X/Kimi-K2.5?tp=8&precision=fp4&framework=vllm")
    mori = owner("twin:MI355X/DeepSeek-R1?tp=8&precision=fp4&framework=mori-sglang")
    assert bf16.mla_cache == "bf16" and fp8.mla_cache == "fp8" and qwen.mla_cache == ""
    assert h200.mla_cache == "bf16" and kimi.mla_cache == "bf16"
    for name in ("vendors.CDNA4.mla16_head_layer_s.sglang", "vendors.CDNA4.mla16_rate.sglang"):
        prm = FreeParam(name, 1e-8, 1.0)
        assert prm.touches(bf16) and not prm.touches(fp8) and not prm.touches(qwen)
        assert not prm.touches(h200)  # another family's kernels
        assert not prm.touches(kimi) and prm.touches(mori)  # the engine's path, behind any stack
        # a kernel-stack factor, but the path's kernel reads only the latent cache, so one
        # model's rows inform it (an expert-format factor still needs two)
        assert prm.per_stack and not prm.family_wide
        assert fittable(prm, [bf16]) and not fittable(prm, [])
        expert = FreeParam("vendors.CDNA4.expert_bw.fp4", 0.1, 1.4)
        assert expert.touches(bf16) and not fittable(expert, [bf16])
        assert fittable(expert, [bf16, replace(bf16, model="GLM-5")])


def test_every_mla_model_has_the_latent_shape_the_16_bit_path_was_fitted_on() -> None:
    # the premise of fitting the 16-bit MLA path from one model's rows: its kernel sees the
    # same latent cache shape for every MLA model, so no model's port hides in it; a model
    # with another shape would need the two-model rule back
    mla = [m for m in CAT.models.values() if m.attention == "mla"]
    assert {"DeepSeek-R1", "Kimi-K2.5", "GLM-5", "DeepSeek-V3.2"} <= {m.name for m in mla}
    assert {(m.kv_lora_rank, m.qk_rope_head_dim) for m in mla} == {(512, 64)}


def test_each_cache_dtype_pays_its_own_mla_decode_path() -> None:
    hw = CAT.get_hardware("MI325X")
    r1, qwen = CAT.get_model("DeepSeek-R1"), CAT.get_model("Qwen3.5-397B-A17B")
    both = Efficiency(mla16_head_layer_s=1e-6, mla8_head_layer_s=2e-6, mla8_rate=0.05)
    fp8 = Parallel(tp=8, kv_dtype="fp8")
    bf16 = Parallel(tp=8)
    b = StepBatch(n_decode=16, decode_ctx_tokens=16 * 8192, n_sampled=16)
    # 128 heads over TP8 = 16 heads on a GPU, 61 layers: the FP8 path's 16 x 61 x 2 us a step
    fp8_base, fp8_own = StepModel(hw, r1, fp8).cost(b), StepModel(hw, r1, fp8, both).cost(b)
    assert fp8_own.overhead_s - fp8_base.overhead_s == pytest.approx(1.952e-3)
    # and its own rate: at 5 % of the BF16 peak the decode attention takes longer on top
    assert fp8_own.total_s - fp8_base.total_s > 1.952e-3
    # a 16-bit cache pays the 16-bit path only (1 us a head and layer, no rate of its own)
    bf16_own = StepModel(hw, r1, bf16, both).cost(b)
    bf16_base = StepModel(hw, r1, bf16).cost(b)
    assert bf16_own.overhead_s - bf16_base.overhead_s == pytest.approx(0.976e-3)
    assert bf16_own.compute_s == bf16_base.compute_s
    # a model without MLA pays neither
    q = Parallel(tp=8, precision="fp8", kv_dtype="fp8")
    assert StepModel(hw, qwen, q, both).cost(b) == StepModel(hw, qwen, q).cost(b)


def test_the_fp8_mla_path_is_a_factor_of_fp8_mla_rows_of_its_engine_and_family() -> None:
    fp8 = owner("twin:MI325X/DeepSeek-R1?tp=8&kv=fp8&framework=sglang")
    bf16 = owner("twin:MI325X/DeepSeek-R1?tp=8&framework=sglang")
    mi355 = owner("twin:MI355X/DeepSeek-R1?tp=8&precision=fp4&kv=fp8&framework=sglang")
    vllm = owner("twin:MI325X/DeepSeek-R1?tp=8&kv=fp8&framework=vllm")
    assert fp8.mla_cache == "fp8" and bf16.mla_cache == "bf16"
    for name in ("vendors.CDNA3.mla8_head_layer_s.sglang", "vendors.CDNA3.mla8_rate.sglang"):
        prm = next(p for p in FREE_PARAMS if p.name == name)
        assert prm.touches(fp8) and not prm.touches(bf16)
        assert not prm.touches(mi355) and not prm.touches(vllm)
        assert prm.per_stack and prm.stack_models == 1 and fittable(prm, [fp8])
    mla16 = next(p for p in FREE_PARAMS if p.name == "vendors.CDNA3.mla16_rate.sglang")
    assert mla16.touches(bf16) and not mla16.touches(fp8)


def test_only_tensorrt_llm_runs_its_context_attention_in_fp8() -> None:
    # TensorRT-LLM's attention op (its own server or under Dynamo) takes the FP8 context path.
    # vLLM's FlashAttention-3 backend does too over an FP8 cache, on Hopper only; a profile is
    # per framework, not per family, so vLLM's stays off (docs/design/twin.md)
    book = load_profiles()
    on = {
        fw: apply_profile(book, fw, "NVIDIA", family="Blackwell").efficiency.fp8_context_attention
        for fw in ("trt", "dynamo-trt", "vllm", "sglang", "dynamo-sglang")
    }
    assert on == {
        "trt": True,
        "dynamo-trt": True,
        "vllm": False,
        "sglang": False,
        "dynamo-sglang": False,
    }


def test_an_engine_s_own_collectives_on_a_stack_scale_its_fabric_latency_alone() -> None:
    """vLLM's collectives on CDNA3 take the stack's factor on every fabric latency: at batch 1
    a TP8 step's communication is latency, so it scales by the factor; SGLang on the same GPUs
    and vLLM on Hopper keep the book's. Only vLLM's CDNA3 rows inform the factor in `twin fit`."""
    from scoville.twin.options import TwinOptions
    from scoville.twin.profiles import ProfileBook

    from .owners import fit_reads

    data = load_profiles().model_dump(by_alias=True)
    books = []
    for factor in (0.5, 1.0):
        data["vendors"]["CDNA3"]["collective_latency"] = {"vllm": factor}
        books.append(ProfileBook.model_validate(data))

    def comm_s(url: str, book: ProfileBook) -> float:
        cfg = TwinOptions.parse_url(url).config(book)
        sm = StepModel(cfg.hardware, cfg.model, cfg.parallel, cfg.efficiency)
        return sm.cost(StepBatch(n_decode=1, decode_ctx_tokens=1024, n_sampled=1)).comm_s

    vllm = "twin:MI300X/Llama-3.1-70B?tp=8&precision=fp8&framework=vllm"
    sglang = vllm.replace("framework=vllm", "framework=sglang")
    hopper = vllm.replace("MI300X", "H200")
    half, one = books
    assert comm_s(vllm, half) == pytest.approx(0.5 * comm_s(vllm, one), rel=0.02)
    assert comm_s(sglang, half) == comm_s(sglang, one)
    assert comm_s(hopper, half) == comm_s(hopper, one)
    assert fit_reads("vendors.CDNA3.collective_latency.vllm", vllm)
    assert not fit_reads("vendors.CDNA3.collective_latency.vllm", sglang)
    assert not fit_reads("vendors.CDNA3.collective_latency.vllm", hopper)
