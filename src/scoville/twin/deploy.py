"""Deployment options of a twin beyond its basic layout: the serving framework's profile,
data-parallel attention, pipeline stages, expert load skew, speculative decoding (MTP) and
FP4 activations. `apply_deploy_options` turns the URL's `key=value` strings into a new
`TwinConfig`; the URL parser hands it the options it does not know itself.
"""

from __future__ import annotations

from dataclasses import replace

from scoville.errors import TargetError
from scoville.twin.cluster import TwinConfig
from scoville.twin.layout import Efficiency, SpecDecode
from scoville.twin.profiles import ProfileBook, apply_profile, hardware_family, load_profiles

DEPLOY_OPTIONS: dict[str, str] = {
    "framework": "serving engine profile: vllm (default), sglang, trt, atom (a dynamo- or "
    "mori- prefix keeps the engine underneath)",
    "dp_attention": "1 = attention data-parallel over the tp ranks with experts expert-parallel "
    "over them (wide EP; needs a MoE model); default 0",
    "pp": "pipeline-parallel stages of tp GPUs each (default 1)",
    "expert_skew": "tokens on the busiest expert-parallel rank / mean, >= 1 (default 1)",
    "mtp": "speculative / MTP draft tokens per step (default 0)",
    "mtp_al": "declared acceptance length (tokens emitted per verify step, 1..mtp+1); default "
    "the built-in DeepSeek-style curve",
    "batch_wait_iters": "TensorRT-LLM batch_wait_timeout_iters: hold new prompts up to N steps "
    "while decodes run (default 0: off)",
    "batch_wait_ratio": "TensorRT-LLM batch_wait_max_tokens_ratio (default 0)",
    "recv_interval": "SGLang --scheduler-recv-interval: new requests are taken in every N decode "
    "steps and after every prefill (default 1: every step)",
    "fp4_act": "FP4 activations for 4-bit weights: auto (default: on for precision=fp4 where "
    "the hardware has FP4 tensor cores), 1 or 0",
}


def _bad(key: str, value: str, want: str) -> TargetError:
    return TargetError(f"Twin option {key}={value!r} must be {want}.")


def _pos_int(opts: dict[str, str], key: str, default: int, minimum: int = 1) -> int:
    v = opts.pop(key, None)
    if v is None:
        return default
    if not v.isdigit() or int(v) < minimum:
        raise _bad(key, v, f"an integer >= {minimum}")
    return int(v)


def _num(opts: dict[str, str], key: str, lo: float) -> float | None:
    v = opts.pop(key, None)
    if v is None:
        return None
    try:
        f = float(v)
    except ValueError:
        raise _bad(key, v, "a number") from None
    if f < lo:
        raise _bad(key, v, f"a number >= {lo:g}")
    return f


def apply_deploy_options(
    cfg: TwinConfig,
    opts: dict[str, str],
    book: ProfileBook | None = None,
    explicit: frozenset[str] = frozenset(),
) -> TwinConfig:
    """Apply (and remove from `opts`) the deployment options this module owns. `explicit`
    names the options the user set, which a framework profile's defaults do not override."""
    book = book or load_profiles()
    framework = opts.pop("framework", "vllm")
    kernels = opts.pop("kernels", "tuned")
    if kernels not in ("tuned", "untuned"):
        raise _bad("kernels", kernels, "tuned or untuned")
    applied = apply_profile(
        book,
        framework,
        cfg.hardware.vendor,
        cfg.efficiency,
        hardware_family(cfg.hardware.name),
        untuned=kernels == "untuned",
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
    dp_attn = opts.pop("dp_attention", "0")
    if dp_attn not in ("0", "1"):
        raise _bad("dp_attention", dp_attn, "0 or 1")
    mtp = _pos_int(opts, "mtp", 0, minimum=0)
    al = _num(opts, "mtp_al", 1.0)
    if al is not None and (mtp == 0 or al > mtp + 1):
        raise _bad("mtp_al", str(al), f"between 1 and mtp+1 = {mtp + 1} (set mtp first)")
    skew = _num(opts, "expert_skew", 1.0)
    fp4 = opts.pop("fp4_act", "auto")
    if fp4 not in ("auto", "0", "1"):
        raise _bad("fp4_act", fp4, "auto, 0 or 1")
    par = cfg.parallel
    fp4_on = fp4 == "1" or (
        fp4 == "auto" and par.precision == "fp4" and cfg.hardware.dense_tflops.fp4 is not None
    )
    par = replace(
        par,
        dp_attention=dp_attn == "1",
        ep=par.tp if dp_attn == "1" else par.ep,
        pp=_pos_int(opts, "pp", 1),
        expert_skew=skew if skew is not None else par.expert_skew,
        spec=SpecDecode(draft_tokens=mtp, acceptance_length=al),
        fp4_activations=fp4_on,
    )
    wait_iters = _pos_int(opts, "batch_wait_iters", 0, minimum=0)
    wait_ratio = _num(opts, "batch_wait_ratio", 0.0) or 0.0
    if wait_ratio > 1:
        raise _bad("batch_wait_ratio", str(wait_ratio), "between 0 and 1")
    admission = replace(
        applied.admission,
        batch_wait_iters=wait_iters,
        batch_wait_ratio=wait_ratio,
        recv_interval=_pos_int(opts, "recv_interval", 1),
    )
    engine = replace(
        cfg.engine,
        chunked_prefill=applied.chunked_prefill,
        mix_prefill_decode=applied.mix_prefill_decode,
        admission=admission,
        max_num_batched_tokens=cfg.engine.max_num_batched_tokens
        if "max_batched_tokens" in explicit
        else applied.max_batched_tokens,
    )
    labels = {**cfg.labels, "framework": framework, "kernels": kernels}
    return replace(cfg, parallel=par, efficiency=eff, engine=engine, labels=labels)


def reprofile(cfg: TwinConfig, book: ProfileBook) -> TwinConfig:
    """The same deployment under another profile book (what `twin fit` tries): efficiency and
    scheduler policy re-derived from `book` for the config's framework and vendor."""
    base = Efficiency(gpu_memory_utilization=cfg.efficiency.gpu_memory_utilization)
    fw = cfg.labels.get("framework", "vllm")
    family = hardware_family(cfg.hardware.name)
    untuned = cfg.labels.get("kernels") == "untuned"
    applied = apply_profile(book, fw, cfg.hardware.vendor, base, family, untuned=untuned)
    engine = replace(
        cfg.engine,
        chunked_prefill=applied.chunked_prefill,
        mix_prefill_decode=applied.mix_prefill_decode,
        admission=replace(  # the deployment's own batch waiting and receive interval stay
            applied.admission,
            batch_wait_iters=cfg.engine.admission.batch_wait_iters,
            batch_wait_ratio=cfg.engine.admission.batch_wait_ratio,
            recv_interval=cfg.engine.admission.recv_interval,
        ),
        max_num_batched_tokens=applied.max_batched_tokens,
    )
    return replace(cfg, efficiency=applied.efficiency, engine=engine)
