"""The twin's free parameters: the named factors of the profile book that `twin fit` may move
(`FREE_PARAMS`, with their bounds and order), and which calibration points' predictions each one
touches (`Owner`: what decides that; `fittable`: whether the dev rows it touches may fit it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scoville.twin.calibration import CalPoint, point_options
from scoville.twin.cluster import TwinConfig
from scoville.twin.layout import format_class, mla_cache
from scoville.twin.profiles import (
    STACK_PREFIXES,
    ProfileBook,
    engine_of,
    frontend_owners,
    hardware_family,
    load_profiles,
    step_owner,
)
from scoville.twin.shape import effective_formats
from scoville.twin.software import young_port

SPEC_ONLY = ("spec_seq_overhead_s", "draft_pass_overhead_s")  # costs only a speculative row pays
# an engine's MLA decode path on a kernel stack, per latent-cache dtype: its factors' prefixes
MLA_PATH_CACHE = {"mla16_": "bf16", "mla8_": "fp8"}
STACK_MODELS = 2  # models whose dev rows a kernel-stack factor needs before it is fitted
FRAMEWORKS = ("vllm", "sglang", "trt", "atom")
# every front end with its own time: the engines' own servers, then the serving stacks'
# (an offline driver in the engine's process has none: `stacks.bench`)
FRONTENDS = (
    *(f"frameworks.{fw}" for fw in FRAMEWORKS),
    *(f"stacks.{s}" for s in STACK_PREFIXES if s != "bench"),
)
FAMILY_STACKS = ("Hopper", "Blackwell", "CDNA3", "CDNA4")  # families with kernel-stack factors
# large GEMMs reach about 80 % of the dense peak (cuBLAS / hipBLASLt practice): gemm_max 0.70 x
# 1.15; a fit that wants more is absorbing something else
GEMM_SCALE_MAX = 1.15


@dataclass(frozen=True, slots=True)
class FreeParam:
    """A named parameter of the profile book: where it lives, its bounds, which points."""

    name: str  # e.g. "frameworks.trt.layer_overhead_s", "vendors.CDNA3.hbm_bw_scale"
    lo: float
    hi: float
    integer: bool = False

    def get(self, book: ProfileBook) -> float:
        value = _walk(book.model_dump(by_alias=True), self.name)
        assert isinstance(value, int | float)
        return float(value)

    def set(self, book: ProfileBook, value: float) -> ProfileBook:
        data = book.model_dump(by_alias=True)
        keys = self.name.split(".")
        node = data
        for k in keys[:-1]:
            node = node[k]
        node[keys[-1]] = round(value) if self.integer else value
        return ProfileBook.model_validate(data)

    def touches(self, owner: Owner) -> bool:
        parts = self.name.split(".")
        if owner.untuned != (parts[0] == "untuned_kernel_scale"):
            return False  # a declared untuned row informs only the untuned scale
        if parts[0] == "dp_balance":
            return owner.dp_attention  # only attention-DP ranks wait for the busiest one
        if parts[0] == "expert_concentration":
            return owner.tp_sliced and bool(owner.expert_format)  # the TP-sliced experts' reads
        if parts[0] in ("acceptance_scale", "loop_after_tokens"):
            return owner.default_acceptance  # speculative rows on the default curve only
        if parts[-1].startswith("frontend_s"):
            return ".".join(parts[:2]) in owner.frontends  # the front ends its requests pass
        if parts[0] == "stacks" and parts[2] == "engine_step_overhead_s":
            # that stack's workers of that engine
            return owner.step_owner == "stacks." + parts[1] and owner.engine == parts[3]
        if parts[0] == "frameworks":
            return _engine_touches(parts, owner)
        if parts[0] == "vendors":
            return _kernel_stack_touches(parts, owner, self.mla_cache)
        if parts[0] == "software":
            # that vendor's rows that state a run date; a young port's only where the model's
            # release date is known and no kernel path is declared
            young = parts[2].startswith("young")
            return owner.vendor == parts[1] and owner.dated and (owner.young_port or not young)
        return True

    @property
    def family_wide(self) -> bool:
        """A hardware family's or vendor's own scale (HBM, GEMM), shared by every model."""
        return self.name.startswith("vendors.") and not self.per_stack

    @property
    def mla_cache(self) -> str:
        """The latent-cache dtype whose MLA decode path this factor belongs to
        (`vendors.<family>.mla16_*.<engine>`: bf16; `mla8_*`: fp8), or "" for any other."""
        parts = self.name.split(".")
        if parts[0] != "vendors" or len(parts) < 3:
            return ""
        return next((c for pre, c in MLA_PATH_CACHE.items() if parts[2].startswith(pre)), "")

    @property
    def per_stack(self) -> bool:
        """A kernel-stack factor (expert_bw, expert_gemm, an engine's MLA decode path), keyed
        by hardware family rather than shared by it; fitted only where rows of `stack_models`
        models inform it."""
        return (
            ".expert_bw." in self.name
            or self.name.endswith(".expert_gemm")
            or self.mla_cache != ""
            or ".collective_latency." in self.name
        )

    @property
    def stack_models(self) -> int:
        """Models whose dev rows this parameter needs before it is fitted. A kernel-stack
        factor needs STACK_MODELS, so that it is not one model's port. An MLA decode path (over
        a 16-bit or an FP8 cache) needs one: its kernel reads only the latent cache, whose shape
        (a 512-wide latent and a 64-wide rotary part) every MLA model of the catalogue shares,
        and its per-head time scales with the heads a rank holds; nothing in it is a model's
        own code."""
        if self.mla_cache:
            return 1
        return STACK_MODELS if self.per_stack else 1


def _engine_touches(parts: list[str], owner: Owner) -> bool:
    """Whether an engine's own cost (`frameworks.<engine>.<cost>`) is in `owner`'s prediction."""
    if parts[2] == "step_overhead_s":
        return owner.step_owner == "frameworks." + parts[1]  # not under a stack's own loop
    if parts[2] == "sparse_layer_overhead_s" and not owner.indexer:
        return False  # only a model with an indexer runs the sparse-attention kernels
    if parts[2] == "sync_seq_overhead_s" and not owner.synchronous:
        return False  # only a synchronously scheduled deployment waits for its host work
    if parts[2] in SPEC_ONLY and not owner.speculative:
        return False  # only a speculative deployment verifies drafts
    if parts[2] == "ep_moe_layer_overhead_s" and not owner.expert_parallel:
        return False  # only expert-parallel experts run the EP path
    if parts[2] == "moe_layer_overhead_s" and owner.expert_parallel and owner.ep_moe_own:
        # an EP path with a cost of its own does not pay the TP path's, unless another pool
        # (a disaggregated deployment's prefill or decode workers) runs TP-sliced experts
        return owner.tp_sliced and owner.engine == parts[1]
    return owner.engine == parts[1]


def _kernel_stack_touches(parts: list[str], owner: Owner, mla_cache: str) -> bool:
    """Whether a hardware family's or vendor's kernel-stack factor (`vendors.<family>.<factor>`,
    an MLA decode path's for a `mla_cache` dtype) is in `owner`'s prediction."""
    if parts[2] in ("expert_bw", "expert_gemm") and not owner.expert_format:
        return False  # a dense model has no routed experts
    if parts[2] == "collective_latency":  # only the named engine's collectives on that stack
        return owner.engine == parts[3] and parts[1] in (owner.vendor, owner.family)
    if mla_cache:
        # only the named engine's MLA decode over a latent cache of that dtype runs that path
        if owner.mla_cache != mla_cache or owner.engine != parts[3]:
            return False
        return parts[1] in (owner.vendor, owner.family)
    return parts[1] in (owner.vendor, owner.family) and (
        len(parts) < 4 or parts[3] == owner.expert_format
    )


def _walk(data: object, dotted: str) -> object:
    node = data
    for k in dotted.split("."):
        assert isinstance(node, dict)
        node = node[k]
    return node


# Order matters for a coordinate search: the per-layer and per-step costs come first so that
# the collective scale is not made to absorb them. The collective scale is bounded to 2x the
# fabric latencies: beyond that, small-batch TP8 would be slower than TP1, which contradicts
# both all-reduce microbenchmarks and InferenceX's choice of TP8 for its lowest-latency points.
FREE_PARAMS: tuple[FreeParam, ...] = (
    # the front ends' time before the scheduler sees a request first: it moves TTFT alone
    # (and a request's life by as much), so the GPU-side factors after it are not made to
    # lengthen TTFT by slowing prefill. Bounded by what tokenizing and handing off a prompt
    # can take: 200 ms per request, 40 us per prompt token (10x the prior's tokenizer rate);
    # a serving stack's front end (Dynamo's, a MoRI router's) is fitted on its own rows
    *(FreeParam(f"{entry}.frontend_s", 1e-3, 0.2) for entry in FRONTENDS),
    *(FreeParam(f"{entry}.frontend_s_per_token", 5e-7, 4e-5) for entry in FRONTENDS),
    FreeParam("frameworks.vllm.layer_overhead_s", 2e-6, 80e-6),
    FreeParam("frameworks.vllm.step_overhead_s", 1e-4, 3e-3),
    FreeParam("frameworks.trt.layer_overhead_s", 2e-6, 80e-6),
    # TensorRT-LLM's fixed host time per step in its own server (trtllm-serve: the executor
    # loop, response postprocessing and streaming, per-iteration logging), and as a Dynamo
    # worker (detokenizing and streaming left to Dynamo's front end); bounded at 20 ms
    FreeParam("frameworks.trt.step_overhead_s", 1e-4, 2e-2),
    FreeParam("stacks.dynamo.engine_step_overhead_s.trt", 1e-4, 2e-2),
    # and under an offline driver in its own process (trtllm-bench)
    FreeParam("stacks.bench.engine_step_overhead_s.trt", 1e-4, 2e-2),
    FreeParam("frameworks.trt.max_batched_tokens", 4096, 32768, integer=True),
    FreeParam("frameworks.sglang.layer_overhead_s", 2e-6, 80e-6),
    FreeParam("frameworks.atom.layer_overhead_s", 2e-6, 80e-6),
    *(FreeParam(f"frameworks.{fw}.moe_layer_overhead_s", 1e-7, 80e-6) for fw in FRAMEWORKS),
    # the expert-parallel path's per-MoE-layer cost after the tensor-parallel path's, on the
    # rows with expert-parallel experts only; the same bounds
    *(FreeParam(f"frameworks.{fw}.ep_moe_layer_overhead_s", 1e-7, 80e-6) for fw in FRAMEWORKS),
    # the sparse-attention path (indexer, top-k) after the per-layer costs every model pays,
    # bounded at twice the per-layer bound: a dozen small kernels on every indexer layer
    *(FreeParam(f"frameworks.{fw}.sparse_layer_overhead_s", 1e-6, 160e-6) for fw in FRAMEWORKS),
    # the acceptance of the default curve's drafts, one for every engine (a property of the
    # workload: InferenceX's random-token prompts), before the verify costs, so that these take
    # only what grows with the batch: a flat TPOT error across concurrency on a speculative row
    # is acceptance. Bounded at 0.3 (three drafts then give 1.58 tokens a step) and 1.25
    FreeParam("acceptance_scale", 0.3, 1.25),
    # the mean output length before a forced-length output repeats itself (`SpecDecode`), after
    # the acceptance scale: what the scale leaves is how the acceptance grows with the output
    # (InferenceX's 1k and 8k outputs); from 128 tokens to 128k (a never-repeating output)
    FreeParam("loop_after_tokens", 128.0, 131072.0),
    # the per-sequence verify cost of speculative decoding after every per-step cost, so that
    # it takes only what grows with the batch on MTP rows; bounded at 400 us per sequence
    *(FreeParam(f"frameworks.{fw}.spec_seq_overhead_s", 1e-7, 4e-4) for fw in FRAMEWORKS),
    # the host's time per scheduled request when scheduling is synchronous, after every
    # per-step and per-layer cost: what grows with the batch on rows run with async scheduling
    # off; bounded at 100 us (ten times the scheduler's own cost per request)
    # (vLLM's: the other engines' profiles declare none)
    FreeParam("frameworks.vllm.sync_seq_overhead_s", 1e-7, 1e-4),
    # a draft pass's fixed cost, bounded at 1 ms (ten times a graph launch and a sampling step)
    *(FreeParam(f"frameworks.{fw}.draft_pass_overhead_s", 1e-6, 1e-3) for fw in FRAMEWORKS),
    # the kernel stacks' routed-expert efficiency per expert format, before the families'
    # streaming fractions, so that these are not made to absorb MoE kernels
    *(
        FreeParam(f"vendors.{fam}.expert_bw.{fmt}", 0.1, 1.4)
        for fam, fmts in (
            ("Hopper", ("fp8", "fp4", "int4")),
            ("Blackwell", ("bf16", "fp8", "fp4")),
            ("CDNA3", ("bf16", "fp8", "fp4", "int4")),
            ("CDNA4", ("bf16", "fp8", "fp4")),
        )
        for fmt in fmts
    ),
    # SGLang's MLA decode over a 16-bit latent cache on ROCm (the path InferenceX's AMD DeepSeek
    # recipes left for an FP8 cache and aiter's persistent kernel in January 2026), after the
    # per-layer costs every row pays: a fixed time per head and layer up to 20 us (a 32-head
    # rank's layer 640 us), and a compute rate down to 0.2 % of the BF16 peak
    *(
        FreeParam(f"vendors.{fam}.{name}.sglang", lo, hi)
        for fam in ("CDNA3", "CDNA4")
        for name, lo, hi in (("mla16_head_layer_s", 1e-8, 2e-5), ("mla16_rate", 0.002, 1.0))
    ),
    # and over an FP8 latent cache on CDNA3 (aiter's FP8 MLA decode kernel), where MI325X rows
    # of 2026-02 to 2026-09 ran 7-43 % slower per token than the twin, most at low
    # concurrency; the same bounds. CDNA4's FP8 rows fit without a path of their own
    *(
        FreeParam(f"vendors.CDNA3.{name}.sglang", lo, hi)
        for name, lo, hi in (("mla8_head_layer_s", 1e-8, 2e-5), ("mla8_rate", 0.002, 1.0))
    ),
    # each vendor's software trend with the run date: its speed a year later (bounded at half
    # and three times), and a young port's slowdown on the model's release day (up to 20x the
    # mature time) with its fading time (3 to 120 days)
    *(
        FreeParam(f"software.{vendor}.{name}", lo, hi)
        for vendor in ("AMD", "NVIDIA")
        for name, lo, hi in (("per_year", 0.5, 3.0), ("young", 0.01, 20.0), ("young_days", 3, 120))
    ),
    FreeParam("collective_latency_scale", 0.5, 2.0),
    # vLLM's own collectives on CDNA3 (its custom all-reduce on ROCm), after the book's scale:
    # MI300X / MI325X TP8 rows of 1-4 sequences ran 17-25 % faster than the twin (blind42's
    # look); bounded at a quarter and twice the book's latency
    FreeParam("vendors.CDNA3.collective_latency.vllm", 0.25, 2.0),
    FreeParam("dp_balance", 0.5, 1.0),
    FreeParam("expert_concentration", 0.0, 2.0),
    # each family's routed-expert grouped-GEMM rate (MoE prefill) before its dense large-M GEMM
    # fraction, and that before its streaming fraction (decode, mostly), so that the dense
    # scales are not made to absorb MoE kernels, nor the one the other
    *(FreeParam(f"vendors.{fam}.expert_gemm", 0.2, 1.0) for fam in FAMILY_STACKS),
    FreeParam("vendors.CDNA3.gemm_scale", 0.3, GEMM_SCALE_MAX),
    FreeParam("vendors.CDNA3.hbm_bw_scale", 0.3, 1.25),
    FreeParam("vendors.CDNA4.gemm_scale", 0.3, GEMM_SCALE_MAX),
    FreeParam("vendors.CDNA4.hbm_bw_scale", 0.3, 1.25),
    FreeParam("vendors.Hopper.gemm_scale", 0.3, GEMM_SCALE_MAX),
    FreeParam("vendors.Hopper.hbm_bw_scale", 0.7, 1.2),
    FreeParam("vendors.Blackwell.gemm_scale", 0.3, GEMM_SCALE_MAX),
    FreeParam("vendors.Blackwell.hbm_bw_scale", 0.7, 1.2),
    FreeParam("untuned_kernel_scale", 0.1, 1.0),
)


def select_params(only: str | None) -> list[FreeParam]:
    """The free parameters whose name contains `only`, or any of its comma-separated parts
    (`"frontend,spec_seq"`); every one when `only` is None or empty. FREE_PARAMS order."""
    parts = [x.strip() for x in (only or "").split(",") if x.strip()]
    return [p for p in FREE_PARAMS if not parts or any(x in p.name for x in parts)]


@dataclass(frozen=True, slots=True)
class Owner:
    """What decides which free parameters a calibration point's prediction depends on."""

    model: str
    framework: str
    vendor: str
    family: str
    expert_format: str  # bf16 / fp8 / fp4 / int4 of the routed experts ("" for dense models)
    untuned: bool
    dp_attention: bool = False
    indexer: bool = False  # the model has sparse-attention indexer layers
    frontends: tuple[str, ...] = ()  # the front ends its requests pass (`frontend_owners`)
    speculative: bool = False  # MTP / speculative decoding is on
    mla_cache: str = ""  # the latent cache's dtype where the model has MLA attention (`mla_cache`)
    step_owner: str = ""  # the entry whose per-step fixed time its steps pay (`step_owner`)
    default_acceptance: bool = False  # speculative, on the default acceptance curve
    expert_parallel: bool = False  # some pool's routed experts expert-parallel (TEP, wide EP)
    tp_sliced: bool = False  # some pool's routed experts TP-sliced
    ep_moe_own: bool = False  # its engine sets the EP path's per-MoE-layer cost apart
    dated: bool = False  # a software date is given (a calibration row's run date)
    young_port: bool = False  # and the model's release date, with no kernel path declared
    synchronous: bool = False  # async scheduling off: steps wait for the host's per-request work

    @property
    def engine(self) -> str:
        return engine_of(self.framework)


def lone_formats(owners: Iterable[Owner]) -> set[tuple[str, str]]:
    """(family, expert format) pairs used by fewer than STACK_MODELS models' dev rows: their
    kernel-stack factor cannot be fitted (`fittable`), so it stays at its prior."""
    models: dict[tuple[str, str], set[str]] = {}
    for o in owners:
        if o.expert_format:
            models.setdefault((o.family, o.expert_format), set()).add(o.model)
    return {k for k, v in models.items() if len(v) < STACK_MODELS}


def lone_row(o: Owner, lone: set[tuple[str, str]]) -> bool:
    """A row whose routed-expert kernel factor cannot be fitted: its error may be that one
    model's port of the format (INT4 Kimi-K2.5 on Hopper), so it does not steer the scales its
    whole hardware family shares."""
    return (o.family, o.expert_format) in lone


def fittable(prm: FreeParam, owners: Sequence[Owner]) -> bool:
    """Whether dev rows can fit `prm`: some row depends on it, and rows of as many models as it
    needs (`FreeParam.stack_models`) inform it."""
    return bool(owners) and len({o.model for o in owners}) >= prm.stack_models


def point_owner(p: CalPoint, book: ProfileBook | None = None) -> Owner:
    """What `p`'s prediction depends on (`owner_of` its deployment)."""
    return owner_of(point_options(p).config(book), book)


def owner_of(cfg: TwinConfig, book: ProfileBook | None = None) -> Owner:
    """What a prediction for deployment `cfg` depends on; `book` (the shipped one if None) says
    which front ends its requests pass, a fact of the serving stack that no fit moves."""
    fmt = ""
    if cfg.model.is_moe:
        fmt = format_class(
            effective_formats(cfg.model, cfg.parallel.precision, cfg.hardware.fp4_weight_format)[
                "routed_experts"
            ]
        )
    framework = cfg.labels.get("framework", "vllm")
    book = book or load_profiles()
    dated = "software_date" in cfg.labels
    # the replica layouts whose steps the prediction holds: a disaggregated deployment's
    # prefill workers may shard the experts otherwise than its decode workers
    pools = (cfg.parallel, cfg.prefill_parallel()) if cfg.disagg else (cfg.parallel,)
    ep_ranks = [par.expert_ranks for par in pools] if cfg.model.is_moe else []
    return Owner(
        cfg.model.name,
        framework,
        cfg.hardware.vendor,
        hardware_family(cfg.hardware.name),
        fmt,
        cfg.labels.get("kernels") == "untuned",
        cfg.parallel.dp_attention,
        cfg.model.n_indexer_layers > 0,
        frontend_owners(book, framework),
        cfg.parallel.spec.draft_tokens > 0,
        mla_cache(cfg.model, cfg.parallel),
        step_owner(book, framework),
        cfg.parallel.spec.draft_tokens > 0 and cfg.parallel.spec.acceptance_length is None,
        any(n > 1 for n in ep_ranks),
        any(n == 1 for n in ep_ranks),
        book.frameworks[engine_of(framework)].ep_moe_layer_overhead_s is not None,
        dated,
        dated and young_port(cfg.model.released, cfg.labels.get("kernels", "tuned")),
        not cfg.efficiency.async_scheduling,
    )
