"""The twin's own short summary of a simulated sweep: one row per point with throughput per
GPU, interactivity, TTFT, TPOT and the bottleneck, from the fast executor's `PointResult`s.
Used by calibration (`twin validate`); `scoville simulate` prints the run's summary rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scoville.twin.fast import PointResult


@dataclass(frozen=True, slots=True)
class FrontierRow:
    point_id: str
    concurrency: float
    tput_per_gpu: float  # (input + output) tokens/s per accelerator
    output_tput_per_gpu: float
    median_intvty: float  # tokens/s/user = median of per-request 1 / TPOT
    median_ttft_s: float
    median_tpot_s: float
    bottleneck: str
    kv_occupancy_max: float
    preemptions: int


def _median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    n = len(s)
    if n == 0:
        return float("nan")
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def frontier_rows(points: Sequence[PointResult]) -> list[FrontierRow]:
    rows = []
    for p in points:
        ok = [r for r in p.records if r.phase == "measure" and r.ok and len(r.chunk_ns) > 0]
        span_s = (p.window.end_ns - p.window.start_ns) / 1e9
        n_acc = int(p.extras["n_accelerators"])
        tokens = sum(r.input_tokens + r.output_tokens for r in ok)
        out = sum(r.output_tokens for r in ok)
        tpots = [
            (r.chunk_ns[-1] - r.chunk_ns[0]) / 1e9 / (r.output_tokens - 1)
            for r in ok
            if r.output_tokens > 1
        ]
        rows.append(
            FrontierRow(
                point_id=p.window.point_id,
                concurrency=p.window.level,
                tput_per_gpu=tokens / span_s / n_acc if span_s > 0 else 0.0,
                output_tput_per_gpu=out / span_s / n_acc if span_s > 0 else 0.0,
                median_intvty=_median([1.0 / t for t in tpots if t > 0]),
                median_ttft_s=_median([(r.chunk_ns[0] - r.start_ns) / 1e9 for r in ok]),
                median_tpot_s=_median(tpots),
                bottleneck=str(p.extras["bottleneck"]),
                kv_occupancy_max=float(p.extras["kv_occupancy_max"]),
                preemptions=int(p.extras["preemptions"]),
            )
        )
    return rows
