"""Client integrity: was the client itself the bottleneck? Loop lag, scheduling lag, CPU.

`ClientMonitor` runs beside the driver on its event loop: it asks the `Clock` to wake it every
`interval_s` and records how late it woke (event-loop lag; any timestamp the client takes can
be late by as much), and samples the process's CPU time. `client_fields` reduces them over a
point's window together with the records' scheduling lag; `saturation_flags` says what failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scoville.client.seam import Clock, MonotonicClock
from scoville.records.model import PointWindow, RequestRecord

CpuSecondsFn = Callable[[], float]


def process_cpu_s() -> float:
    """User + system CPU seconds of this process (all threads)."""
    t = os.times()
    return t.user + t.system


CPU_SHARE_LIMIT = 0.90  # a client process this busy is saturated (run time and calibration)


@dataclass(frozen=True, slots=True)
class Thresholds:
    """When the client itself distrusts a point; the same limits judge `scoville calibrate`'s
    levels, so a load calibration passed is a load a run does not flag, and the reverse.

    - `cpu_share`: the client process used >= 90 % of one core (its event loop is one thread,
      so at that share chunks queue before they are stamped);
    - `loop_lag_p99_ms`: the loop woke > 10 ms late at p99 (it stalled: another process took
      the core, or callbacks piled up). Loop lag is a timer-wake measurement and overstates the
      stamp error of an idle loop (measured on 2 loaded cores: lag p99 4.4 ms at one stream while
      the calibrated stamp error was 0.54 ms), so it is judged on an absolute limit only, never
      against the inter-token latency: that rule flagged the lightest, most accurate points;
    - `sched_lag_p99_ms`: open-loop requests left > 20 ms after their schedule at p99.
    Beyond these, a calibrated envelope (more streams or chunks/s than calibration passed)."""

    cpu_share: float = CPU_SHARE_LIMIT  # of one core (the event loop is single-threaded)
    loop_lag_p99_ms: float = 10.0
    sched_lag_p99_ms: float = 20.0


@dataclass(slots=True)
class ClientSeries:
    """Raw client-side samples: loop wake-up lag and cumulative process CPU time."""

    interval_s: float
    lag_t_ns: list[int] = field(default_factory=list)
    lag_ns: list[int] = field(default_factory=list)
    cpu_t_ns: list[int] = field(default_factory=list)
    cpu_s: list[float] = field(default_factory=list)

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "interval_s": self.interval_s,
            "lag_t_ns": list(self.lag_t_ns),
            "lag_ns": list(self.lag_ns),
            "cpu_t_ns": list(self.cpu_t_ns),
            "cpu_s": list(self.cpu_s),
        }


class ClientMonitor:
    """Samples loop lag every `interval_s` and CPU time every `cpu_every` lag samples."""

    def __init__(
        self,
        clock: Clock | None = None,
        interval_s: float = 0.02,
        cpu_every: int = 10,
        cpu_seconds: CpuSecondsFn = process_cpu_s,
    ) -> None:
        self._clock = clock or MonotonicClock()
        self._interval_ns = round(interval_s * 1e9)
        self._cpu_every = cpu_every
        self._cpu_seconds = cpu_seconds
        self.series = ClientSeries(interval_s=interval_s)
        self._task: asyncio.Task[None] | None = None

    def _sample_cpu(self) -> None:
        self.series.cpu_t_ns.append(self._clock.now_ns())
        self.series.cpu_s.append(self._cpu_seconds())

    async def _run(self) -> None:
        s = self.series
        k = 0
        while True:
            target = self._clock.now_ns() + self._interval_ns
            await self._clock.sleep_until_ns(target)
            now = self._clock.now_ns()
            s.lag_t_ns.append(target)
            s.lag_ns.append(max(0, now - target))
            k += 1
            if k % self._cpu_every == 0:
                self._sample_cpu()

    async def start(self) -> None:
        self._sample_cpu()
        self._task = asyncio.create_task(self._run(), name="scoville-client-monitor")

    async def stop(self) -> ClientSeries:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
            self._sample_cpu()
        return self.series


def _pct_ms(values_ns: Sequence[int] | np.ndarray, q: float) -> float | None:
    if len(values_ns) == 0:
        return None
    return float(np.percentile(np.asarray(values_ns, dtype=np.float64), q)) / 1e6


def cpu_share(series: ClientSeries, start_ns: int, end_ns: int) -> float | None:
    """CPU seconds per wall second over the window (1.0 = one core busy), from the CPU samples
    interpolated at the window edges; None without two samples spanning it."""
    t = np.asarray(series.cpu_t_ns, dtype=np.float64)
    if len(t) < 2 or end_ns <= start_ns or t[0] > start_ns + 1e9 or t[-1] < end_ns - 1e9:
        return None
    c = np.asarray(series.cpu_s, dtype=np.float64)
    used = float(np.interp(end_ns, t, c) - np.interp(start_ns, t, c))
    return used / ((end_ns - start_ns) / 1e9)


def client_fields(
    window: PointWindow,
    records: Sequence[RequestRecord],
    series: ClientSeries | None,
    thresholds: Thresholds = Thresholds(),
) -> dict[str, Any]:
    """Per-point client-integrity fields (ms, shares) and the saturation verdict."""
    mine = [r for r in records if r.point_id == window.point_id and r.phase == "measure"]
    sched = [r.start_ns - r.scheduled_ns for r in mine if r.scheduled_ns is not None]
    out: dict[str, Any] = {
        "sched_lag_p50_ms": _pct_ms(sched, 50),
        "sched_lag_p99_ms": _pct_ms(sched, 99),
        "sched_lag_max_ms": max(sched) / 1e6 if sched else None,
        "loop_lag_p50_ms": None,
        "loop_lag_p99_ms": None,
        "loop_lag_max_ms": None,
        "client_cpu_share": None,
    }
    if series is not None:
        t = np.asarray(series.lag_t_ns, dtype=np.int64)
        lag = np.asarray(series.lag_ns, dtype=np.int64)[
            (t >= window.start_ns) & (t <= window.end_ns)
        ]
        out["loop_lag_p50_ms"] = _pct_ms(lag, 50)
        out["loop_lag_p99_ms"] = _pct_ms(lag, 99)
        out["loop_lag_max_ms"] = float(lag.max()) / 1e6 if len(lag) else None
        out["client_cpu_share"] = cpu_share(series, window.start_ns, window.end_ns)
    flags = saturation_flags(out, thresholds=thresholds)
    out["client_flags"] = flags
    out["client_saturated"] = bool(flags)
    return out


def saturation_flags(
    fields: dict[str, Any], median_itl: float | None = None, thresholds: Thresholds = Thresholds()
) -> list[str]:
    """The rules, each a flag name: `client_cpu_saturated`, `loop_lag_high`,
    `sched_lag_high` (see `Thresholds`). `median_itl` is not used: loop lag is judged on an
    absolute limit (kept for callers that pass it)."""
    flags: list[str] = []
    cpu = fields.get("client_cpu_share")
    if cpu is not None and cpu >= thresholds.cpu_share:
        flags.append("client_cpu_saturated")
    loop_p99 = fields.get("loop_lag_p99_ms")
    if loop_p99 is not None and loop_p99 > thresholds.loop_lag_p99_ms:
        flags.append("loop_lag_high")
    sched_p99 = fields.get("sched_lag_p99_ms")
    if sched_p99 is not None and sched_p99 > thresholds.sched_lag_p99_ms:
        flags.append("sched_lag_high")
    return flags


def client_reason(fields: dict[str, Any], thresholds: Thresholds = Thresholds()) -> str | None:
    """One line on why the client distrusts a point (its `client_flags`, with the values that
    set them), or None when it raised none."""
    words = {
        "client_cpu_saturated": lambda: (
            f"client CPU {fields.get('client_cpu_share', 0):.0%} of a core "
            f"(>= {thresholds.cpu_share:.0%})"
        ),
        "loop_lag_high": lambda: (
            f"client loop lag p99 {fields.get('loop_lag_p99_ms', 0):.1f} ms "
            f"(> {thresholds.loop_lag_p99_ms:g} ms)"
        ),
        "sched_lag_high": lambda: (
            f"requests sent {fields.get('sched_lag_p99_ms', 0):.1f} ms late at p99 "
            f"(> {thresholds.sched_lag_p99_ms:g} ms)"
        ),
        "beyond_client_envelope": lambda: (
            f"beyond the calibrated client envelope ({fields.get('client_envelope', '?')})"
        ),
    }
    flags = list(fields.get("client_flags") or [])
    parts = [words[f]() if f in words else f.replace("_", " ") for f in flags]
    return "; ".join(parts) or None
