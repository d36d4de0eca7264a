"""Parallelism as deployed: scale-up domains, collectives by fabric, data-parallel attention,
expert parallelism, speculative decoding, disaggregation links and framework profiles.

Golden numbers are worked by hand in the comments."""

from __future__ import annotations

import pytest

from scoville.client.plan import length_requests
from scoville.errors import TargetError
from scoville.twin.catalogue import load_catalogue
from scoville.twin.cluster import _kv_path
from scoville.twin.comm import Fabric, Link, allreduce_s
from scoville.twin.costmodel import Parallel, StepBatch, StepModel
from scoville.twin.fast import run_point
from scoville.twin.free_params import FREE_PARAMS
from scoville.twin.frontier import frontier_rows
from scoville.twin.layout import SpecDecode
from scoville.twin.options import TwinOptions
from scoville.twin.profiles import ProfileBook, load_profiles
from scoville.twin.shape import activation_bytes_per_token, model_shape
from scoville.twin.target import parse_twin_url, twin_info

from .owners import fit_reads

CAT = load_catalogue()


def test_collective_latency_grows_with_the_group_and_bytes_cross_the_link() -> None:
    link = Link("x", 4e11, 4e-6, 1.5e-6)
    # 8 ranks: 4 + 1.5 x 3 = 8.5 us; 1 MB x 2 x 7/8 / 4e11 = 4.375 us
    assert link.alpha_s(8) == pytest.approx(8.5e-6)
    assert allreduce_s(1e6, 8, link) == pytest.approx(8.5e-6 + 4.375e-6)
    assert allreduce_s(1e6, 1, link) == 0.0


def test_the_scale_up_domain_is_per_system() -> None:
    h200 = Fabric.of(CAT.get_hardware("H200"), 0.8)
    gb200 = Fabric.of(CAT.get_hardware("GB200"), 0.8)
    assert (h200.domain_gpus, gb200.domain_gpus) == (8, 72)
    # inside: NVLink 900 GB/s bidir -> 450 x 0.8 = 360 GB/s; beyond: 400 Gb/s NIC -> 40 GB/s;
    # GB200 NVLink 5: 1,800 bidir -> 900 x 0.8 = 720 GB/s across the whole rack
    assert h200.link_for(8).bytes_per_s == pytest.approx(3.6e11)
    assert h200.link_for(16).bytes_per_s == pytest.approx(4e10)
    assert gb200.link_for(32).bytes_per_s == pytest.approx(7.2e11)


def test_tensor_parallelism_beyond_the_domain_is_refused_naming_it() -> None:
    with pytest.raises(TargetError, match="HGX B200, 8 GPUs") as e:
        parse_twin_url("twin:B200/DeepSeek-R1?tp=32&ep=32").step_model()
    assert "dp_attention=1" in str(e.value)
    parse_twin_url("twin:GB200/DeepSeek-R1?tp=32&ep=32").step_model()  # one NVL72 rack


def test_small_batch_tp_is_no_longer_slower_than_tp1_on_h200() -> None:
    b = StepBatch(n_decode=1, decode_ctx_tokens=1024, decode_ctx_swa_tokens=128, n_sampled=1)
    t = [
        parse_twin_url(f"twin:H200/gpt-oss-120b?tp={tp}").step_model().cost(b).total_s
        for tp in (1, 2, 4, 8)
    ]
    assert t[1] < t[0] and t[2] < t[0] and t[3] < t[0]


def test_dp_attention_shards_the_mla_latent_and_frees_kv() -> None:
    tp8 = parse_twin_url("twin:GB200/DeepSeek-R1?tp=8&ep=8").step_model()
    dp8 = parse_twin_url("twin:GB200/DeepSeek-R1?tp=8&dp_attention=1").step_model()
    assert (tp8.kv_shard, dp8.kv_shard) == (1, 8)  # latent replicated vs one rank per sequence
    # per GPU tokens of KV: budget / (70,272 B / shard); DP attention holds attention weights
    # whole on every rank, yet its replica holds several times more tokens
    cap_tp = tp8.kv_budget_bytes_per_gpu() / tp8.kv_full_bytes_per_token
    cap_dp = dp8.kv_budget_bytes_per_gpu() / (dp8.kv_full_bytes_per_token / 8)
    assert cap_dp > 5 * cap_tp


def test_expert_activation_traffic_is_divided_over_ep_ranks() -> None:
    m = CAT.get_model("gpt-oss-120b")
    sh = model_shape(m)
    # per layer 4h + 2(q+kv+o)/tp = 11,520 + 2 x 9,216 / 4 = 16,128 elements;
    # EP: (2h + 6I) x k / ep = (5,760 + 17,280) x 4 / 4 = 23,040 -> 2 B x 36 x 39,168
    assert activation_bytes_per_token(m, sh, 4, ep=4) == pytest.approx(2_820_096)
    # TP-sliced experts: (2h + 6I/tp) x k = (5,760 + 4,320) x 4 = 40,320 -> 2 x 36 x 56,448
    assert activation_bytes_per_token(m, sh, 4) == pytest.approx(4_064_256)


def test_expert_skew_slows_the_busiest_rank() -> None:
    b = StepBatch(n_decode=256, decode_ctx_tokens=256 * 2048, n_sampled=256)
    even = parse_twin_url("twin:GB200/DeepSeek-R1?tp=16&dp_attention=1").step_model()
    skew = parse_twin_url("twin:GB200/DeepSeek-R1?tp=16&dp_attention=1&expert_skew=1.5")
    assert skew.step_model().cost(b).total_s > even.cost(b).total_s


def test_wide_ep_across_the_network_is_slower_than_inside_nvl72() -> None:
    b = StepBatch(n_decode=512, decode_ctx_tokens=512 * 1024, n_sampled=512)
    url = "twin:{}/DeepSeek-R1?precision=fp4&tp=32&dp_attention=1"
    hgx = parse_twin_url(url.format("B200")).step_model().cost(b)
    nvl = parse_twin_url(url.format("GB200")).step_model().cost(b)
    assert hgx.comm_s > 3 * nvl.comm_s


def test_acceptance_length_from_the_declared_curve() -> None:
    # 1 + 0.80 + 0.62 + 0.51 = 2.93 (DEFAULT_ACCEPTANCE); a declared length wins, capped
    assert SpecDecode(3).tokens_per_step() == pytest.approx(2.93)
    assert SpecDecode(3, acceptance_length=2.5).tokens_per_step() == 2.5
    assert SpecDecode(1, acceptance_length=5.0).tokens_per_step() == 2.0
    assert SpecDecode(0).tokens_per_step() == 1.0


def test_the_books_acceptance_scale_takes_the_curves_drafts_never_a_declared_length() -> None:
    # 1 + 0.5 x (0.80 + 0.62 + 0.51) = 1.965; capped at 1 + drafts; a declared 2.5 stays 2.5
    assert SpecDecode(3, acceptance_scale=0.5).tokens_per_step() == pytest.approx(1.965)
    assert SpecDecode(1, acceptance_scale=1.5).tokens_per_step() == 2.0
    assert SpecDecode(3, 2.5, acceptance_scale=0.5).tokens_per_step() == 2.5
    data = load_profiles().model_dump(by_alias=True)
    data["acceptance_scale"] = 0.5
    book = ProfileBook.model_validate(data)
    url = "twin:GB200/DeepSeek-R1?precision=fp4&tp=8&ep=8&framework=dynamo-trt&mtp=3"
    spec = TwinOptions.parse_url(url).config(book).parallel.spec
    assert spec.tokens_per_step() == pytest.approx(1.965)
    declared = TwinOptions.parse_url(url + "&mtp_al=2.5").config(book).parallel.spec
    assert declared.tokens_per_step() == 2.5
    # the fit reads the scale on speculative rows that follow the curve, and on no other
    assert fit_reads("acceptance_scale", url)
    assert not fit_reads("acceptance_scale", url + "&mtp_al=2.5")
    assert not fit_reads("acceptance_scale", url.replace("&mtp=3", ""))


def _tpot_ms(url: str) -> float:
    cfg = parse_twin_url(url)
    res = run_point(cfg, length_requests(8, 1024, 256), "c4", concurrency=4)
    return frontier_rows([res])[0].median_tpot_s * 1e3


def test_mtp_lowers_tpot_and_rejected_drafts_cost_verification() -> None:
    base = "twin:GB200/DeepSeek-R1?precision=fp4&tp=8&ep=8&framework=trt"
    plain = _tpot_ms(base)
    # 2.5 tokens per verify step of 4 rows plus three draft passes: well under 1/1.5
    assert _tpot_ms(base + "&mtp=3&mtp_al=2.5") < 0.7 * plain
    assert _tpot_ms(base + "&mtp=3&mtp_al=1") > plain  # verification and drafts for nothing


def test_the_per_sequence_verify_cost_grows_with_the_busiest_ranks_batch() -> None:
    """A speculative step pays spec_seq_overhead_s per decoding sequence of the busiest rank,
    spread over the L tokens it emits: 100 us x 64 sequences / 2.5 = 2.56 ms at TP8, and under
    attention DP over 8 ranks 64 / 8 sequences a rank / dp_balance 0.8 = 10 -> 0.4 ms. A
    step without drafts never pays it."""
    from dataclasses import replace

    from scoville.twin.layout import Efficiency

    m, hw = CAT.get_model("DeepSeek-R1"), CAT.get_hardware("B200")
    spec = SpecDecode(draft_tokens=3, acceptance_length=2.5)
    batch = StepBatch(n_decode=64, decode_ctx_tokens=64 * 2048)

    def overhead_s(par: Parallel, verify_s: float) -> float:
        eff = replace(Efficiency(), spec_seq_overhead_s=verify_s, dp_balance=0.8)
        return StepModel(hw, m, par, eff).cost(batch).overhead_s

    tp = Parallel(tp=8, ep=8, precision="fp4", spec=spec)
    dp = Parallel(tp=8, ep=8, precision="fp4", dp_attention=True, spec=spec)
    assert overhead_s(tp, 100e-6) - overhead_s(tp, 0.0) == pytest.approx(2.56e-3)
    assert overhead_s(dp, 100e-6) - overhead_s(dp, 0.0) == pytest.approx(0.4e-3)
    plain = Parallel(tp=8, ep=8, precision="fp4")
    assert overhead_s(plain, 100e-6) == overhead_s(plain, 0.0)


def test_a_draft_pass_pays_its_own_fixed_cost_and_one_layer_s_collectives() -> None:
    """Three draft passes at 2.5 tokens per verify step: each pass's fixed cost (50 us) is
    paid three times per verify step, 150 us / 2.5 = 60 us per engine step. Each pass also
    crosses one layer's collectives at the sequences' own rows (attention TP8, EP8): a plain
    step's collectives at the 8 sequences' 8 rows over 61 layers, x 3 / 2.5."""
    from dataclasses import replace

    from scoville.twin.layout import Efficiency

    m, hw = CAT.get_model("DeepSeek-R1"), CAT.get_hardware("B200")
    spec = SpecDecode(draft_tokens=3, acceptance_length=2.5)
    batch = StepBatch(n_decode=8, decode_ctx_tokens=8 * 2048)
    tp = Parallel(tp=8, ep=8, precision="fp4", spec=spec)

    def cost(par: Parallel, pass_s: float) -> tuple[float, float]:
        eff = replace(Efficiency(), draft_pass_overhead_s=pass_s)
        c = StepModel(hw, m, par, eff).cost(batch)
        return c.overhead_s, c.comm_s

    assert cost(tp, 50e-6)[0] - cost(tp, 0.0)[0] == pytest.approx(60e-6)
    plain = Parallel(tp=8, ep=8, precision="fp4")
    assert cost(plain, 50e-6) == cost(plain, 0.0)  # no drafts, no draft passes

    # the collectives of plain steps: the verify pass's 32 rows (1 + 3 per sequence) and one
    # draft pass's 8 rows, the latter over 61 layers, three of them, all / 2.5
    def plain_comm_s(rows: int) -> float:
        b = StepBatch(n_decode=rows, decode_ctx_tokens=rows * 2048)
        return StepModel(hw, m, plain).cost(b).comm_s

    one_layer = plain_comm_s(8) / 61
    assert one_layer > 10e-6  # an attention all-reduce and an expert exchange
    assert cost(tp, 0.0)[1] == pytest.approx((plain_comm_s(32) + 3 * one_layer) / 2.5)


def test_fp4_activations_use_the_fp4_rate_where_the_hardware_has_it() -> None:
    m = CAT.get_model("DeepSeek-R1")
    par = Parallel(tp=8, ep=8, precision="fp4", fp4_activations=True)
    b200 = StepModel(CAT.get_hardware("B200"), m, par)
    b300 = StepModel(CAT.get_hardware("B300"), m, par)
    # dense FP4: B200 9,000 TFLOP/s, B300 14,000 (reference CSV)
    assert (b200.expert_peak, b300.expert_peak) == (9000e12, 14000e12)
    w4a8 = StepModel(CAT.get_hardware("B300"), m, Parallel(tp=8, ep=8, precision="fp4"))
    assert w4a8.expert_peak == 4500e12  # FP8 rate without FP4 activations
    auto = parse_twin_url("twin:B300/DeepSeek-R1?tp=8&ep=8&precision=fp4").parallel
    assert auto.fp4_activations


def test_kv_transfer_uses_the_declared_link() -> None:
    net = parse_twin_url("twin:B200/DeepSeek-R1?tp=8&ep=8&disagg=1P1D&kv_link=network")
    up = parse_twin_url("twin:GB200/DeepSeek-R1?tp=8&ep=8&disagg=1P1D&kv_link=scaleup")
    # 8 senders x 50 GB/s x 0.8 = 320 GB/s over the NICs; 8 x 900 x 0.8 = 5,760 GB/s NVLink 5
    assert _kv_path(net)[0] == pytest.approx(3.2e11)
    assert _kv_path(up)[0] == pytest.approx(5.76e12)
    auto = parse_twin_url("twin:B200/DeepSeek-R1?tp=8&ep=8&disagg=1P1D")  # 16 GPUs > HGX 8
    assert _kv_path(auto)[0] == pytest.approx(3.2e11)
    with pytest.raises(TargetError, match="scale-up domain"):
        _kv_path(parse_twin_url("twin:B200/DeepSeek-R1?tp=8&ep=8&disagg=1P1D&kv_link=scaleup"))


def test_framework_profiles_set_the_scheduler() -> None:
    sg = parse_twin_url("twin:H200/gpt-oss-120b?framework=mori-sglang")
    trt = parse_twin_url("twin:H200/gpt-oss-120b?framework=dynamo-trt")
    assert not sg.engine.mix_prefill_decode and sg.engine.chunked_prefill
    assert trt.engine.mix_prefill_decode and not trt.engine.chunked_prefill
    with pytest.raises(TargetError, match="Unknown framework"):
        parse_twin_url("twin:H200/gpt-oss-120b?framework=nope")
    with pytest.raises(TargetError, match="dense"):
        parse_twin_url("twin:H200/Llama-3.1-70B?tp=8&dp_attention=1").step_model()


def test_pipeline_stages_split_weights_and_kv() -> None:
    one = parse_twin_url("twin:H100/Llama-3.1-70B?tp=4").step_model()
    two = parse_twin_url("twin:H100/Llama-3.1-70B?tp=4&pp=2")
    assert two.n_accelerators == 8
    sm = two.step_model()
    assert sm.weight_bytes_per_gpu == pytest.approx(one.weight_bytes_per_gpu / 2)
    assert sm.kv_shard == 2 * one.kv_shard


def _offline_tput(url: str, n: int) -> float:
    cfg = parse_twin_url(url)
    reqs = length_requests(n, 1024, 256, tag="r")
    return frontier_rows([run_point(cfg, reqs, "p", concurrency=n)])[-1].tput_per_gpu


@pytest.mark.parametrize(
    ("framework", "low", "high"), [("bench-trt", 1.7, 2.05), ("vllm", 0.85, 1.15)]
)
def test_a_pipeline_keeps_a_micro_batch_in_flight_a_stage(
    framework: str, low: float, high: float
) -> None:
    """Two stages with two micro-batches in flight serve twice what one batch at a time does.
    TensorRT-LLM admits max_batch_size requests a micro-batch (its capacity scheduler holds
    max_batch_size x micro-batches), so its small seat limit doubles; vLLM shares max_num_seqs
    between its in-flight batches, and at eight seats a step costs about what four cost."""
    base = f"twin:H100/Llama-3.1-70B?tp=4&pp=2&precision=fp8&max_num_seqs=8&framework={framework}"
    pipelined, serial = _offline_tput(base, 64), _offline_tput(base + "&micro_batches=1", 64)
    assert low < pipelined / serial < high
    with pytest.raises(TargetError, match="micro_batches=3 must be at most pp=2"):
        parse_twin_url(base + "&micro_batches=3")


@pytest.mark.parametrize("query", ["mtp_al=2", "mtp=1&mtp_al=2.5"])
def test_an_acceptance_length_needs_drafts_to_accept(query: str) -> None:
    """At most mtp + 1 tokens come out of a verify step; an acceptance length without
    drafts, or above that, is refused naming the option."""
    with pytest.raises(TargetError, match=r"mtp_al=2(\.5)? must be between 1 and mtp\+1"):
        parse_twin_url(f"twin:B200/DeepSeek-R1?tp=8&precision=fp4&{query}")


def test_a_declared_kv_free_fraction_sizes_trt_s_pool_from_what_the_weights_leave() -> None:
    base = "twin:H200/Llama-3.1-70B?precision=fp8&framework=trt"
    full = parse_twin_url(base + "&kv_free_fraction=1").step_model().kv_budget_bytes_per_gpu()
    half = parse_twin_url(base + "&kv_free_fraction=0.5").step_model().kv_budget_bytes_per_gpu()
    default = parse_twin_url(base).step_model().kv_budget_bytes_per_gpu()
    assert half == pytest.approx(full / 2)
    assert default == pytest.approx(full * 0.9)  # the profile's free_gpu_memory_fraction
    with pytest.raises(TargetError, match="set one"):
        parse_twin_url(base + "&kv_free_fraction=0.5&gpu_memory_utilization=0.8")


def test_sglang_s_default_prefill_chunk_follows_the_reported_device_memory() -> None:
    # SGLang chunks prefill at 8192 tokens below 160 GiB (H200: 141) and 16384 from it (B200: 180)
    q = "/Qwen3.5-397B-A17B?tp=8&precision=fp8&framework=sglang"
    assert parse_twin_url("twin:H200" + q).engine.max_num_batched_tokens == 8192
    assert parse_twin_url("twin:B200" + q).engine.max_num_batched_tokens == 16384
    mine = parse_twin_url("twin:B200" + q + "&max_batched_tokens=4096")
    assert mine.engine.max_num_batched_tokens == 4096
    vllm = parse_twin_url("twin:B200/Qwen3.5-397B-A17B?tp=8&precision=fp8")
    assert vllm.engine.max_num_batched_tokens == 8192


def test_attention_dp_steps_wait_for_the_busiest_rank() -> None:
    # 64 decoding sequences over 8 attention-DP ranks: 8 each if even; at a balance ratio
    # (mean / busiest) of 0.8 the busiest rank carries 10, and only the decode share grows
    from dataclasses import replace

    cfg = parse_twin_url("twin:GB200/DeepSeek-R1?precision=fp4&tp=8&dp_attention=1")
    even = StepModel(cfg.hardware, cfg.model, cfg.parallel, replace(cfg.efficiency, dp_balance=1))
    skew = StepModel(cfg.hardware, cfg.model, cfg.parallel, replace(cfg.efficiency, dp_balance=0.8))
    dec = StepBatch(n_decode=64, decode_ctx_tokens=64 * 2000, n_sampled=64)
    assert even._rank_tokens(dec, 64) == 8 and skew._rank_tokens(dec, 64) == pytest.approx(10)
    mixed = StepBatch(n_decode=64, decode_ctx_tokens=64 * 2000, prefill_tokens=4096,
                      n_prefill_chunks=1, n_sampled=65)  # fmt: skip
    assert skew._rank_tokens(mixed, 64 + 4096) == pytest.approx(10 + 4096)
    assert skew.cost(dec).total_s > even.cost(dec).total_s
    tp = parse_twin_url("twin:GB200/DeepSeek-R1?precision=fp4&tp=8&ep=8")
    tp_skew = StepModel(tp.hardware, tp.model, tp.parallel, replace(tp.efficiency, dp_balance=0.8))
    assert (
        tp_skew.cost(dec).total_s
        == StepModel(tp.hardware, tp.model, tp.parallel, replace(tp.efficiency, dp_balance=1))
        .cost(dec)
        .total_s
    )  # without attention DP every rank runs every sequence


def test_sglang_caps_running_requests_at_48_under_speculative_decoding() -> None:
    q = "twin:H200/GLM-5?tp=8&precision=fp8&framework=sglang"
    assert parse_twin_url(q + "&mtp=3").engine.max_num_seqs == 48
    assert parse_twin_url(q).engine.max_num_seqs == 512  # without drafts: the default
    assert parse_twin_url(q + "&mtp=3&max_num_seqs=256").engine.max_num_seqs == 256
    # attention DP shares the cap out over the 8 ranks (the seat limit is per rank)
    assert parse_twin_url(q + "&mtp=3&dp_attention=1").engine.max_num_seqs == 6
    assert parse_twin_url(q.replace("sglang", "vllm") + "&mtp=3").engine.max_num_seqs == 512


def test_a_cap_the_engine_chose_itself_is_said() -> None:
    """The speculative cap the deployment did not set is named, with its value and the way to
    deploy another; a cap the URL sets, or none at all, says nothing."""
    q = "twin:H200/GLM-5?tp=8&precision=fp8&framework=sglang"
    (note,) = parse_twin_url(q + "&mtp=3&dp_attention=1").notes
    assert note.startswith("max_num_seqs=6 per rank: sglang caps running requests at 48")
    assert "the twin URL option max_num_seqs= deploys another cap" in note
    assert parse_twin_url(q + "&mtp=3&max_num_seqs=256").notes == ()
    assert parse_twin_url(q).notes == ()
    assert parse_twin_url(q + "&mtp=3").notes != parse_twin_url(q).notes
    assert twin_info(parse_twin_url(q + "&mtp=3"))["engine_defaults"][0].startswith(
        "max_num_seqs=48 per rank"
    )


def test_a_prefill_pool_can_run_attention_dp_under_tp_attention_decode() -> None:
    # TensorRT-LLM's low-latency recipes: DEP4 context servers, TEP8 generation servers
    q = "twin:B200/DeepSeek-R1?precision=fp4&tp=8&ep=8&disagg=1P5D&prefill_tp=4&framework=trt"
    same = parse_twin_url(q).prefill_parallel()
    dep = parse_twin_url(q + "&prefill_attention=dp").prefill_parallel()
    assert (same.dp_attention, same.tp, same.ep) == (False, 4, 4)
    assert (dep.dp_attention, dep.tp, dep.ep) == (True, 4, 4)
    assert not parse_twin_url(q + "&prefill_attention=dp").parallel.dp_attention  # decode: TEP
    wide = "twin:GB200/DeepSeek-R1?precision=fp4&tp=16&dp_attention=1&disagg=2P1D&prefill_tp=4"
    assert not parse_twin_url(wide + "&prefill_attention=tp").prefill_parallel().dp_attention
    assert parse_twin_url(wide).prefill_parallel().dp_attention  # auto: as the decode pool
    with pytest.raises(TargetError, match="set disagg"):
        parse_twin_url("twin:B200/DeepSeek-R1?tp=8&prefill_attention=dp")


def test_chunked_prefill_is_a_deployment_option_over_the_frameworks_default() -> None:
    base = "twin:H200/Llama-3.1-8B?precision=fp8&framework=trt&max_batched_tokens=2048"
    assert not parse_twin_url(base).engine.chunked_prefill  # TensorRT-LLM's default: off
    # the default is said where the twin gives its engine defaults; a declared choice is not
    said = [n for n in parse_twin_url(base).notes if n.startswith("chunked prefill off")]
    assert len(said) == 1 and "max_batched_tokens=2048" in said[0]
    declared = parse_twin_url(base + "&chunked_prefill=0").notes
    assert not any(n.startswith("chunked prefill") for n in declared)
    assert parse_twin_url(base + "&chunked_prefill=1").engine.chunked_prefill
    vllm = "twin:H200/Llama-3.1-8B?precision=fp8"
    assert parse_twin_url(vllm).engine.chunked_prefill
    assert not parse_twin_url(vllm + "&chunked_prefill=0").engine.chunked_prefill
    with pytest.raises(TargetError, match="chunked_prefill"):
        parse_twin_url(base + "&chunked_prefill=yes")

    # 2,048-token prompts and a 2,048-token budget: unchunked, a prompt fits a step only with
    # no sequence decoding beside it, so 16 requests run one after another; chunked, the
    # prompts share steps with the decodes and the 16 run together
    def tput(url: str) -> float:
        res = run_point(parse_twin_url(url), length_requests(16, 2048, 64), "c16", concurrency=16)
        return frontier_rows([res])[0].tput_per_gpu

    alone, chunked = tput(base), tput(base + "&chunked_prefill=1")
    assert chunked > 4 * alone


def test_the_fp8_context_path_is_said_where_it_applies() -> None:
    def said(url: str) -> bool:
        return any(
            n.startswith("prompts' attention at the FP8 peak") for n in parse_twin_url(url).notes
        )

    # TensorRT-LLM over FP8 attention projections, or over an FP8 cache; not over BF16 ones
    # with a BF16 cache (gpt-oss keeps its attention in BF16), and not on another engine
    assert said("twin:H200/Llama-3.1-70B?precision=fp8&tp=2&framework=trt")
    assert said("twin:B200/gpt-oss-120b?kv=fp8&framework=trt")
    assert not said("twin:H200/gpt-oss-120b?framework=trt")
    assert not said("twin:H200/Llama-3.1-70B?precision=fp8&tp=2&framework=vllm")


def test_synchronous_scheduling_makes_each_step_wait_for_its_host_work() -> None:
    """With async scheduling off, a step also pays sync_seq_overhead_s per request it schedules
    (decoding sequences and prompt chunks): 20 us x (64 + 2) = 1.32 ms; under attention DP over
    8 ranks the busiest rank's share, 66 / 8 / dp_balance 0.8 = 10.3 requests -> 0.206 ms. With
    it on, the host's work runs while the step computes and the step pays none of it."""
    from dataclasses import replace

    from scoville.twin.layout import Efficiency

    m, hw = CAT.get_model("DeepSeek-R1"), CAT.get_hardware("B200")
    batch = StepBatch(
        n_decode=64, decode_ctx_tokens=64 * 2048, prefill_tokens=512, n_prefill_chunks=2,
        prefill_pairs=2 * 256 * 128.5, n_sampled=64,
    )  # fmt: skip

    def overhead_s(par: Parallel, asynchronous: bool) -> float:
        eff = replace(
            Efficiency(), sync_seq_overhead_s=20e-6, async_scheduling=asynchronous, dp_balance=0.8
        )
        return StepModel(hw, m, par, eff).cost(batch).overhead_s

    tp = Parallel(tp=8, ep=8, precision="fp4")
    dp = Parallel(tp=8, ep=8, precision="fp4", dp_attention=True)
    assert overhead_s(tp, False) - overhead_s(tp, True) == pytest.approx(1.32e-3)
    assert overhead_s(dp, False) - overhead_s(dp, True) == pytest.approx(0.20625e-3)


def test_async_scheduling_is_a_deployment_option_that_only_an_engine_with_a_host_cost_feels() -> (
    None
):
    vllm = "twin:H200/Llama-3.1-8B?precision=fp8&framework=vllm"
    assert parse_twin_url(vllm).efficiency.async_scheduling  # auto: on
    off = parse_twin_url(vllm + "&async_scheduling=0")
    assert not off.efficiency.async_scheduling and off.efficiency.sync_seq_overhead_s > 0
    assert any(n.startswith("async scheduling off") for n in off.notes)
    assert not any(n.startswith("async scheduling") for n in parse_twin_url(vllm).notes)
    with pytest.raises(TargetError, match="async_scheduling"):
        parse_twin_url(vllm + "&async_scheduling=no")
    # only a synchronously scheduled row informs the host cost in `twin fit`
    assert fit_reads("frameworks.vllm.sync_seq_overhead_s", vllm + "&async_scheduling=0")
    assert not fit_reads("frameworks.vllm.sync_seq_overhead_s", vllm)

    # 256 sequences at once: the synchronous deployment is slower; TensorRT-LLM's profile
    # declares no such cost, so switching it off there changes nothing
    def tput(url: str) -> float:
        res = run_point(parse_twin_url(url), length_requests(256, 128, 64), "c256", concurrency=256)
        return frontier_rows([res])[0].tput_per_gpu

    assert tput(vllm + "&async_scheduling=0") < 0.97 * tput(vllm)
    trt = "twin:H200/Llama-3.1-8B?precision=fp8&framework=trt"
    assert tput(trt + "&async_scheduling=0") == tput(trt)


def test_an_offline_driver_in_the_engine_s_process_has_its_own_step_time_and_no_front_end() -> None:
    """`bench-trt` (trtllm-bench) keeps TensorRT-LLM's engine but pays the bench stack's fixed
    time per step, not trtllm-serve's, and no front end; only its rows inform that time."""
    book = load_profiles()
    served = parse_twin_url("twin:H200/Llama-3.1-8B?precision=fp8&framework=trt")
    bench = parse_twin_url("twin:H200/Llama-3.1-8B?precision=fp8&framework=bench-trt")
    assert served.efficiency.step_overhead_s == book.frameworks["trt"].step_overhead_s
    assert bench.efficiency.step_overhead_s == book.stacks["bench"].engine_step_overhead_s["trt"]
    assert bench.efficiency.step_overhead_s < served.efficiency.step_overhead_s
    assert bench.engine.frontend_s == 0.0 and bench.engine.frontend_s_per_token == 0.0
    assert served.engine.frontend_s > 0.0
    assert bench.efficiency.layer_overhead_s == served.efficiency.layer_overhead_s
    assert fit_reads(
        "stacks.bench.engine_step_overhead_s.trt", "twin:H200/Llama-3.1-8B?framework=bench-trt"
    )
    assert not fit_reads(
        "stacks.bench.engine_step_overhead_s.trt", "twin:H200/Llama-3.1-8B?framework=trt"
    )
    assert not any(p.name.startswith("stacks.bench.frontend") for p in FREE_PARAMS)
