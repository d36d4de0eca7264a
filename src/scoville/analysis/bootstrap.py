"""Bootstrap confidence intervals and frontier bands: over requests and over repeated runs.

Over requests: a point's successful requests are resampled with replacement and the point's
numbers recomputed (throughputs over the fixed measurement window, medians of per-request
interactivity/latency). Over repeats: whole runs are resampled, their rows averaged per
point_id, the frontier rebuilt and read at each x. Percentile intervals; seeded numpy RNG.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from scoville.analysis.frontier import Better, frontier_of, read_at
from scoville.analysis.rows import Row, num
from scoville.records.model import RequestRecord

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Interval:
    """A point estimate with a percentile bootstrap interval at `level` (e.g. 0.95).

    `n_defined` counts the resamples that produced a value (e.g. the frontier reached x)."""

    estimate: float | None
    lo: float | None
    hi: float | None
    level: float
    n_resamples: int
    n_defined: int


def percentile_interval(
    samples: Sequence[float] | FloatArray, estimate: float | None, level: float, n_total: int
) -> Interval:
    arr = np.asarray(samples, dtype=np.float64)
    arr = arr[np.isfinite(arr)]
    if arr.size == 0:
        return Interval(estimate, None, None, level, n_total, 0)
    tail = (1.0 - level) / 2.0 * 100.0
    lo, hi = np.percentile(arr, [tail, 100.0 - tail])
    return Interval(estimate, float(lo), float(hi), level, n_total, int(arr.size))


@dataclass(frozen=True, slots=True)
class RequestArrays:
    """Per-request facts of one point's successful requests, as arrays (seconds, tokens)."""

    input_tokens: FloatArray
    output_tokens: FloatArray
    e2e_s: FloatArray
    ttft_s: FloatArray
    tpot_s: FloatArray  # decode time / (output - 1); NaN for fewer than two output tokens

    @property
    def intvty_per_s(self) -> FloatArray:
        """Per-request interactivity, 1 / TPOT (tokens/s/user)."""
        with np.errstate(divide="ignore"):
            return np.asarray(1.0 / self.tpot_s, dtype=np.float64)

    @classmethod
    def of(cls, records: Sequence[RequestRecord]) -> RequestArrays:
        ok = [r for r in records if r.ok and r.chunk_ns]
        inp = np.array([r.input_tokens for r in ok], dtype=np.float64)
        out = np.array([r.output_tokens for r in ok], dtype=np.float64)
        e2e = np.array([(r.end_ns - r.start_ns) / 1e9 for r in ok], dtype=np.float64)
        ttft = np.array([(r.chunk_ns[0] - r.start_ns) / 1e9 for r in ok], dtype=np.float64)
        decode = np.array([(r.chunk_ns[-1] - r.chunk_ns[0]) / 1e9 for r in ok], dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            tpot = np.where((out > 1) & (decode > 0), decode / (out - 1), np.nan)
        return cls(inp, out, e2e, ttft, tpot)


def bootstrap_requests(
    arrays: RequestArrays,
    window_s: float,
    n_accelerators: int = 1,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, Interval]:
    """Intervals for a point's headline numbers by resampling its requests.

    Keys: `tput_per_gpu` and `output_tput_per_gpu` (tokens/s per accelerator over the fixed
    window), `median_intvty` (tokens/s/user, 1 / median TPOT: the metrics table's
    tail-aligned convention), `median_e2e_s`, `median_ttft_s`. The window is
    held fixed: resampling asks how much the numbers depend on which requests were drawn.
    """
    n = arrays.output_tokens.size
    if n == 0:
        raise ValueError("no successful requests to resample")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_resamples, n))
    per_gpu = 1.0 / (window_s * n_accelerators)
    total = arrays.input_tokens + arrays.output_tokens
    cols: dict[str, tuple[FloatArray, Callable[[FloatArray], FloatArray], float]] = {
        "tput_per_gpu": (total, lambda a: a.sum(axis=1) * per_gpu, float(total.sum() * per_gpu)),
        "output_tput_per_gpu": (
            arrays.output_tokens,
            lambda a: a.sum(axis=1) * per_gpu,
            float(arrays.output_tokens.sum() * per_gpu),
        ),
        "median_intvty": (arrays.tpot_s, inv_median_rows, 1.0 / _nanmedian(arrays.tpot_s)),
        "median_e2e_s": (arrays.e2e_s, _nanmedian_rows, _nanmedian(arrays.e2e_s)),
        "median_ttft_s": (arrays.ttft_s, _nanmedian_rows, _nanmedian(arrays.ttft_s)),
    }
    out: dict[str, Interval] = {}
    for name, (values, stat, estimate) in cols.items():
        out[name] = percentile_interval(stat(values[idx]), estimate, level, n_resamples)
    return out


def _nanmedian(a: FloatArray) -> float:
    finite = a[np.isfinite(a)]
    return float(np.median(finite)) if finite.size else float("nan")


def _nanmedian_rows(a: FloatArray) -> FloatArray:
    with warnings.catch_warnings():  # all-NaN rows are expected (no decode): they give NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(np.nanmedian(a, axis=1), dtype=np.float64)


def inv_median_rows(tpot: FloatArray) -> FloatArray:
    """Interactivity per resample: 1 / median TPOT (NaN where no request decoded)."""
    with np.errstate(divide="ignore"):
        return np.asarray(1.0 / _nanmedian_rows(tpot), dtype=np.float64)


@dataclass(frozen=True, slots=True)
class Band:
    """A frontier's value at each x with a bootstrap interval (None where never reached)."""

    xs: tuple[float, ...]
    intervals: tuple[Interval, ...]


def average_repeats(repeats: Sequence[Sequence[Row]], metrics: Sequence[str]) -> list[Row]:
    """One row per point_id: the mean of each metric over the repeats that have it."""
    acc: dict[str, dict[str, list[float]]] = {}
    first: dict[str, Row] = {}
    for rows in repeats:
        for r in rows:
            if r.get("valid") is False:
                continue
            pid = str(r.get("point_id"))
            first.setdefault(pid, r)
            for m in metrics:
                v = num(r, m)
                if v is not None:
                    acc.setdefault(pid, {}).setdefault(m, []).append(v)
    out: list[Row] = []
    for pid, row in first.items():
        merged = dict(row)
        for m in metrics:
            vals = acc.get(pid, {}).get(m)
            merged[m] = float(np.mean(vals)) if vals else None
        out.append(merged)
    return out


def bootstrap_frontier_band(
    repeats: Sequence[Sequence[Row]],
    xs: Sequence[float],
    x_metric: str = "median_intvty",
    y_metric: str = "tput_per_gpu",
    x_better: Better = "higher",
    n_resamples: int = 500,
    seed: int = 0,
    level: float = 0.95,
) -> Band:
    """Band over repeated runs of one configuration: resample runs, average per point, rebuild
    the frontier and read it at each x. A resample whose frontier does not reach x contributes
    no value there (`n_defined` says how many did)."""
    if not repeats:
        raise ValueError("need at least one repeat")
    metrics = (x_metric, y_metric)
    central = frontier_of(average_repeats(repeats, metrics), x_metric, y_metric, x_better)
    rng = np.random.default_rng(seed)
    samples = np.full((n_resamples, len(xs)), np.nan)
    for b in range(n_resamples):
        pick = rng.integers(0, len(repeats), size=len(repeats))
        rows = average_repeats([repeats[i] for i in pick], metrics)
        f = frontier_of(rows, x_metric, y_metric, x_better)
        for j, x in enumerate(xs):
            r = read_at(f, x)
            if r.value is not None:
                samples[b, j] = r.value
    intervals = tuple(
        percentile_interval(samples[:, j], read_at(central, x).value, level, n_resamples)
        for j, x in enumerate(xs)
    )
    return Band(tuple(float(x) for x in xs), intervals)


_CELLS = 20_000_000  # resample indices held at once (160 MB of int64)


def resampled(
    values: npt.NDArray[Any],
    stat: Callable[[npt.NDArray[Any]], FloatArray],
    n_resamples: int,
    rng: np.random.Generator,
) -> FloatArray:
    """`stat` (row-wise over an (r, n) array) of `n_resamples` resamples of `values`, drawn
    in batches so that memory stays bounded for points with many requests. `stat` may return
    one value per resample (shape (r,)) or several ((r, k))."""
    n = values.size
    batch = max(1, _CELLS // max(1, n))
    parts = []
    for start in range(0, n_resamples, batch):
        idx = rng.integers(0, n, size=(min(batch, n_resamples - start), n))
        parts.append(stat(values[idx]))
    return np.asarray(np.concatenate(parts), dtype=np.float64)


def _y_source(arr: RequestArrays, y_metric: str) -> FloatArray:
    if y_metric == "output_tput_per_gpu":
        return arr.output_tokens
    return arr.input_tokens + arr.output_tokens


def resampled_xy(
    arr: RequestArrays,
    per_gpu: float,
    n_resamples: int,
    rng: np.random.Generator,
    y_metric: str = "tput_per_gpu",
) -> tuple[FloatArray, FloatArray]:
    """(median interactivity, `y_metric`) of each of `n_resamples` resamples of one point's
    requests, x and y from the same draws (`per_gpu` = 1 / (window s x accelerators)), drawn
    in batches so that memory stays bounded for points with many requests."""
    y_src = _y_source(arr, y_metric)

    def both(idx: npt.NDArray[Any]) -> FloatArray:  # the draws themselves: shared by x and y
        return np.column_stack((inv_median_rows(arr.tpot_s[idx]), y_src[idx].sum(axis=1)))

    xy = resampled(np.arange(arr.output_tokens.size), both, n_resamples, rng)
    return xy[:, 0], xy[:, 1] * per_gpu


def bootstrap_frontier_band_requests(
    points: Mapping[str, tuple[RequestArrays, float]],
    xs: Sequence[float],
    n_accelerators: int = 1,
    y_metric: str = "tput_per_gpu",
    n_resamples: int = 300,
    seed: int = 0,
    level: float = 0.95,
) -> Band:
    """Band of the throughput/interactivity frontier from per-request records: each point
    (point_id -> (its request arrays, its window in s)) is resampled, recomputed as
    (median_intvty, y_metric), and the frontier rebuilt per replicate."""
    rng = np.random.default_rng(seed)
    reps: dict[str, dict[str, FloatArray]] = {}
    central_rows: list[Row] = []
    for pid, (arr, window_s) in points.items():
        per_gpu = 1.0 / (window_s * n_accelerators)
        rep_x, rep_y = resampled_xy(arr, per_gpu, n_resamples, rng, y_metric)
        reps[pid] = {"x": rep_x, "y": rep_y}
        central_rows.append(
            {
                "point_id": pid,
                "median_intvty": 1.0 / _nanmedian(arr.tpot_s),
                y_metric: float(_y_source(arr, y_metric).sum() * per_gpu),
            }
        )
    central = frontier_of(central_rows, "median_intvty", y_metric)
    samples = np.full((n_resamples, len(xs)), np.nan)
    for b in range(n_resamples):
        rows = [
            {"point_id": pid, "median_intvty": float(r["x"][b]), y_metric: float(r["y"][b])}
            for pid, r in reps.items()
        ]
        f = frontier_of(rows, "median_intvty", y_metric)
        for j, x in enumerate(xs):
            v = read_at(f, x).value
            if v is not None:
                samples[b, j] = v
    intervals = tuple(
        percentile_interval(samples[:, j], read_at(central, x).value, level, n_resamples)
        for j, x in enumerate(xs)
    )
    return Band(tuple(float(x) for x in xs), intervals)
