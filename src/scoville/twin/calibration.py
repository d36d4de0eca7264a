"""Calibration and plausibility: predicted vs published measured points (`twin validate`),
and what a claimed single-user speed implies about bandwidth and FLOP/s (`twin explain`).

The calibration table ships as `scoville/data/twin/calibration.yaml`; each point says whether
it was used to fit a knob (`role: fit`) or is held out (`role: validate`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from scoville.twin.catalogue import Hardware, ModelArch
from scoville.twin.costmodel import Efficiency, Parallel, StepBatch, StepModel
from scoville.twin.frontier import frontier_rows
from scoville.twin.simulate import sweep
from scoville.twin.target import parse_twin_url


class Published(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    tput_per_gpu: float | None = Field(None, description="(input+output) tok/s per GPU")
    tpot_ms: float | None = None
    intvty: float | None = Field(None, description="tok/s/user")
    peak_tput_per_gpu: float | None = Field(None, description="max tput_per_gpu over the sweep")


class CalPoint(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str
    url: str
    isl_tokens: int
    osl_tokens: int
    concurrency: int | None = None
    concurrencies: tuple[int, ...] = Field((), description="a sweep, for peak metrics")
    range_ratio: float = Field(1.0, gt=0, le=1, description="lengths in [ratio*L, L]")
    published: Published
    role: Literal["fit", "validate"]
    fitted: tuple[str, ...] = ()
    source: str = Field(..., min_length=1)


def load_points() -> list[CalPoint]:
    text = (
        resources.files("scoville")
        .joinpath("data", "twin", "calibration.yaml")
        .read_text(encoding="utf-8")
    )
    return [CalPoint.model_validate(p) for p in yaml.safe_load(text)["points"]]


@dataclass(frozen=True, slots=True)
class Comparison:
    point_id: str
    role: str
    metric: str
    published: float
    predicted: float

    @property
    def error(self) -> float:
        """Relative error (predicted - published) / published."""
        return (self.predicted - self.published) / self.published


def validate(points: Sequence[CalPoint], requests_per_point: int | None = None) -> list[Comparison]:
    """Simulate each point and compare every published metric it has."""
    out: list[Comparison] = []
    for p in points:
        cfg = parse_twin_url(p.url)
        conc = list(p.concurrencies) or [p.concurrency or 1]
        pts = sweep(
            cfg, p.isl_tokens, p.osl_tokens, conc, requests_per_point, range_ratio=p.range_ratio
        )
        rows = frontier_rows(pts)
        row = rows[-1]
        predicted = {
            "tput_per_gpu": row.tput_per_gpu,
            "tpot_ms": row.median_tpot_s * 1e3,
            "intvty": row.median_intvty,
            "peak_tput_per_gpu": max(r.tput_per_gpu for r in rows),
        }
        for metric, value in p.published.model_dump().items():
            if value is not None:
                out.append(Comparison(p.id, p.role, metric, float(value), predicted[metric]))
    return out


@dataclass(frozen=True, slots=True)
class Implied:
    """What one GPU of a `tp`-GPU replica must sustain to deliver the claimed speed."""

    tp: int
    tpot_s: float
    hbm_tb_s: float  # bytes streamed per token / TPOT
    tflops: float  # FLOPs per token / TPOT
    hbm_fraction: float | None  # of the hardware's peak bandwidth, when hardware is given
    twin_tpot_s: float | None  # the twin's own batch-1 decode step on that hardware


def explain(
    model: ModelArch,
    tok_s_per_user: float,
    context_tokens: int,
    hardware: Hardware,
    tps: Sequence[int] = (1, 2, 4, 8),
    efficiency: Efficiency | None = None,
) -> list[Implied]:
    """Batch-1 decode at `context_tokens` of context: each token streams the dense weights,
    the top-k experts of every MoE layer and the whole KV cache once."""
    tpot_s = 1.0 / tok_s_per_user
    eff = efficiency or Efficiency()
    out = []
    for tp in tps:
        sm = StepModel(hardware, model, Parallel(tp=tp), eff)
        w = sm.window_tokens
        b = StepBatch(
            n_decode=1,
            decode_ctx_tokens=context_tokens,
            decode_ctx_swa_tokens=min(context_tokens, w) if w else 0,
            n_sampled=1,
        )
        cost = sm.cost(b)
        peak = float(hardware.hbm_tb_s or 0.0)
        bw = cost.hbm_bytes / tpot_s / 1e12
        out.append(
            Implied(
                tp,
                tpot_s,
                bw,
                cost.flops / tpot_s / 1e12,
                bw / peak if peak else None,
                cost.total_s,
            )
        )
    return out
