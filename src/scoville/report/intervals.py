"""Bootstrap intervals a report draws: the throughput/interactivity frontier's band and each
point's error bars, resampled over the run's measured requests (analysis/bootstrap.py).

Only valid points enter the band (an invalid point is never on a frontier). A run without
records.jsonl (a simulation without --records, an import) gets no intervals and says so.
Repeated runs of one configuration also get a band over resampled runs (`repeats_band`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scoville.analysis.bootstrap import (
    Interval,
    RequestArrays,
    average_repeats,
    bootstrap_frontier_band,
    bootstrap_frontier_band_requests,
    bootstrap_requests,
)
from scoville.analysis.frontier import INTERACTIVITY, TPUT_PER_GPU
from scoville.analysis.load import load_point_arrays
from scoville.analysis.rows import Row, num

LEVEL = 0.95
MAX_RECORDS_BYTES = 200_000_000  # past this, reading records would dominate writing a report
BAND_STEPS = 24  # x positions the band is read at, between the frontier's ends


@dataclass(frozen=True, slots=True)
class RunIntervals:
    """`band`: rows {x, lo, hi} (tok/s/user, tok/s/accelerator) where resamples reached x;
    `points`: point_id -> bootstrap_requests' intervals; `note`: how, or why there are none."""

    band: tuple[dict[str, float], ...] = ()
    points: Mapping[str, Mapping[str, Interval]] = field(default_factory=dict)
    note: str = ""


def _grid(lo: float, hi: float, log: bool) -> list[float]:
    if hi <= lo:
        return [lo]
    if log and lo > 0:
        step = (math.log(hi) - math.log(lo)) / (BAND_STEPS - 1)
        return [math.exp(math.log(lo) + i * step) for i in range(BAND_STEPS)]
    return [lo + (hi - lo) * i / (BAND_STEPS - 1) for i in range(BAND_STEPS)]


def _band(
    arrays: Mapping[str, tuple[RequestArrays, float]],
    xs: Sequence[float],
    n_acc: int,
    log_x: bool,
    n_resamples: int,
    seed: int,
) -> tuple[dict[str, float], ...]:
    """The band between the valid points' smallest and largest interactivity."""
    if len(arrays) < 2 or len(xs) < 2:
        return ()
    grid = _grid(min(xs), max(xs), log_x)
    band = bootstrap_frontier_band_requests(
        arrays, grid, n_acc, n_resamples=n_resamples, seed=seed, level=LEVEL
    )
    return tuple(
        {"x": x, "lo": iv.lo, "hi": iv.hi}
        for x, iv in zip(band.xs, band.intervals, strict=True)
        if iv.lo is not None and iv.hi is not None
    )


def run_intervals(
    run_dir: Path,
    rows: Sequence[Row],
    log_x: bool = False,
    n_resamples: int = 300,
    seed: int = 0,
) -> RunIntervals:
    """Intervals for one run directory's points; empty with a note when it has no records."""
    if n_resamples <= 0:
        return RunIntervals(note="no intervals (resampling off)")
    records = run_dir / "records.jsonl"
    if not records.is_file():
        return RunIntervals(note="no intervals: the run kept no per-request records")
    if records.stat().st_size > MAX_RECORDS_BYTES:
        size_mb = records.stat().st_size / 1e6
        return RunIntervals(
            note=f"no intervals: records.jsonl is {size_mb:,.0f} MB "
            f"(over {MAX_RECORDS_BYTES / 1e6:,.0f} MB; `scoville compare --ci` resamples it)"
        )
    arrays = load_point_arrays(run_dir)
    n_acc = int(num(rows[0], "n_accelerators") or 1) if rows else 1
    points = {
        pid: bootstrap_requests(arr, window_s, n_acc, n_resamples, seed, LEVEL)
        for pid, (arr, window_s) in arrays.items()
    }
    valid = [r for r in rows if r.get("valid") is not False]
    ids = {str(r.get("point_id")) for r in valid}
    xs = [x for r in valid if (x := num(r, "median_intvty")) is not None]
    mine = {k: v for k, v in arrays.items() if k in ids}
    band = _band(mine, xs, n_acc, log_x, n_resamples, seed)
    note = (
        f"{LEVEL:.0%} bootstrap intervals over measured requests "
        f"({n_resamples} resamples, seed {seed})"
    )
    return RunIntervals(band, points, note)


def interval_fields(iv: Mapping[str, Interval] | None, keys: Mapping[str, str]) -> dict[str, Any]:
    """Chart fields `<axis>_lo`/`<axis>_hi` from a point's intervals; `keys` maps an axis
    ("x", "y") to the interval's name (e.g. "median_intvty")."""
    out: dict[str, Any] = {}
    for axis, name in keys.items():
        got = iv.get(name) if iv else None
        if got is not None and got.lo is not None and got.hi is not None:
            out[f"{axis}_lo"], out[f"{axis}_hi"] = got.lo, got.hi
    return out


def repeats_band(
    repeats: Sequence[Sequence[Row]],
    log_x: bool = False,
    n_resamples: int = 300,
    seed: int = 0,
) -> tuple[list[Row], tuple[dict[str, float], ...]]:
    """Repeated runs of one configuration: their mean point per point_id (interactivity and
    throughput averaged over the repeats that have them valid; `n_ok`/`n_sent` summed) and the
    frontier's band over resampled runs (`bootstrap_frontier_band`)."""
    mean_rows: list[Row] = []
    for r in average_repeats(repeats, (INTERACTIVITY, TPUT_PER_GPU)):
        same = [x for rows in repeats for x in rows if x.get("point_id") == r.get("point_id")]
        n_ok = sum(int(x.get("n_ok") or 0) for x in same)
        mean_rows.append(
            {**r, "n_ok": n_ok, "n_sent": sum(int(x.get("n_sent") or 0) for x in same)}
        )
    xs = [x for r in mean_rows if (x := num(r, INTERACTIVITY)) is not None]
    if n_resamples <= 0 or len(xs) < 2:
        return mean_rows, ()
    grid = _grid(min(xs), max(xs), log_x)
    band = bootstrap_frontier_band(repeats, grid, n_resamples=n_resamples, seed=seed, level=LEVEL)
    rows = tuple(
        {"x": x, "lo": iv.lo, "hi": iv.hi}
        for x, iv in zip(band.xs, band.intervals, strict=True)
        if iv.lo is not None and iv.hi is not None
    )
    return mean_rows, rows
