"""`twin:HARDWARE/MODEL?opts` URLs opened as a `Target` (TwinServer + VirtualClock + a
virtual-time loop factory) for the pipeline, with the fast executor when `executor=fast`.
The URL's options are `TwinOptions` fields (`scoville.twin.options`).

Example: `twin:H200/gpt-oss-120b?tp=1&precision=fp4&replicas=1`,
`twin:GB200/DeepSeek-R1?tp=8&ep=8&disagg=2P1D&kv_link=scaleup`.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from scoville.targets.base import Target
from scoville.twin.cluster import TwinConfig
from scoville.twin.options import TwinOptions


def parse_twin_url(url: str) -> TwinConfig:
    """`twin:HW/MODEL?opts` -> TwinConfig; unknown names and options raise TargetError."""
    return TwinOptions.parse_url(url).config()


def twin_info(cfg: TwinConfig) -> dict[str, Any]:
    """Facts for the run manifest: what was simulated, with the catalogue sources, and the
    free parameters it rests on that no calibration row informs (`coverage.uncalibrated`)."""
    from scoville.twin.coverage import uncalibrated  # it reads the calibration, which reads this

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
        "engine_defaults": list(cfg.notes),
        # the deployment's software date and the speed it gives (`software.software_speed`)
        "software": cfg.labels.get("software", ""),
        "uncalibrated": list(uncalibrated(cfg)),
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
    from scoville.twin.agentic_lanes import FastLanes
    from scoville.twin.clock import LoopKernel, VirtualClock, VirtualTime, VirtualTimeLoop
    from scoville.twin.fast import FastExecutor
    from scoville.twin.server import TwinServer, twin_point_extras
    from scoville.workload.tokenizers import local_tokenizer

    opts = TwinOptions.parse_url(url)
    cfg = opts.config()
    vt = VirtualTime()
    server = TwinServer(cfg, LoopKernel(vt))
    fast = FastExecutor(cfg) if opts.executor == "fast" else None
    # agentic replay runs on the event engine unless executor=driver is asked for
    lanes = FastLanes(cfg) if "executor" not in opts.model_fields_set or fast else None
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
        executor=fast,
        lanes_executor=lanes,
        point_extras=lambda windows: {
            **(fast.point_extras(windows) if fast else twin_point_extras(server, windows)),
            **(lanes.point_extras(windows) if lanes else {}),
        },
    )
