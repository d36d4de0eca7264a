"""The client's distrust rule on real loopback measurements, both sides: a light load on the
reference emitter (another process) raises no client flag; a load that swamps the client does.
The rule is the one run time and `scoville calibrate` share (`integrity.saturation_flags`)."""

from __future__ import annotations

import pytest
from quiet_stream import reference_level, too_busy

from scoville.client.selftest.calibrate import LevelResult
from scoville.client.selftest.integrity import saturation_flags

CLIENT_FLAGS = {"client_cpu_saturated", "loop_lag_high"}


def _level(streams: int, itl_s: float, tokens: int) -> tuple[set[str], LevelResult]:
    lvl = reference_level(streams, itl_s, tokens)
    fields = {"client_cpu_share": lvl.client_cpu_share, "loop_lag_p99_ms": lvl.loop_lag_p99_ms}
    flags = set(saturation_flags(fields))
    assert flags == set(lvl.flags) & CLIENT_FLAGS  # calibration judged it by the same rule
    return flags, lvl


def test_one_stream_at_10_ms_is_trusted() -> None:
    # ~100 chunks/s: a few % of a core. The truth is the stamp error against the emitter's
    # write times: where other processes delay this one past 10 ms, the flag is right and the
    # quiet side cannot be shown here.
    flags, lvl = _level(1, 0.010, 100)
    if too_busy(lvl):
        pytest.skip(f"machine too busy: true stamp error p99 {lvl.ts_err_p99_ms} ms")
    assert flags == set()


def test_a_swamped_client_is_flagged() -> None:
    # 256 streams, a frame every 0.5 ms each: ~500k frames/s offered, far beyond one Python
    # event loop (calibration here: ~400-1,500 frames/s trusted), so it saturates or stalls.
    flags, _lvl = _level(256, 0.0005, 200)
    assert flags & CLIENT_FLAGS
