"""A comparison as `scoville compare` asks for it: results loaded, per-system power bases
applied, one table per configuration against the baseline, and (optionally) bootstrap
intervals over requests, each table paired with its run directory by configuration key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from scoville.analysis.bootstrap import (
    Interval,
    RequestArrays,
    bootstrap_frontier_band_requests,
)
from scoville.analysis.compare import (
    ComparisonTable,
    both_powered,
    compare_groups,
    find_group,
    gate,
    make_line,
)
from scoville.analysis.frontier import frontier_of
from scoville.analysis.load import load_point_arrays, load_rows
from scoville.analysis.power import PowerBasis, with_power
from scoville.analysis.profile import at_boundary, load_rows_with_runs
from scoville.analysis.rows import GroupKey, Row, group_rows
from scoville.analysis.tco import tco_prices
from scoville.figures import num as figure

PointArrays = dict[str, tuple[RequestArrays, float]]


@dataclass(frozen=True, slots=True)
class CompareRequest:
    """What to compare: result paths, the baseline's name, interactivity targets (tok/s/user),
    per-system power bases and $ per accelerator-hour, and bootstrap resamples (0 = none)."""

    paths: Sequence[Path]
    baseline: str
    targets: Sequence[float] = ()
    power: Mapping[str, PowerBasis] = field(default_factory=dict)
    usd_per_accelerator_hour: Mapping[str, float] = field(default_factory=dict)
    n_resamples: int = 0
    allow_unlike: bool = False  # show ratios of unlike pairs, labelled
    power_profile: Path | None = None  # YAML: TDP, host/network/cooling shares, PUE
    boundary: str | None = None  # re-express every row's per-kW figures at this boundary
    tco: Path | None = None  # TCO file: cost lines at each system's $/hour


def with_power_by_system(rows: Sequence[Row], power: Mapping[str, PowerBasis]) -> list[Row]:
    """Rows whose system (case-insensitive) has a basis in `power` get their per-kW fields
    recomputed at it; the other rows are unchanged."""
    bases = {k.lower(): v for k, v in power.items()}
    out: list[Row] = []
    for r in rows:
        basis = bases.get(str(r.get("system", "")).lower())
        out.extend(with_power([r], basis) if basis is not None else [r])
    return out


def compare_results(req: CompareRequest) -> list[ComparisonTable]:
    """One table per configuration against the baseline (see `compare_groups`), each with an
    interval line when `n_resamples` > 0 and both sides came from run directories."""
    rows: list[Row] = load_rows_with_runs(req.paths)
    rows = with_power_by_system(rows, req.power)
    rows = at_boundary(rows, req.boundary, req.power_profile)
    prices = dict(req.usd_per_accelerator_hour)
    if req.tco is not None:
        prices = {**tco_prices(req.tco, rows), **prices}
    tables = compare_groups(rows, req.baseline, req.targets, prices, req.allow_unlike)
    if req.n_resamples > 0:
        tables = add_request_intervals(tables, rows, req.baseline, req.paths, req.n_resamples)
    return tables


def run_arrays(paths: Sequence[Path]) -> dict[GroupKey, tuple[PointArrays, int]]:
    """Per configuration: the measured requests of each point of its run directory (one with
    records.jsonl) and its accelerator count."""
    out: dict[GroupKey, tuple[PointArrays, int]] = {}
    for p in paths:
        if p.is_dir() and (p / "records.jsonl").exists():
            first = load_rows(p)[0]
            n_acc = int(first.get("n_accelerators") or 1)
            out[GroupKey.of(first)] = (load_point_arrays(p), n_acc)
    return out


def add_request_intervals(
    tables: Sequence[ComparisonTable],
    rows: Sequence[Row],
    baseline: str,
    paths: Sequence[Path],
    n_resamples: int,
) -> list[ComparisonTable]:
    """Each table plus a bootstrap-over-requests interval line at the baseline's best
    interactivity, where both its configuration and the baseline have records. A table is
    matched to its configuration by label (`ComparisonTable.system`), never by position."""
    groups = group_rows(rows)
    base_key = find_group(list(groups), baseline)
    x = frontier_of(groups[base_key], y_metric="tput_per_gpu").best_x()
    arrays = run_arrays(paths)
    by_label = {key.label(): key for key in groups}
    out = []
    for table in tables:
        key = by_label.get(table.system)
        if x is not None and key in arrays and base_key in arrays:
            (sp, sn), (bp, bn) = arrays[key], arrays[base_key]
            table = with_request_intervals(table, x, sp, bp, (sn, bn), n_resamples=n_resamples)
        out.append(table)
    return out


def with_request_intervals(
    table: ComparisonTable,
    x: float,
    system_points: Mapping[str, tuple[RequestArrays, float]],
    baseline_points: Mapping[str, tuple[RequestArrays, float]],
    n_accelerators: tuple[int, int] = (1, 1),
    n_resamples: int = 300,
    seed: int = 0,
    level: float = 0.95,
) -> ComparisonTable:
    """The table plus one line: bootstrap intervals (over requests) of each side's throughput
    at interactivity x, per kW when both sides declare power, else per accelerator."""
    per_kw = both_powered(table)

    def side(
        points: Mapping[str, tuple[RequestArrays, float]], n_acc: int, basis: PowerBasis | None
    ) -> Interval:
        band = bootstrap_frontier_band_requests(
            points, [x], n_acc, "tput_per_gpu", n_resamples, seed, level
        )
        iv = band.intervals[0]
        k = 1000.0 / basis.w_per_accelerator if (per_kw and basis) else 1.0

        def scaled(v: float | None) -> float | None:
            return None if v is None else v * k

        return Interval(
            scaled(iv.estimate),
            scaled(iv.lo),
            scaled(iv.hi),
            iv.level,
            iv.n_resamples,
            iv.n_defined,
        )

    si = side(system_points, n_accelerators[0], table.system_power)
    bi = side(baseline_points, n_accelerators[1], table.baseline_power)
    s_est, s_lo, s_hi, s_n = si.estimate, si.lo, si.hi, si.n_defined
    b_est, b_lo, b_hi, b_n = bi.estimate, bi.lo, bi.hi, bi.n_defined
    unit = "tok/s/kW" if per_kw else "tok/s/acc"
    note = (
        f"{level:.0%} interval over requests: system [{figure(s_lo)}, {figure(s_hi)}] "
        f"({s_n}/{n_resamples} resamples reach x), baseline [{figure(b_lo)}, {figure(b_hi)}] "
        f"({b_n}/{n_resamples})"
    )
    line = make_line(
        "interval_tput_at_intvty",
        f"Throughput at {x:.4g} tok/s/user, re-measured from requests",
        unit,
        s_est,
        b_est,
        "higher",
        "unreachable",
    )
    line = replace(line, note=note)
    if table.comparability is not None and not table.comparability.like:
        (line,) = gate(
            replace(table, lines=(line,)), table.comparability, table.unlike_allowed
        ).lines
    return replace(table, lines=(*table.lines, line))
