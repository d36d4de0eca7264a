"""Serving-framework profiles: per-step and per-layer overheads, the scheduler's prefill policy
(chunked or whole prompts, mixed into decode steps or run as separate batches, the token
budget) and per-vendor efficiency factors, from `scoville/data/twin/profiles.yaml`.

A profile is chosen by the twin URL's `framework=` option (vllm, sglang, trt, atom; a
`dynamo-` or `mori-` prefix keeps the engine underneath and puts that serving stack's front
end before it; a `bench-` prefix runs it under an offline driver in its own process, with no
front end and the driver's own step time). The named free parameters that `scoville twin fit`
may change are listed in the data file with their fitted values.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from scoville.errors import TargetError
from scoville.twin.admission import AdmissionPolicy
from scoville.twin.catalogue import DAY_PATTERN
from scoville.twin.layout import Efficiency

PROFILE_FILE = "profiles.yaml"


class Profile(BaseModel):
    """One serving engine's fixed costs and scheduler policy."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    description: str
    step_overhead_s: float = Field(..., ge=0)
    layer_overhead_s: float = Field(..., ge=0)
    # more per mixture-of-experts layer (router, permute, two grouped GEMMs, un-permute)
    moe_layer_overhead_s: float = Field(0.0, ge=0)
    # the same where the experts are expert-parallel (TEP or wide EP, `Efficiency`); None = as
    # the tensor-parallel path's
    ep_moe_layer_overhead_s: float | None = Field(None, ge=0)
    # more per sparse-attention layer (an indexer's projections, logits and top-k kernels)
    sparse_layer_overhead_s: float = Field(0.0, ge=0)
    # more per decoding sequence per speculative (MTP) verify step (`Efficiency`)
    spec_seq_overhead_s: float = Field(0.0, ge=0)
    # more per draft (MTP) pass of a speculative step (`Efficiency`)
    draft_pass_overhead_s: float = Field(0.0, ge=0)
    # host time per scheduled request per step when the engine schedules synchronously
    # (async scheduling off, `Efficiency`); the source says why
    sync_seq_overhead_s: float = Field(0.0, ge=0)
    sync_source: str = ""
    chunked_prefill: bool = True
    # the engine runs prefill (context) attention in FP8 where the KV cache is FP8 or the
    # attention projections are quantised to FP8 or FP4 (TensorRT-LLM); the source says why
    fp8_context_attention: bool = False
    mix_prefill_decode: bool = True
    max_batched_tokens: int = Field(8192, ge=1)
    # a larger default budget from this much driver-reported device memory up (GiB -> tokens)
    max_batched_tokens_from_gib: dict[float, int] = Field(default_factory=dict)
    # the seat limit the engine sets itself under speculative decoding when the deployment
    # does not set one (SGLang: 48 running requests with EAGLE / MTP); None = no such rule
    spec_max_num_seqs: int | None = Field(None, ge=1)
    # admission (scoville.twin.admission): KV reserved for future output tokens at admission,
    # as a fraction of them (start value, floor, steps of linear decay), and the steps between
    # an arrival and the first schedule that can include it
    reserve_init: float = Field(0.0, ge=0, le=1)
    reserve_floor: float = Field(0.0, ge=0, le=1)
    reserve_decay_steps: int = Field(0, ge=0)
    lag_steps: int = Field(0, ge=0, le=4)
    # KV pool as a fraction of the memory left after weights (TensorRT-LLM); None = vLLM's rule
    kv_free_memory_fraction: float | None = Field(None, gt=0, le=1)
    # weights + KV pool as a fraction of device memory when the deployment does not say
    # (SGLang's mem_fraction_static as deployed); None = the Efficiency default (vLLM's 0.90)
    gpu_memory_utilization: float | None = Field(None, gt=0, le=1)
    # the front end's time before the scheduler sees a request (HTTP, tokenization, hand-off
    # to the engine process): seconds per request and per prompt token
    frontend_s: float = Field(0.0, ge=0, le=0.5)
    frontend_s_per_token: float = Field(0.0, ge=0, le=1e-4)
    source: str
    admission_source: str = ""

    def admission(self) -> AdmissionPolicy:
        return AdmissionPolicy(
            self.reserve_init, self.reserve_floor, self.reserve_decay_steps, self.lag_steps
        )


class Stack(BaseModel):
    """A serving stack in front of the engine (Dynamo, a MoRI router): its front end's time
    before the engine's scheduler sees a request. A stack that tokenizes the prompt itself and
    hands the engine token ids replaces the engine's own front end; one that forwards the
    request to the engine's HTTP server adds its time to the engine's front end."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    description: str
    tokenizes: bool  # True: the engine's own HTTP server and tokenizer are not on the path
    frontend_s: float = Field(0.0, ge=0, le=0.5)
    frontend_s_per_token: float = Field(0.0, ge=0, le=1e-4)
    # the engine's fixed time per step when this stack runs it as a worker of its own (no
    # HTTP server, detokenizer or response streaming in the engine's loop), per engine; an
    # engine not named keeps its own `step_overhead_s`
    engine_step_overhead_s: dict[str, Annotated[float, Field(ge=0, le=0.05)]] = Field(
        default_factory=dict
    )
    engine_source: str = ""
    source: str


class VendorEfficiency(BaseModel):
    """Achievable-fraction factors of one vendor's kernel stack (multiplying `Efficiency`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    hbm_bw_scale: float = Field(1.0, gt=0, le=1.25)
    gemm_scale: float = Field(1.0, gt=0, le=1.4)
    # routed-expert grouped-GEMM weight streaming per expert weight format class (bf16, fp8,
    # fp4, int4), multiplying the achievable bandwidth of that operator (decode, mostly)
    expert_bw: dict[Literal["bf16", "fp8", "fp4", "int4"], float] = Field(default_factory=dict)
    # the routed experts' large-M grouped-GEMM rate as a fraction of the dense GEMM rate
    # (prefill, mostly); a grouped GEMM never beats the dense one, so at most 1
    expert_gemm: float = Field(1.0, gt=0, le=1.0)
    # MLA decode over a 16-bit (bf16) latent cache, per serving engine whose kernels for it on
    # this stack take a path of their own: the path's attention compute rate as a fraction of
    # the BF16 dense peak and its fixed time per attention head per layer per decode step
    # (`Efficiency`); an engine not named, and an FP8 cache, are not affected
    mla16_rate: dict[str, Annotated[float, Field(gt=0, le=1.0)]] = Field(default_factory=dict)
    mla16_head_layer_s: dict[str, Annotated[float, Field(ge=0, le=1e-4)]] = Field(
        default_factory=dict
    )
    # the same two factors for MLA decode over an FP8 latent cache, per engine whose FP8 MLA
    # kernels on this stack have costs the twin's attention rate does not hold
    mla8_rate: dict[str, Annotated[float, Field(gt=0, le=1.0)]] = Field(default_factory=dict)
    mla8_head_layer_s: dict[str, Annotated[float, Field(ge=0, le=1e-4)]] = Field(
        default_factory=dict
    )
    # per serving engine whose tensor-parallel collectives on this stack run kernels of its own
    # (vLLM's custom all-reduce on ROCm): a factor on every fabric latency of its steps, over the
    # book's collective_latency_scale; an engine not named keeps the book's scale
    collective_latency: dict[str, Annotated[float, Field(gt=0, le=2.0)]] = Field(
        default_factory=dict
    )
    source: str = ""


class SoftwareTrend(BaseModel):
    """How one vendor's serving software changes with its date (`software.software_speed`): a steady
    rate over the calibrated dates, and a young port's slowdown, which a model's first weeks on
    the engines carry and which fades as its kernels are tuned."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    # speed of the same deployment a year later (1 = no trend), between `first` and `last`
    per_year: float = Field(1.0, gt=0)
    # a port's extra time on the model's release day (1 = twice the mature time), fading as
    # exp(-age / young_days)
    young: float = Field(0.0, ge=0)
    young_days: float = Field(30.0, gt=0)
    # the date the fitted factors describe (the dev rows' median run date), and the dev rows'
    # first and last run dates, outside which the trend is not extended
    ref: str = Field(..., pattern=DAY_PATTERN)
    first: str = Field(..., pattern=DAY_PATTERN)
    last: str = Field(..., pattern=DAY_PATTERN)
    source: str = ""


class ProfileBook(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    schema_: str = Field(alias="schema")
    collective_latency_scale: float = Field(1.0, gt=0)
    # attention data-parallel: mean / busiest rank's decode tokens in a step (1 = even split)
    dp_balance: float = Field(1.0, gt=0, le=1)
    dp_balance_source: str = ""
    # routed experts' popularity falls as rank^-a (0 = uniform routing; `Efficiency`)
    expert_concentration: float = Field(0.0, ge=0, le=3)
    expert_concentration_source: str = ""
    # multiplies the default acceptance curve's accepted drafts per verify step (`SpecDecode`)
    # for every engine; a deployment's declared acceptance length (`mtp_al`) is not scaled
    acceptance_scale: float = Field(1.0, gt=0, le=1.5)
    acceptance_source: str = ""
    # mean output tokens before a forced-length output repeats itself, all drafts then
    # accepted (`SpecDecode.steps_per_token`; 0 = never); the default curve only
    loop_after_tokens: float = Field(0.0, ge=0)
    loop_after_source: str = ""
    # efficiency of a declared untuned kernel path (kernels=untuned) for quantised weights
    untuned_kernel_scale: float = Field(1.0, gt=0, le=1)
    untuned_source: str = ""
    # where every framework's front-end priors come from (one measurement and one citation)
    frontend_source: str = ""
    # where every framework's sparse-attention (indexer layer) prior comes from
    sparse_source: str = ""
    # where every framework's per-sequence speculative verify prior comes from
    spec_source: str = ""
    # where every framework's draft-pass prior comes from
    draft_source: str = ""
    fitted: dict[str, Any] = Field(default_factory=dict)
    frameworks: dict[str, Profile]
    stacks: dict[str, Stack] = Field(default_factory=dict)
    vendors: dict[str, VendorEfficiency] = Field(default_factory=dict)
    # per vendor: its serving software's trend with the date (`software.software_speed`)
    software: dict[str, SoftwareTrend] = Field(default_factory=dict)


def load_profiles(text: str | None = None) -> ProfileBook:
    """The profile book in `text`, or the shipped one (parsed once per process: it is frozen)."""
    if text is None:
        return _shipped_book()
    return ProfileBook.model_validate(yaml.safe_load(text))


@cache
def _shipped_book() -> ProfileBook:
    text = resources.files("scoville").joinpath("data", "twin", PROFILE_FILE).read_text("utf-8")
    return ProfileBook.model_validate(yaml.safe_load(text))


FAMILIES: dict[str, str] = {
    "H100": "Hopper",
    "H200": "Hopper",
    "B200": "Blackwell",
    "GB200": "Blackwell",
    "B300": "Blackwell Ultra",
    "GB300": "Blackwell Ultra",
    "MI300X": "CDNA3",
    "MI325X": "CDNA3",
    "MI355X": "CDNA4",
}


# a family without its own kernel-stack entry runs its parent's kernels
PARENT_FAMILY: dict[str, str] = {"Blackwell Ultra": "Blackwell"}


def hardware_family(name: str) -> str:
    """The architecture generation a catalogue entry belongs to (its own name if unknown)."""
    return FAMILIES.get(name, name)


STACK_PREFIXES = ("dynamo", "mori", "bench")  # `framework=` prefixes naming a serving stack


def split_framework(framework: str) -> tuple[str, str]:
    """`dynamo-trt` -> (`dynamo`, `trt`), `sglang` -> (``, `sglang`): the serving stack in
    front (empty for an engine's own server) and the engine underneath."""
    name = framework.strip().lower()
    for stack in STACK_PREFIXES:
        if name.startswith(stack + "-"):
            return stack, name[len(stack) + 1 :]
    return "", name


def engine_of(framework: str) -> str:
    """`dynamo-trt` -> `trt`, `mori-sglang` -> `sglang`: the engine underneath a front end."""
    return split_framework(framework)[1]


def frontend_owners(book: ProfileBook, framework: str) -> tuple[str, ...]:
    """The profile-book entries whose front-end time a request to `framework` pays, in order:
    `("stacks.dynamo",)` for Dynamo (it tokenizes), `("frameworks.sglang", "stacks.mori")` for
    a MoRI router in front of SGLang's servers, `("frameworks.trt",)` for trtllm-serve."""
    stack, engine = split_framework(framework)
    entry = book.stacks.get(stack) if stack else None
    if entry is None:
        return (f"frameworks.{engine}",)
    if entry.tokenizes:
        return (f"stacks.{stack}",)
    return (f"frameworks.{engine}", f"stacks.{stack}")


def step_owner(book: ProfileBook, framework: str) -> str:
    """The profile-book entry whose per-step fixed time `framework`'s engine steps pay:
    `stacks.dynamo` for TensorRT-LLM workers under Dynamo where that stack names the engine,
    else the engine's own (`frameworks.trt`)."""
    stack, engine = split_framework(framework)
    entry = book.stacks.get(stack) if stack else None
    if entry is not None and engine in entry.engine_step_overhead_s:
        return f"stacks.{stack}"
    return f"frameworks.{engine}"


def step_overhead(book: ProfileBook, framework: str) -> float:
    """Seconds per engine step of `framework`'s fixed host time (`step_owner`)."""
    stack, engine = split_framework(framework)
    if step_owner(book, framework).startswith("stacks."):
        return book.stacks[stack].engine_step_overhead_s[engine]
    return book.frameworks[engine].step_overhead_s


def frontend_cost(book: ProfileBook, framework: str) -> tuple[float, float]:
    """(seconds per request, seconds per prompt token) of `framework`'s front end: the sum over
    `frontend_owners`."""
    fixed = per_token = 0.0
    for owner in frontend_owners(book, framework):
        kind, name = owner.split(".")
        entry: Profile | Stack = (
            book.frameworks[name] if kind == "frameworks" else book.stacks[name]
        )
        fixed += entry.frontend_s
        per_token += entry.frontend_s_per_token
    return fixed, per_token


@dataclass(frozen=True, slots=True)
class Applied:
    """What a framework profile sets: the efficiency and the scheduler policy."""

    efficiency: Efficiency
    chunked_prefill: bool
    mix_prefill_decode: bool
    max_batched_tokens: int
    admission: AdmissionPolicy
    gpu_memory_utilization: float | None = None  # the profile's, where it sets one
    spec_max_num_seqs: int | None = None  # the seat limit under speculative decoding
    frontend_s: float = 0.0  # the serving stack's front end's fixed time per request
    frontend_s_per_token: float = 0.0  # and its time per prompt token (`frontend_cost`)
    acceptance_scale: float = 1.0  # the book's, for the default acceptance curve (`SpecDecode`)
    loop_after_tokens: float = 0.0  # the book's: forced outputs' repetition (`SpecDecode`)


def apply_profile(
    book: ProfileBook,
    framework: str,
    vendor: str,
    base: Efficiency | None = None,
    family: str = "",
    untuned: bool = False,
    device_gib: float = 0.0,
) -> Applied:
    """The efficiency and scheduler of `framework` on hardware of `vendor`; a kernel-stack
    entry for the hardware `family` (CDNA3, Hopper, ...), or else its parent family's, wins
    over the vendor's. `untuned` declares an untuned kernel path for quantised weights;
    `device_gib` (the memory the driver reports) picks a memory-tiered token budget."""
    name = engine_of(framework)
    prof = book.frameworks.get(name)
    if prof is None:
        raise TargetError(
            f"Unknown framework {framework!r}; known: {', '.join(sorted(book.frameworks))} "
            "(a dynamo-, mori- or bench- prefix keeps the engine underneath)."
        )
    base = base or Efficiency()
    chain = (family, PARENT_FAMILY.get(family, ""), vendor)
    v = next((book.vendors[k] for k in chain if k in book.vendors), VendorEfficiency())
    stack = split_framework(framework)[0]
    if stack and stack not in book.stacks:
        raise TargetError(
            f"Unknown serving stack {stack!r} in framework {framework!r}; known: "
            f"{', '.join(sorted(book.stacks))}."
        )
    eff = replace(
        base,
        step_overhead_s=step_overhead(book, framework),
        layer_overhead_s=prof.layer_overhead_s,
        moe_layer_overhead_s=prof.moe_layer_overhead_s,
        ep_moe_layer_overhead_s=prof.ep_moe_layer_overhead_s,
        sparse_layer_overhead_s=prof.sparse_layer_overhead_s,
        spec_seq_overhead_s=prof.spec_seq_overhead_s,
        draft_pass_overhead_s=prof.draft_pass_overhead_s,
        sync_seq_overhead_s=prof.sync_seq_overhead_s,
        hbm_bw=min(1.0, base.hbm_bw * v.hbm_bw_scale),
        attention_hbm_bw=min(1.0, base.attention_hbm_bw * v.hbm_bw_scale),
        gemm_max=min(1.0, base.gemm_max * v.gemm_scale),
        collective_latency_scale=book.collective_latency_scale
        * v.collective_latency.get(name, 1.0),
        dp_balance=book.dp_balance,
        expert_concentration=book.expert_concentration,
        kv_free_memory_fraction=prof.kv_free_memory_fraction,
        expert_kernel=tuple(sorted(v.expert_bw.items())),
        expert_gemm=v.expert_gemm,
        kernel_scale=book.untuned_kernel_scale if untuned else 1.0,
        mla16_rate=v.mla16_rate.get(name, 1.0),
        mla16_head_layer_s=v.mla16_head_layer_s.get(name, 0.0),
        mla8_rate=v.mla8_rate.get(name, 1.0),
        mla8_head_layer_s=v.mla8_head_layer_s.get(name, 0.0),
        fp8_context_attention=prof.fp8_context_attention,
    )
    tiers = [t for gib, t in sorted(prof.max_batched_tokens_from_gib.items()) if device_gib >= gib]
    fixed, per_token = frontend_cost(book, framework)
    return Applied(
        eff,
        prof.chunked_prefill,
        prof.mix_prefill_decode,
        tiers[-1] if tiers else prof.max_batched_tokens,
        prof.admission(),
        prof.gpu_memory_utilization,
        prof.spec_max_num_seqs,
        fixed,
        per_token,
        book.acceptance_scale,
        book.loop_after_tokens,
    )
