"""The spec of a simulated sweep, built before it runs: `twin_spec` turns `TwinOptions` and
the sweep's flags into the `BenchmarkSpec` that `scoville simulate` runs (on the twin with the
fast executor). `sweep` runs a spec's plans on the fast executor as a library call.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scoville.client.plan import build_plans
from scoville.spec.defaults import defaults_for
from scoville.spec.load import validate_as
from scoville.spec.model import BenchmarkSpec
from scoville.spec.power import read_profile
from scoville.twin.cluster import TwinConfig
from scoville.twin.fast import FastExecutor, PointResult
from scoville.twin.options import TwinOptions
from scoville.twin.target import twin_labels

# The twin's default sweep (InferenceX's 8k/1k shape up to 256 streams), declared once.
# The twin's default matrix is declared once, with every target kind's, in spec/defaults.py.
TWIN_DEFAULTS: dict[str, Any] = defaults_for("twin")


def twin_spec(
    opts: TwinOptions,
    cfg: TwinConfig,
    shape: dict[str, Any] | None = None,
    load: dict[str, Any] | None = None,
    power_profile: Path | None = None,
) -> BenchmarkSpec:
    """The spec of a sweep on the twin: `shape`/`load` fields given (None values left out)
    over the twin's defaults; labels, accelerators and serving describe the deployment;
    `power_profile` (a file, read as the `--power-profile` flag reads it) is frozen in."""
    labels = twin_labels(cfg)
    given_shape = {k: v for k, v in (shape or {}).items() if v is not None}
    given_load = {k: v for k, v in (load or {}).items() if v is not None}
    return validate_as(
        BenchmarkSpec,
        {
            "name": f"twin {cfg.hardware.name} {cfg.model.name}",
            "target": {
                "url": opts.url(),
                "model": cfg.model.name,
                "tokenizer": "tiktoken:o200k_base",  # the twin reads lengths, never text
            },
            "model_name": cfg.model.name,
            "precision": labels["precision"],
            "shape": {"range_ratio": 1.0, **TWIN_DEFAULTS["shape"], **given_shape},
            "load": {**TWIN_DEFAULTS["load"], **given_load},
            "accelerators": {
                "kind": cfg.hardware.name,
                "count": cfg.n_accelerators,
                "power_w_per_accelerator": cfg.hardware.tdp_w,
                "power_boundary": "package-tdp",
            },
            "serving": {
                "framework": "scoville-twin",
                "tensor_parallel": cfg.parallel.tp,
                "expert_parallel": cfg.parallel.ep,
                "data_parallel": cfg.replicas,
                "disaggregated": cfg.disagg is not None,
            },
            "power_profile": read_profile(str(power_profile)) if power_profile else None,
        },
        "the simulate options",
    )


def run_plans(cfg: TwinConfig, spec: BenchmarkSpec) -> list[PointResult]:
    """Every point of `spec` on the fast executor (lengths only: no prompt text is built)."""
    executor = FastExecutor(cfg)
    return [executor.simulate(plan) for plan in build_plans(spec, None)]


def sweep(
    cfg: TwinConfig,
    isl_tokens: int,
    osl_tokens: int,
    concurrencies: Sequence[int],
    requests_per_point: int | None = None,
    warmup_per_point: int | None = None,
    range_ratio: float = 1.0,
) -> list[PointResult]:
    """Closed-loop points one after another; the spec's rules for request and warmup counts
    (10 x and 2 x concurrency by default)."""
    spec = BenchmarkSpec.model_validate(
        {
            "shape": {
                "isl_tokens": isl_tokens,
                "osl_tokens": osl_tokens,
                "range_ratio": range_ratio,
            },
            "load": {
                "concurrency": tuple(concurrencies),
                "requests_per_point": requests_per_point,
                "warmup_requests": warmup_per_point,
            },
        }
    )
    return run_plans(cfg, spec)
