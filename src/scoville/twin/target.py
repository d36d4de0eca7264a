"""`twin:HARDWARE/MODEL?opts` URLs: parsing them into a `TwinConfig`, and opening one as a
`Target` (TwinServer + VirtualClock + a virtual-time loop factory) for the pipeline.

Example: `twin:H200/gpt-oss-120b?tp=1&precision=fp4&replicas=1`,
`twin:GB200/DeepSeek-R1?tp=8&ep=8&disagg=2P1D&kv_link=scaleup`.
"""

from __future__ import annotations

import re
from dataclasses import asdict, replace
from typing import Any, get_args
from urllib.parse import parse_qsl

from scoville.errors import TargetError
from scoville.targets.base import Target
from scoville.twin.catalogue import load_catalogue
from scoville.twin.cluster import DisaggConfig, Router, TwinConfig
from scoville.twin.costmodel import Efficiency, KvDtype, Parallel
from scoville.twin.deploy import DEPLOY_OPTIONS, apply_deploy_options
from scoville.twin.engine import EngineConfig
from scoville.twin.shape import Precision

TWIN_OPTIONS: dict[str, str] = {
    "tp": "tensor-parallel GPUs per replica (default 1)",
    "ep": "expert parallelism: 1 (experts TP-sliced, default) or equal to tp",
    "precision": "weights: native (default), bf16, fp8, fp4, int4",
    "kv": "KV-cache dtype: bf16 (default) or fp8",
    "replicas": "data-parallel replicas behind the router (default 1)",
    "router": "round_robin (default), session (sticky on extra_body.session_id), least_loaded",
    "disagg": "disaggregated pools, e.g. 1P1D or 2P1D (default off)",
    "prefill_tp": "tensor parallelism of prefill replicas (default: tp)",
    "kv_link": "KV transfer path in disagg mode: auto (default: scale-up when the deployment "
    "fits one scale-up domain, else the network), scaleup or network",
    "max_num_seqs": "scheduler seat limit per replica (default 512)",
    "max_batched_tokens": "token budget per step, chunked prefill (default 8192)",
    "block_size": "KV block size in tokens (default 16)",
    "prefix_caching": "1 (default) or 0",
    "prefix_cache": "prefix-cache capacity: kv (default, free KV memory), unlimited (never "
    "evicts: the bound a trace's theoretical hit rate assumes) or a token count",
    "gpu_memory_utilization": "fraction of HBM for weights + KV (default 0.90)",
    "hbm_efficiency": "achievable fraction of HBM bandwidth (default 0.80)",
    "catalogue": "path to a user hardware/model YAML (may repeat)",
    **DEPLOY_OPTIONS,
}

_URL = re.compile(r"^twin:(?P<hw>[^/?]+)/(?P<model>[^?]+)(?:\?(?P<query>.*))?$")


def _bad(msg: str) -> TargetError:
    opts = "; ".join(f"{k}: {v}" for k, v in TWIN_OPTIONS.items())
    return TargetError(
        f"{msg} Twin URLs look like twin:HARDWARE/MODEL?opt=value&... (for example "
        f"twin:H200/gpt-oss-120b?tp=1&precision=fp4). Options: {opts}."
    )


def _int(opts: dict[str, str], key: str, default: int) -> int:
    v = opts.pop(key, None)
    if v is None:
        return default
    if not v.isdigit() or int(v) < 1:
        raise _bad(f"Option {key}={v!r} must be a positive integer.")
    return int(v)


def _choice(opts: dict[str, str], key: str, allowed: tuple[str, ...], default: str) -> str:
    v = opts.pop(key, default)
    if v not in allowed:
        raise _bad(f"Option {key}={v!r} must be one of {', '.join(allowed)}.")
    return v


def _float(opts: dict[str, str], key: str, default: float) -> float:
    v = opts.pop(key, None)
    try:
        f = default if v is None else float(v)
    except ValueError:
        raise _bad(f"Option {key}={v!r} must be a number.") from None
    if not 0 < f <= 1:
        raise _bad(f"Option {key}={v!r} must be in (0, 1].")
    return f


def parse_twin_url(url: str) -> TwinConfig:
    """`twin:HW/MODEL?opts` -> TwinConfig; unknown names and options raise TargetError."""
    m = _URL.match(url.strip())
    if not m:
        raise _bad(f"Cannot read twin URL {url!r}.")
    pairs = parse_qsl(m.group("query") or "", keep_blank_values=True)
    catalogues = [v for k, v in pairs if k == "catalogue"]
    opts = {k: v for k, v in pairs if k != "catalogue"}
    unknown = sorted(set(opts) - set(TWIN_OPTIONS))
    if unknown:
        raise _bad(f"Unknown twin option(s) {', '.join(unknown)}.")
    explicit = frozenset(opts)
    cat = load_catalogue(catalogues)
    hw, model = cat.get_hardware(m.group("hw")), cat.get_model(m.group("model"))
    tp = _int(opts, "tp", 1)
    par = Parallel(
        tp=tp,
        ep=_int(opts, "ep", 1),
        precision=_choice(opts, "precision", get_args(Precision), "native"),  # type: ignore[arg-type]
        kv_dtype=_choice(opts, "kv", get_args(KvDtype), "bf16"),  # type: ignore[arg-type]
    )
    if par.ep not in (1, tp):
        raise _bad(f"Option ep={par.ep} must be 1 or equal to tp={tp}.")
    engine = EngineConfig(
        max_num_seqs=_int(opts, "max_num_seqs", 512),
        max_num_batched_tokens=_int(opts, "max_batched_tokens", 8192),
        block_size_tokens=_int(opts, "block_size", 16),
        prefix_caching=_choice(opts, "prefix_caching", ("0", "1"), "1") == "1",
        prefix_cache_tokens=_prefix_cache(opts.get("prefix_cache", "kv")),
    )
    eff = replace(
        Efficiency(),
        gpu_memory_utilization=_float(opts, "gpu_memory_utilization", 0.90),
        hbm_bw=_float(opts, "hbm_efficiency", 0.80),
    )
    cfg = TwinConfig(
        hardware=hw,
        model=model,
        parallel=par,
        replicas=_int(opts, "replicas", 1),
        router=_choice(opts, "router", get_args(Router), "round_robin"),  # type: ignore[arg-type]
        engine=engine,
        efficiency=eff,
        disagg=_disagg(opts),
        labels={"url": url},
    )
    return apply_deploy_options(cfg, opts, explicit=explicit)


def _prefix_cache(raw: str) -> int | None:
    if raw == "kv":
        return None
    if raw == "unlimited":
        return -1
    if raw.isdigit():
        return int(raw)
    raise _bad(f"Option prefix_cache={raw!r}: use kv, unlimited or a token count.")


def _disagg(opts: dict[str, str]) -> DisaggConfig | None:
    raw = opts.pop("disagg", None)
    prefill_tp = opts.pop("prefill_tp", None)
    kv_link = _choice(opts, "kv_link", ("auto", "scaleup", "network"), "auto")
    if raw in (None, "", "0", "false", "off"):
        return None
    dm = re.fullmatch(r"(\d+)P(\d+)D", raw or "", flags=re.IGNORECASE)
    if raw in ("1", "true", "on"):
        p, d = 1, 1
    elif dm and int(dm.group(1)) > 0 and int(dm.group(2)) > 0:
        p, d = int(dm.group(1)), int(dm.group(2))
    else:
        raise _bad(f"Option disagg={raw!r} must look like 1P1D (prefill and decode replicas).")
    ptp = None
    if prefill_tp is not None:
        if not prefill_tp.isdigit() or int(prefill_tp) < 1:
            raise _bad(f"Option prefill_tp={prefill_tp!r} must be a positive integer.")
        ptp = int(prefill_tp)
    return DisaggConfig(p, d, ptp, kv_link)  # type: ignore[arg-type]


def twin_info(cfg: TwinConfig) -> dict[str, Any]:
    """Facts for the run manifest: what was simulated, with the catalogue sources."""
    d = cfg.disagg
    return {
        "hardware": cfg.hardware.name,
        "hardware_source": cfg.hardware.source,
        "hardware_assumed": dict(cfg.hardware.assumed),
        "model": cfg.model.name,
        "model_source": cfg.model.source,
        "parallel": asdict(cfg.parallel),
        "replicas": cfg.replicas,
        "router": cfg.router,
        "disagg": asdict(d) if d is not None else None,
        "engine": asdict(cfg.engine),
        "efficiency": asdict(cfg.efficiency),
        "n_accelerators": cfg.n_accelerators,
    }


def twin_labels(cfg: TwinConfig) -> dict[str, str]:
    """The summary labels (system, model, precision, framework, spec_decode, disagg)."""
    d = cfg.disagg
    return {
        "system": cfg.hardware.name,
        "model": cfg.model.name,
        "precision": cfg.parallel.precision
        if cfg.parallel.precision != "native"
        else cfg.model.native_weight_format.split(" ")[0] or "native",
        "framework": "scoville-twin"
        if cfg.labels.get("framework", "vllm") == "vllm"
        else f"scoville-twin/{cfg.labels['framework']}",
        "spec_decode": f"mtp{cfg.parallel.spec.draft_tokens}"
        if cfg.parallel.spec.draft_tokens
        else "none",
        "disagg": f"{d.prefill_replicas}P{d.decode_replicas}D" if d is not None else "none",
    }


def open_twin_target(url: str, spec: Any = None) -> Target:
    """Open `twin:...` as a `Target` whose loop factory runs in virtual time.

    `spec` (a BenchmarkSpec, optional) supplies the tokenizer choice; the twin ignores text,
    so any local tokenizer serves to build prompts of exact length.
    """
    from scoville.twin.clock import LoopKernel, VirtualClock, VirtualTime, VirtualTimeLoop
    from scoville.twin.server import TwinServer
    from scoville.workload.tokenizers import local_tokenizer

    cfg = parse_twin_url(url)
    vt = VirtualTime()
    server = TwinServer(cfg, LoopKernel(vt))
    tok_spec = getattr(getattr(spec, "target", None), "tokenizer", "auto")
    tokenizer = local_tokenizer(tok_spec, cfg.model.hf_repo or cfg.model.name)
    if tokenizer is None:
        tokenizer = local_tokenizer("tiktoken:o200k_base")
    return Target(
        server=server,
        clock=VirtualClock(vt),
        model=cfg.model.name,
        tokenizer=tokenizer,
        kind="twin",
        info={
            "twin": twin_info(cfg),
            "labels": twin_labels(cfg),
            # the pipeline fills labels the spec leaves "unknown" from these
            "label_defaults": {
                k: v
                for k, v in twin_labels(cfg).items()
                if k in ("system", "model", "precision", "framework")
            },
        },
        loop_factory=lambda: VirtualTimeLoop(vt),
    )
