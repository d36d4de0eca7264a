"""`scoville simulate` as a library call: a twin URL and a sweep in, predicted points out,
and (when the pipeline provides `finish_run`) the same bundle and report as a real run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from scoville.twin.cluster import TwinConfig
from scoville.twin.fast import PointResult, sweep
from scoville.twin.target import parse_twin_url, twin_labels


def twin_url(hardware: str, model: str, **opts: Any) -> str:
    """`twin:HW/MODEL?k=v...` from keyword options (None values left out)."""
    q = [(k, str(v)) for k, v in opts.items() if v is not None and k != "catalogue"]
    q += [("catalogue", str(p)) for p in opts.get("catalogue") or ()]
    return f"twin:{hardware}/{model}" + (f"?{urlencode(q)}" if q else "")


@dataclass
class Simulation:
    url: str
    cfg: TwinConfig
    isl_tokens: int
    osl_tokens: int
    points: list[PointResult]
    requests_per_point: int | None = None
    warmup_per_point: int | None = None
    range_ratio: float = 1.0


def simulate(
    url: str,
    isl_tokens: int,
    osl_tokens: int,
    concurrencies: Sequence[int],
    requests_per_point: int | None = None,
    warmup_per_point: int | None = None,
    range_ratio: float = 1.0,
) -> Simulation:
    cfg = parse_twin_url(url)
    pts = sweep(
        cfg,
        isl_tokens,
        osl_tokens,
        concurrencies,
        requests_per_point,
        warmup_per_point,
        range_ratio=range_ratio,
    )
    return Simulation(
        url, cfg, isl_tokens, osl_tokens, pts, requests_per_point, warmup_per_point, range_ratio
    )


def bundle_spec_dict(sim: Simulation) -> dict[str, Any]:
    """The BenchmarkSpec (as a dict) that describes this simulated sweep."""
    cfg = sim.cfg
    labels = twin_labels(cfg)
    conc = [int(p.window.level) for p in sim.points]
    return {
        "name": f"twin {cfg.hardware.name} {cfg.model.name}",
        "target": {"url": sim.url, "model": cfg.model.name, "tokenizer": "tiktoken:o200k_base"},
        "model_name": cfg.model.name,
        "precision": labels["precision"],
        "shape": {
            "isl_tokens": sim.isl_tokens,
            "osl_tokens": sim.osl_tokens,
            "range_ratio": sim.range_ratio,
        },
        "load": {
            "concurrency": conc,
            "requests_per_point": sim.requests_per_point,
            "warmup_requests": sim.warmup_per_point,
        },
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
    }
