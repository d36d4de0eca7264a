"""Writes the recorded power series used by tests/telemetry/test_integrate.py (run once; the
JSON files are committed). The profiles are piecewise linear so the true energy of any window
is known by hand (the golden values live in the tests, derived in their comments).

    PYTHONPATH=src python tests/telemetry/data/make_power_fixtures.py
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent


def board_w(t: float) -> float:
    """200 W until 20 s, linear ramp to 500 W at 30 s, 500 W after."""
    if t < 20:
        return 200.0
    if t < 30:
        return 200.0 + 30.0 * (t - 20.0)
    return 500.0


def board_cum_j(t: float) -> float:
    """Exact integral of board_w from 0 to t."""
    if t < 20:
        return 200.0 * t
    if t < 30:
        return 4000.0 + 200.0 * (t - 20) + 15.0 * (t - 20) ** 2
    return 4000.0 + 3500.0 + 500.0 * (t - 30)


def two_gpus() -> dict[str, object]:
    ts = [0.013 + 0.1 * k for k in range(601)]
    gpu0_t = [t for t in ts if not 40.0 < t < 40.6]  # a 0.7 s hole
    gpu1_t = [t for t in ts if not 44.0 < t < 48.0]  # a 4.1 s hole
    noise = [3.0 if k % 2 else -3.0 for k in range(len(gpu0_t))]
    gpu0 = {
        "device": "gpu0:GPU-fixture-0",
        "source": "nvml",
        "boundary": "accelerator-board",
        "counter_range_j": None,
        "power_is_average_s": 0.0,
        "t_ns": [round(t * 1e9) for t in gpu0_t],
        "power_w": [round(board_w(t) + n, 3) for t, n in zip(gpu0_t, noise, strict=True)],
        "energy_j": [None] * len(gpu0_t),
    }
    gpu1 = {
        "device": "gpu1:GPU-fixture-1",
        "source": "nvml",
        "boundary": "accelerator-board",
        "counter_range_j": None,
        "power_is_average_s": 0.0,
        "t_ns": [round(t * 1e9) for t in gpu1_t],
        "power_w": [round(board_w(t) / 2, 3) for t in gpu1_t],
        "energy_j": [round(1_000_000 + board_cum_j(t) / 2, 3) for t in gpu1_t],  # mJ resolution
    }
    return {"rate_hz": 10.0, "devices": [gpu0, gpu1], "errors": []}


RAPL_RANGE_J = 262143.328850  # max_energy_range_uj = 262143328850 (a common Intel value)


def rapl_wrap() -> dict[str, object]:
    ts = [0.05 + 0.2 * k for k in range(150)]  # 5 Hz, 0.05 .. 29.85 s

    def pkg_cum(t: float) -> float:  # 60 W until 10 s, 120 W after
        return 60.0 * t if t < 10 else 600.0 + 120.0 * (t - 10)

    def raw(start_j: float, cum: float) -> float:
        return round((start_j + cum) % RAPL_RANGE_J, 6)  # energy_uj resolution

    pkg = {
        "device": "intel-rapl:0:package-0",
        "source": "rapl",
        "boundary": "cpu-package",
        "counter_range_j": RAPL_RANGE_J,
        "power_is_average_s": 0.0,
        "t_ns": [round(t * 1e9) for t in ts],
        "power_w": [None] * len(ts),
        "energy_j": [raw(261500.0, pkg_cum(t)) for t in ts],
    }
    dram = {
        "device": "intel-rapl:0:0:dram",
        "source": "rapl",
        "boundary": "cpu-dram",
        "counter_range_j": RAPL_RANGE_J,
        "power_is_average_s": 0.0,
        "t_ns": [round(t * 1e9) for t in ts],
        "power_w": [None] * len(ts),
        "energy_j": [raw(262100.0, 5.0 * t) for t in ts],
    }
    return {"rate_hz": 5.0, "devices": [pkg, dram], "errors": []}


if __name__ == "__main__":
    (HERE / "power_two_gpus_gaps.json").write_text(json.dumps(two_gpus()))
    (HERE / "power_rapl_wrap.json").write_text(json.dumps(rapl_wrap()))
