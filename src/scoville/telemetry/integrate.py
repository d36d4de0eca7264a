"""Energy over an exact measurement window, per device and per boundary, with validity flags.

Power samples are integrated with the trapezoid rule, the power at each window edge linearly
interpolated between the samples that bracket it; energy counters are unwrapped and read at the
edges by the same interpolation. The counter wins when present (it is exact); the power
integral is then a cross-check. Flags say when a figure should not be published.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from scoville.telemetry.series import DeviceSeries, PowerSeries

F64 = npt.NDArray[np.float64]

# Flags that make a window's energy unfit for publication; others are informational.
INVALIDATING = frozenset(
    {
        "no_samples",
        "coverage_low",
        "gap_large",
        "device_missing",
        "counter_reset",
        "power_counter_disagree",
    }
)


@dataclass(frozen=True, slots=True)
class DeviceEnergy:
    """One device over one window. `energy_j` is the counter figure when the device has a
    counter, else the power integral. `coverage` is the share of the window between the
    device's first and last sample; `largest_gap_s` the longest stretch touching the window
    with no sample (edges beyond the samples included)."""

    device: str
    boundary: str
    energy_j: float | None
    method: str  # "counter" | "power" | "none"
    power_integral_j: float | None
    counter_j: float | None
    coverage: float
    largest_gap_s: float
    counter_wraps: int
    counter_reset: bool
    flags: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class WindowEnergy:
    """All devices of one boundary over [start_ns, end_ns]."""

    boundary: str
    start_ns: int
    end_ns: int
    energy_j: float | None  # sum over devices; None when any expected device has no figure
    mean_power_w: float | None  # energy_j / window
    n_devices: int  # devices with a figure
    expected_devices: int
    devices: tuple[DeviceEnergy, ...]
    flags: tuple[str, ...]

    @property
    def valid(self) -> bool:
        return self.energy_j is not None and not INVALIDATING.intersection(self.flags)

    @property
    def window_s(self) -> float:
        return (self.end_ns - self.start_ns) / 1e9


def _interp_extrap(x: float, xs: F64, ys: F64) -> float:
    """Linear interpolation, extended past the ends along the first/last segment."""
    if x <= xs[0]:
        i = 0
    elif x >= xs[-1]:
        i = len(xs) - 2
    else:
        return float(np.interp(x, xs, ys))
    slope = (ys[i + 1] - ys[i]) / (xs[i + 1] - xs[i]) if xs[i + 1] > xs[i] else 0.0
    return float(ys[i] + slope * (x - xs[i]))


def power_integral_j(t_s: F64, p_w: F64, a_s: float, b_s: float) -> float | None:
    """Trapezoid integral of power over [a_s, b_s] with interpolated edge values (held
    constant beyond the first/last sample). None with fewer than two samples."""
    if len(t_s) < 2:
        return None
    inside = (t_s > a_s) & (t_s < b_s)
    xs = np.concatenate(([a_s], t_s[inside], [b_s]))
    ys = np.concatenate(([np.interp(a_s, t_s, p_w)], p_w[inside], [np.interp(b_s, t_s, p_w)]))
    return float(np.sum((xs[1:] - xs[:-1]) * (ys[1:] + ys[:-1]) / 2.0))


def unwrap_counter(e_j: F64, range_j: float | None) -> tuple[F64, int, bool]:
    """Cumulative energy since the first sample. A decrease is a wrap when the range is known
    (range added), else a reset (returned as True; that delta is taken as 0)."""
    d = np.diff(e_j)
    neg = d < 0
    wraps = int(np.count_nonzero(neg))
    if wraps and range_j is None:
        d = np.where(neg, 0.0, d)
        return np.concatenate(([0.0], np.cumsum(d))), 0, True
    if wraps:
        d = np.where(neg, d + float(range_j or 0.0), d)
    return np.concatenate(([0.0], np.cumsum(d))), wraps, False


def _largest_gap_s(t_s: F64, a_s: float, b_s: float) -> float:
    if len(t_s) == 0:
        return b_s - a_s
    before = np.nonzero(t_s <= a_s)[0]
    after = np.nonzero(t_s >= b_s)[0]
    lo = int(before[-1]) if len(before) else 0
    hi = int(after[0]) if len(after) else len(t_s) - 1
    gaps = list(np.diff(t_s[lo : hi + 1]))
    if not len(before):
        gaps.append(t_s[0] - a_s)
    if not len(after):
        gaps.append(b_s - t_s[-1])
    return float(max(gaps)) if gaps else 0.0


def _coverage(t_s: F64, b_s: float) -> float:
    """Share of [0, b_s] between the first and the last sample."""
    if not len(t_s):
        return 0.0
    return max(0.0, min(float(t_s[-1]), b_s) - max(float(t_s[0]), 0.0)) / b_s


def _disagree(p_int: float | None, counter_j: float | None, tol: float) -> bool:
    if p_int is None or counter_j is None or counter_j <= 0:
        return False
    return abs(p_int - counter_j) / counter_j > tol


def _finite(t_s: F64, values: Sequence[float | None]) -> tuple[F64, F64]:
    v = np.array([np.nan if x is None else x for x in values], dtype=np.float64)
    ok = np.isfinite(v)
    return t_s[ok], v[ok]


def integrate_device(
    ds: DeviceSeries,
    start_ns: int,
    end_ns: int,
    max_gap_s: float | None = None,
    min_coverage: float = 0.95,
    disagree_tol: float = 0.10,
) -> DeviceEnergy:
    """Energy of one device over the window; see `DeviceEnergy` for the fields.

    `max_gap_s` defaults to max(1 s, 3 x the median sample interval)."""
    t_all = (np.asarray(ds.t_ns, dtype=np.int64) - start_ns).astype(np.float64) / 1e9
    b_s = (end_ns - start_ns) / 1e9
    tp, pw = _finite(t_all, ds.power_w)
    te, ej = _finite(t_all, ds.energy_j)
    p_int = power_integral_j(tp, pw, 0.0, b_s)
    counter_j, wraps, reset = None, 0, False
    if len(te) >= 2:
        cum, wraps, reset = unwrap_counter(ej, ds.info.counter_range_j)
        counter_j = _interp_extrap(b_s, te, cum) - _interp_extrap(0.0, te, cum)
    t_used = np.union1d(tp, te)
    cov = _coverage(t_used, b_s)
    gap_s = _largest_gap_s(t_used, 0.0, b_s)
    if max_gap_s is None:
        med = float(np.median(np.diff(t_used))) if len(t_used) >= 2 else 0.0
        max_gap_s = max(1.0, 3.0 * med)
    flags = [
        name
        for name, bad in (
            ("no_samples", counter_j is None and p_int is None),
            ("coverage_low", cov < min_coverage),
            ("gap_large", gap_s > max_gap_s),
            ("counter_wrapped", wraps > 0),
            ("counter_reset", reset),
            ("power_counter_disagree", _disagree(p_int, counter_j, disagree_tol)),
        )
        if bad
    ]
    energy, method = (counter_j, "counter") if counter_j is not None else (p_int, "power")
    return DeviceEnergy(
        device=ds.info.device,
        boundary=ds.info.boundary,
        energy_j=energy,
        method=method if energy is not None else "none",
        power_integral_j=p_int,
        counter_j=counter_j,
        coverage=cov,
        largest_gap_s=gap_s,
        counter_wraps=wraps,
        counter_reset=reset,
        flags=tuple(flags),
    )


def integrate_window(
    devices: Sequence[DeviceSeries],
    start_ns: int,
    end_ns: int,
    expected_devices: int | None = None,
    max_gap_s: float | None = None,
    min_coverage: float = 0.95,
    disagree_tol: float = 0.10,
) -> WindowEnergy:
    """Sum of the devices' energies over the window (all devices must share one boundary).

    The window energy is None when any expected device has no figure; its flags are the
    union of the devices' flags plus `device_missing`."""
    if end_ns <= start_ns:
        raise ValueError(f"empty window [{start_ns}, {end_ns}]")
    boundaries = {d.info.boundary for d in devices}
    if len(boundaries) > 1:
        raise ValueError(f"one boundary per window, got {sorted(boundaries)}")
    per = tuple(
        integrate_device(d, start_ns, end_ns, max_gap_s, min_coverage, disagree_tol)
        for d in devices
    )
    expected = expected_devices if expected_devices is not None else len(per)
    have = [d for d in per if d.energy_j is not None]
    flags = sorted({f for d in per for f in d.flags})
    if len(have) < expected or expected == 0:
        flags.append("device_missing")
    total = sum(d.energy_j for d in have if d.energy_j is not None) if have else None
    if len(have) < expected:
        total = None
    window_s = (end_ns - start_ns) / 1e9
    return WindowEnergy(
        boundary=next(iter(boundaries)) if boundaries else "none",
        start_ns=start_ns,
        end_ns=end_ns,
        energy_j=total,
        mean_power_w=total / window_s if total is not None else None,
        n_devices=len(have),
        expected_devices=expected,
        devices=per,
        flags=tuple(flags),
    )


def integrate_power(
    series: PowerSeries,
    start_ns: int,
    end_ns: int,
    max_gap_s: float | None = None,
    min_coverage: float = 0.95,
) -> dict[str, WindowEnergy]:
    """`integrate_window` for every boundary in the series (boundary -> result)."""
    return {
        b: integrate_window(series.by_boundary(b), start_ns, end_ns, None, max_gap_s, min_coverage)
        for b in series.boundaries()
    }
