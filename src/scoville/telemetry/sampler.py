"""The background power sampler: polls every source at a fixed rate on its own thread.

Each sample is stamped with `time.monotonic_ns()` at the midpoint of its read (the clock every
real run's records use; it is system-wide on Linux). A thread, not an asyncio task, so slow
reads (ipmitool, a BMC) never block the client's event loop and a saturated loop never delays
the samples.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from scoville.telemetry.series import DeviceSeries, PowerSeries
from scoville.telemetry.sources import PowerSource

NowNs = Callable[[], int]


class PowerSampler:
    """Polls `sources` every `1/rate_hz` seconds between `start()` and `stop()`.

    The schedule is absolute (tick k at t0 + k*period): a slow read delays one sample and the
    next ones catch up instead of drifting. A read that raises is logged in `series.errors`
    and that source's devices get no sample for that tick (a gap integration will see).
    """

    def __init__(
        self, sources: Sequence[PowerSource], rate_hz: float = 10.0, now_ns: NowNs | None = None
    ) -> None:
        if rate_hz <= 0:
            raise ValueError("rate_hz must be > 0")
        self._sources = list(sources)
        self._period_ns = round(1e9 / rate_hz)
        self._now_ns: NowNs = now_ns or time.monotonic_ns
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._by_device: dict[str, DeviceSeries] = {}
        self.series = PowerSeries(rate_hz=rate_hz)
        for src in self._sources:
            for info in src.devices():
                ds = DeviceSeries(info=info)
                self._by_device[info.device] = ds
                self.series.devices.append(ds)

    def sample_once(self) -> None:
        """Read every source once and append the readings (also used by tests and probes)."""
        for src in self._sources:
            t0 = self._now_ns()
            try:
                readings = src.read()
            except Exception as exc:  # a failed read is data (a gap), never a crash
                self.series.errors.append(f"{t0} {src.name}: {exc!r}")
                continue
            t_ns = (t0 + self._now_ns()) // 2
            for r in readings:
                ds = self._by_device.get(r.device)
                if ds is not None:
                    ds.append(t_ns, r)

    def _run(self) -> None:
        start_ns = self._now_ns()
        k = 0
        while not self._stop.is_set():
            self.sample_once()
            k += 1
            now = self._now_ns()
            next_ns = start_ns + k * self._period_ns
            if next_ns < now:  # fell behind by more than a tick: skip, don't burst
                k = (now - start_ns) // self._period_ns + 1
                next_ns = start_ns + k * self._period_ns
            self._stop.wait((next_ns - now) / 1e9)
        self.sample_once()  # a closing sample so the last window edge is bracketed

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("sampler already started")
        self._thread = threading.Thread(target=self._run, name="scoville-power", daemon=True)
        self._thread.start()

    def stop(self) -> PowerSeries:
        """Stop, join, close the sources, and return the recorded series."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
        for src in self._sources:
            src.close()
        return self.series
