"""Window integration against recorded series whose true energy is known by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scoville.telemetry.integrate import integrate_power, integrate_window, unwrap_counter
from scoville.telemetry.series import DeviceInfo, DeviceSeries, PowerReading, PowerSeries

DATA = Path(__file__).parent / "data"
S = 1_000_000_000


def load(name: str) -> PowerSeries:
    return PowerSeries.from_json_dict(json.loads((DATA / name).read_text()))


def test_two_gpus_window_without_gaps_is_exact_and_valid() -> None:
    # board profile: 200 W to 20 s, ramp to 500 W at 30 s, 500 W after; gpu1 draws half.
    # [5.03, 39.5]: gpu0 = 200*14.97 + 3500 + 500*9.5 = 11244 J; gpu1 = 5622 J; sum 16866 J.
    ps = load("power_two_gpus_gaps.json")
    w = integrate_window(ps.devices, int(5.03 * S), int(39.5 * S))
    assert w.energy_j == pytest.approx(16866.0, rel=0.005)
    assert w.valid, w.flags
    assert w.n_devices == 2
    assert w.mean_power_w == pytest.approx(16866.0 / 34.47, rel=0.005)
    gpu0, gpu1 = w.devices
    assert gpu0.method == "power" and gpu1.method == "counter"
    assert gpu1.counter_j == pytest.approx(5622.0, rel=1e-4)  # the counter is exact


def test_gaps_keep_energy_within_half_percent_and_large_gap_invalidates() -> None:
    # [5.03, 55.07]: gpu0 = 200*14.97 + 3500 + 500*25.07 = 19029 J; gpu1 = 9514.5 J.
    ps = load("power_two_gpus_gaps.json")
    w = integrate_window(ps.devices, int(5.03 * S), int(55.07 * S))
    assert w.energy_j == pytest.approx(28543.5, rel=0.005)
    gpu0, gpu1 = w.devices
    assert gpu0.energy_j == pytest.approx(19029.0, rel=0.005)
    assert gpu0.largest_gap_s == pytest.approx(0.7, abs=1e-6)
    assert "gap_large" not in gpu0.flags  # 0.7 s < max(1 s, 3 x 0.1 s)
    assert gpu1.largest_gap_s == pytest.approx(4.1, abs=1e-6)
    assert "gap_large" in gpu1.flags
    assert not w.valid
    assert "gap_large" in w.flags


def test_explicit_max_gap_makes_the_small_gap_count() -> None:
    ps = load("power_two_gpus_gaps.json")
    w = integrate_window(ps.devices[:1], int(35 * S), int(45 * S), max_gap_s=0.5)
    assert "gap_large" in w.flags
    assert w.energy_j == pytest.approx(5000.0, rel=0.005)  # 500 W x 10 s


def test_rapl_counter_wrap_is_unwrapped_exactly() -> None:
    # package: 60 W to 10 s then 120 W; [1, 29] = 60*9 + 120*19 = 2820 J; the raw counter
    # starts 643 J below its 262143.32885 J range, so it wraps near 10.7 s.
    # dram: 5 W constant, starts 43 J below the range: [1, 29] = 140 J, wraps near 8.7 s.
    ps = load("power_rapl_wrap.json")
    out = integrate_power(ps, 1 * S, 29 * S)
    assert set(out) == {"cpu-package", "cpu-dram"}
    pkg, dram = out["cpu-package"], out["cpu-dram"]
    assert pkg.energy_j == pytest.approx(2820.0, rel=1e-4)
    assert dram.energy_j == pytest.approx(140.0, rel=1e-4)
    assert pkg.devices[0].counter_wraps == 1
    assert "counter_wrapped" in pkg.flags
    assert pkg.valid and dram.valid  # a wrap with a known range is handled, not invalid


def test_counter_drop_without_range_is_a_reset_and_invalid() -> None:
    ps = load("power_rapl_wrap.json")
    ds = ps.devices[0]
    ds.info = DeviceInfo(ds.info.device, "rapl", "cpu-package", counter_range_j=None)
    w = integrate_window([ds], 1 * S, 29 * S)
    assert "counter_reset" in w.flags
    assert not w.valid


def test_window_beyond_the_samples_is_low_coverage() -> None:
    ps = load("power_rapl_wrap.json")
    w = integrate_window(ps.by_boundary("cpu-package"), 20 * S, 40 * S)
    assert w.devices[0].coverage == pytest.approx(9.85 / 20, abs=1e-6)
    assert "coverage_low" in w.flags and not w.valid


def test_missing_device_makes_energy_unknown() -> None:
    ps = load("power_two_gpus_gaps.json")
    w = integrate_window(ps.devices[:1], 5 * S, 10 * S, expected_devices=2)
    assert w.energy_j is None
    assert "device_missing" in w.flags and not w.valid


def test_power_and_counter_disagreement_is_flagged() -> None:
    # 100 W reported, but the counter grows 150 J/s: one of them is wrong.
    ds = DeviceSeries(DeviceInfo("gpu0", "nvml", "accelerator-board"))
    for k in range(21):
        ds.append(k * S // 2, PowerReading("gpu0", power_w=100.0, energy_j=75.0 * k))
    w = integrate_window([ds], 1 * S, 9 * S)
    assert w.energy_j == pytest.approx(1200.0)
    assert w.devices[0].power_integral_j == pytest.approx(800.0)
    assert "power_counter_disagree" in w.flags and not w.valid


def test_edges_are_interpolated_between_samples() -> None:
    # samples at 0 s (0 W) and 10 s (100 W): the ramp over [2.5, 7.5] s is 5 s x 50 W = 250 J.
    ds = DeviceSeries(DeviceInfo("n", "ipmi", "node-wall"))
    ds.append(0, PowerReading("n", power_w=0.0))
    ds.append(10 * S, PowerReading("n", power_w=100.0))
    w = integrate_window([ds], int(2.5 * S), int(7.5 * S), max_gap_s=20.0)
    assert w.energy_j == pytest.approx(250.0)
    assert w.valid


def test_unwrap_counter_golden() -> None:
    import numpy as np

    cum, wraps, reset = unwrap_counter(np.array([90.0, 98.0, 3.0, 10.0]), 100.0)
    assert list(cum) == [0.0, 8.0, 13.0, 20.0]
    assert (wraps, reset) == (1, False)


def test_series_round_trips_through_json() -> None:
    ps = load("power_rapl_wrap.json")
    again = PowerSeries.from_json_dict(json.loads(json.dumps(ps.to_json_dict())))
    assert again.to_json_dict() == ps.to_json_dict()


def test_empty_window_is_rejected() -> None:
    ps = load("power_rapl_wrap.json")
    with pytest.raises(ValueError):
        integrate_window(ps.devices[:1], 5 * S, 5 * S)
