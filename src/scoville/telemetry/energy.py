"""Per-point energy figures: measured energy over each point's exact window, per token and per
kW, next to the declared figures the metrics table already has.

Input: the run's power series, its `PointWindow`s and records. Output: one flat dict per point
(merged into that point's summary row). Token counts are those of the point's successful
measured requests, the same ones the throughput metrics divide by the window.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scoville.metrics.compute import per_kw
from scoville.records.model import PointWindow, RequestRecord
from scoville.telemetry.integrate import WindowEnergy, integrate_power
from scoville.telemetry.series import SPEC_BOUNDARY, PowerSeries

# Which measured boundary the per-accelerator figures use, best first.
PRIMARY_ORDER = ("accelerator-board", "node-wall", "cpu-package", "declared")

ENERGY_FIELDS = (
    "energy_j",
    "energy_per_request_j",
    "energy_per_input_token_j",
    "energy_per_output_token_j",
    "energy_per_total_token_j",
    "measured_power_w",
    "measured_power_w_per_accelerator",
    "measured_power_boundary",
    "tput_per_measured_kw",
    "output_tput_per_measured_kw",
    "input_tput_per_measured_kw",
    "power_valid",
    "power_flags",
)


def _empty() -> dict[str, Any]:
    out: dict[str, Any] = dict.fromkeys(ENERGY_FIELDS)
    out["power_valid"] = False
    out["power_flags"] = ["no_power_source"]
    return out


def _primary(by_boundary: dict[str, WindowEnergy]) -> WindowEnergy | None:
    for b in PRIMARY_ORDER:
        if b in by_boundary:
            return by_boundary[b]
    return next(iter(by_boundary.values()), None)


def _div(a: float | None, b: float) -> float | None:
    return a / b if a is not None and b > 0 else None


def window_fields(
    w: WindowEnergy,
    n_ok: int,
    input_tokens: int,
    output_tokens: int,
    n_accelerators: int,
) -> dict[str, Any]:
    """The figures of one window at one boundary (see ENERGY_FIELDS; J, W, tokens/s/kW)."""
    e = w.energy_j
    window_s = w.window_s
    watts = w.mean_power_w

    def per_measured_kw(tokens: int) -> float | None:
        # all accelerators' tokens/s over all accelerators' watts: the per-accelerator ratio
        return per_kw(tokens / window_s, watts) if watts else None

    return {
        "energy_j": e,
        "energy_per_request_j": _div(e, n_ok),
        "energy_per_input_token_j": _div(e, input_tokens),
        "energy_per_output_token_j": _div(e, output_tokens),
        "energy_per_total_token_j": _div(e, input_tokens + output_tokens),
        "measured_power_w": w.mean_power_w,
        "measured_power_w_per_accelerator": _div(w.mean_power_w, n_accelerators),
        "measured_power_boundary": SPEC_BOUNDARY.get(w.boundary, w.boundary),
        "tput_per_measured_kw": per_measured_kw(input_tokens + output_tokens),
        "output_tput_per_measured_kw": per_measured_kw(output_tokens),
        "input_tput_per_measured_kw": per_measured_kw(input_tokens),
        "power_valid": w.valid,
        "power_flags": list(w.flags),
    }


def point_energy_fields(
    series: PowerSeries | None,
    windows: Sequence[PointWindow],
    records: Sequence[RequestRecord],
    n_accelerators: int = 1,
) -> dict[str, dict[str, Any]]:
    """point_id -> energy fields. The primary boundary (board, else node wall, else CPU
    package, else declared) fills ENERGY_FIELDS; every measured boundary also gets
    `energy_j_<boundary>` and `power_valid_<boundary>` (dashes as underscores)."""
    out: dict[str, dict[str, Any]] = {}
    for win in windows:
        mine = [r for r in records if r.point_id == win.point_id and r.phase == "measure" and r.ok]
        if series is None or not series.devices or win.end_ns <= win.start_ns:
            out[win.point_id] = _empty()
            continue
        by_b = integrate_power(series, win.start_ns, win.end_ns)
        primary = _primary(by_b)
        assert primary is not None
        n_in = sum(r.input_tokens for r in mine)
        n_out = sum(r.output_tokens for r in mine)
        fields = window_fields(primary, len(mine), n_in, n_out, n_accelerators)
        for b, w in by_b.items():
            key = b.replace("-", "_")
            fields[f"energy_j_{key}"] = w.energy_j
            fields[f"power_valid_{key}"] = w.valid
        out[win.point_id] = fields
    return out
