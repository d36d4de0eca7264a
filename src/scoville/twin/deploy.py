"""Deployment options of a twin beyond its basic layout: the serving framework's profile,
data-parallel attention, pipeline stages, expert load skew, speculative decoding (MTP) and
FP4 activations. `apply_deploy_options` applies a validated `Deployment` to a `TwinConfig`;
`TwinOptions` (the URL's options, typed and checked) builds the `Deployment`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from scoville.twin.cluster import TwinConfig
from scoville.twin.layout import SpecDecode, fp8_context_attention
from scoville.twin.profiles import (
    ProfileBook,
    apply_profile,
    hardware_family,
    load_profiles,
)
from scoville.twin.shape import effective_formats
from scoville.twin.software import software_speed, young_port

KernelPath = Literal["tuned", "untuned"]
Switch = Literal["auto", "0", "1"]  # auto: what the hardware or the framework gives


def switch_on(s: Switch, auto: bool) -> bool:
    """A three-way deployment switch as on or off: `auto` where it says auto."""
    return auto if s == "auto" else s == "1"


@dataclass(frozen=True, slots=True)
class Deployment:
    """The deployment choices this module applies, already validated (`TwinOptions` types and
    checks each one and says which URL option a bad value came from)."""

    framework: str = "vllm"
    kernels: KernelPath = "tuned"
    dp_attention: bool = False
    pp: int = 1
    micro_batches: int | None = None
    expert_skew: float | None = None
    expert_concentration: float | None = None
    mtp: int = 0
    mtp_al: float | None = None
    loop_after: float | None = None
    fp4_act: Switch = "auto"
    chunked_prefill: Switch = "auto"
    async_scheduling: Switch = "auto"
    batch_wait_iters: int = 0
    batch_wait_ratio: float = 0.0
    recv_interval: int = 1
    adp_balance_iters: int = 0
    kv_free_fraction: float | None = None
    software_date: str | None = None


def apply_deploy_options(
    cfg: TwinConfig,
    d: Deployment,
    book: ProfileBook | None = None,
    explicit: frozenset[str] = frozenset(),
) -> TwinConfig:
    """`cfg` deployed as `d`. `explicit` names the options the user set, which a framework
    profile's defaults do not override."""
    book = book or load_profiles()
    applied = apply_profile(
        book,
        d.framework,
        cfg.hardware.vendor,
        cfg.efficiency,
        hardware_family(cfg.hardware.name),
        untuned=d.kernels == "untuned",
        device_gib=cfg.hardware.device_memory_bytes / 2**30,
    )
    # the URL's explicit efficiency settings win over the profile's
    gmu = cfg.efficiency.gpu_memory_utilization
    if "gpu_memory_utilization" not in explicit and applied.gpu_memory_utilization is not None:
        gmu = applied.gpu_memory_utilization  # the engine's memory fraction as deployed
    eff = replace(
        applied.efficiency,
        gpu_memory_utilization=gmu,
        hbm_bw=applied.efficiency.hbm_bw * cfg.efficiency.hbm_bw / 0.80,
    )
    if "gpu_memory_utilization" in explicit:  # it also replaces a free-memory KV rule
        eff = replace(eff, kv_free_memory_fraction=None)
    if d.kv_free_fraction is not None:  # TensorRT-LLM's rule, with the deployment's fraction
        eff = replace(eff, kv_free_memory_fraction=d.kv_free_fraction)
    # the software's date: the vendor's trend, and a young port unless the kernel path is declared
    speed, software_note = software_speed(
        book,
        cfg.hardware.vendor,
        d.software_date,
        cfg.model.released,
        young=young_port(cfg.model.released, d.kernels),
    )
    eff = eff.at_speed(speed)
    if not switch_on(d.async_scheduling, True):  # each step waits for its host work
        eff = replace(eff, async_scheduling=False)
    if d.expert_concentration is not None:  # the traffic's own routing, over the fitted one
        eff = replace(eff, expert_concentration=d.expert_concentration)
    par = cfg.parallel
    fp4_on = switch_on(
        d.fp4_act, par.precision == "fp4" and cfg.hardware.dense_tflops.fp4 is not None
    )
    par = replace(
        par,
        dp_attention=d.dp_attention,
        ep=par.tp if d.dp_attention else par.ep,
        pp=d.pp,
        expert_skew=d.expert_skew if d.expert_skew is not None else par.expert_skew,
        spec=SpecDecode(
            draft_tokens=d.mtp,
            acceptance_length=d.mtp_al,
            acceptance_scale=applied.acceptance_scale,
            loop_after_tokens=applied.loop_after_tokens if d.loop_after is None else d.loop_after,
        ),
        fp4_activations=fp4_on,
    )
    admission = replace(  # the deployment's own holds and receive interval
        applied.admission,
        batch_wait_iters=d.batch_wait_iters,
        batch_wait_ratio=d.batch_wait_ratio,
        recv_interval=d.recv_interval,
        balance_iters=d.adp_balance_iters,
        balance_ranks=par.dp,
    )
    engine = replace(
        cfg.engine,
        chunked_prefill=switch_on(d.chunked_prefill, applied.chunked_prefill),
        mix_prefill_decode=applied.mix_prefill_decode,
        admission=admission,
        frontend_s=applied.frontend_s,
        frontend_s_per_token=applied.frontend_s_per_token,
        max_num_batched_tokens=cfg.engine.max_num_batched_tokens
        if "max_batched_tokens" in explicit
        else applied.max_batched_tokens,
        micro_batches=d.micro_batches,
    )
    notes = list(cfg.notes)
    if d.mtp and applied.spec_max_num_seqs and "max_num_seqs" not in explicit:
        # the engine's own cap, shared out over attention-DP ranks (max_num_seqs is per rank)
        per_rank = max(1, applied.spec_max_num_seqs // par.dp)
        engine = replace(engine, max_num_seqs=per_rank)
        notes.append(
            f"max_num_seqs={per_rank} per rank: {d.framework} caps running requests at "
            f"{applied.spec_max_num_seqs} under speculative decoding when the deployment sets no "
            "max_num_seqs; the rest queue (the twin URL option max_num_seqs= deploys another cap)"
        )
    if not engine.chunked_prefill and d.chunked_prefill == "auto":
        notes.append(
            f"chunked prefill off ({d.framework}'s default): a prompt enters a step only if all "
            f"of it fits the token budget (max_batched_tokens={engine.max_num_batched_tokens}) "
            "beside the decoding sequences, so a prompt as long as the budget runs alone (the "
            "twin URL option chunked_prefill=1 deploys it on)"
        )
    if d.pp > 1:
        notes.append(
            f"pipeline of {d.pp} stages, {d.micro_batches or d.pp} batch(es) in flight at once, "
            "each a full pass through the stages a step, sharing the replica's KV pool (the "
            "twin URL option micro_batches= deploys another count)"
        )
    if not eff.async_scheduling:
        notes.append(
            f"async scheduling off: every step also waits {eff.sync_seq_overhead_s * 1e6:.1f} us "
            f"per request it schedules for {d.framework}'s host work (scheduling, inputs, outputs)"
            if eff.sync_seq_overhead_s > 0
            else f"async scheduling off: {d.framework}'s profile declares no host time per "
            "request, so its steps are unchanged"
        )
    attention = effective_formats(cfg.model, par.precision, cfg.hardware.fp4_weight_format)
    if fp8_context_attention(eff, cfg.hardware, par, attention["attention"]):
        notes.append(
            f"prompts' attention at the FP8 peak: {d.framework} runs its context attention "
            "kernels in FP8 over an FP8 cache or FP8/FP4 attention projections"
        )
    labels = {**cfg.labels, "framework": d.framework, "kernels": d.kernels}
    if d.software_date:  # the user's date and what it does (not an engine default: a note)
        labels["software_date"] = d.software_date
        labels["software"] = software_note
    return replace(
        cfg, parallel=par, efficiency=eff, engine=engine, labels=labels, notes=tuple(notes)
    )
