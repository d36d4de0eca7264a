"""Column-at-a-time point summaries for large record sets (millions of requests).

Per-request facts arrive as flat arrays (from records, or from Arrow/Parquet columns) with a
point index per request; per-point throughputs and latency percentiles are computed with
sorts and bincounts, no Python loop over requests. Output: point ROWs that feed
`frontier.frontiers` like any run's summary.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from scoville.analysis.rows import Row
from scoville.metrics.compute import point_valid

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

QUANTILES: dict[str, float] = {"median": 0.5, "p90": 0.9, "p99": 0.99, "p999": 0.999}


def grouped_quantiles(
    group_idx: IntArray, values: FloatArray, qs: Sequence[float], n_groups: int
) -> FloatArray:
    """Quantiles of `values` per group (numpy's 'linear' definition), NaN values ignored.

    One stable argsort by group, then `np.quantile` (a partition, O(n)) per group: the Python
    loop runs over groups (sweep points), never over requests. Returns (n_groups, len(qs));
    groups without finite values give NaN.
    """
    order = np.argsort(group_idx, kind="stable")
    v = values[order]
    counts = np.bincount(group_idx, minlength=n_groups)
    ends = np.cumsum(counts)
    out = np.full((n_groups, len(qs)), np.nan)
    for k in range(n_groups):
        chunk = v[ends[k] - counts[k] : ends[k]]
        chunk = chunk[np.isfinite(chunk)]
        if chunk.size:
            out[k] = np.quantile(chunk, qs)
    return out


def grouped_mean(group_idx: IntArray, values: FloatArray, n_groups: int) -> FloatArray:
    keep = np.isfinite(values)
    sums = np.bincount(group_idx[keep], weights=values[keep], minlength=n_groups)
    counts = np.bincount(group_idx[keep], minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(sums / counts, dtype=np.float64)


@dataclass(frozen=True, slots=True)
class RequestColumns:
    """Per-request columns of successful requests: the point each belongs to (an index into
    the point ids), token counts and times in seconds."""

    point_idx: IntArray
    input_tokens: FloatArray
    output_tokens: FloatArray
    e2e_s: FloatArray
    ttft_s: FloatArray


def point_rows(
    point_ids: Sequence[str],
    window_s: Sequence[float],
    cols: RequestColumns,
    n_accelerators: int = 1,
    labels: Mapping[str, Any] | None = None,
    n_failed: Sequence[int] | None = None,
) -> list[Row]:
    """Point ROWs from per-request columns of successful requests (`n_failed`: failed measured
    requests per point, zero when not given; validity is `metrics.compute.point_valid`).

    TPOT = (E2E - TTFT) / (output - 1) (NaN for one-token outputs); interactivity follows the
    metrics table: mean = mean(1/TPOT), pX = 1 / pX(TPOT) (the rate X% of requests got).
    Throughputs divide token sums by each point's window and accelerator count.
    """
    n = len(point_ids)
    point_idx, input_tokens, output_tokens = cols.point_idx, cols.input_tokens, cols.output_tokens
    e2e_s, ttft_s = cols.e2e_s, cols.ttft_s
    with np.errstate(divide="ignore", invalid="ignore"):
        tpot = np.where(output_tokens > 1, (e2e_s - ttft_s) / (output_tokens - 1), np.nan)
    win = np.asarray(window_s, dtype=np.float64) * n_accelerators
    tok_in = np.bincount(point_idx, weights=input_tokens, minlength=n)
    tok_out = np.bincount(point_idx, weights=output_tokens, minlength=n)
    n_ok = np.bincount(point_idx, minlength=n)
    qs = list(QUANTILES.values())
    stats = {
        name: (grouped_mean(point_idx, arr, n), grouped_quantiles(point_idx, arr, qs, n))
        for name, arr in (("ttft", ttft_s), ("tpot", tpot), ("e2e", e2e_s))
    }
    with np.errstate(divide="ignore", invalid="ignore"):
        # Interactivity, tail-aligned as in the metrics table: mean(1/TPOT), pX = 1/pX(TPOT).
        # Both over positive TPOTs only, as `metrics.compute.interactivity_stats`.
        pos = np.where(tpot > 0, tpot, np.nan)
        pos_quant = grouped_quantiles(point_idx, pos, qs, n)
        stats["intvty"] = (grouped_mean(point_idx, 1.0 / pos, n), 1.0 / pos_quant)
    rows: list[Row] = []
    for i, pid in enumerate(point_ids):
        row: dict[str, Any] = dict(labels or {})
        row.update(
            point_id=pid,
            n_ok=int(n_ok[i]),
            window_s=float(window_s[i]),
            n_accelerators=n_accelerators,
            valid=point_valid(int(n_ok[i]), int(n_ok[i]) + (int(n_failed[i]) if n_failed else 0)),
            tput_per_gpu=float((tok_in[i] + tok_out[i]) / win[i]),
            output_tput_per_gpu=float(tok_out[i] / win[i]),
            input_tput_per_gpu=float(tok_in[i] / win[i]),
        )
        for name, (mean, quant) in stats.items():
            row[f"mean_{name}"] = _f(mean[i])
            for j, stat in enumerate(QUANTILES):
                row[f"{stat}_{name}"] = _f(quant[i, j])
        rows.append(row)
    return rows


def _f(v: float) -> float | None:
    return float(v) if np.isfinite(v) else None
