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
    """Polls each source on its own thread every `1/rate_hz` seconds (or at the source's
    `max_rate_hz`, when it declares a lower one: a BMC answers about once a second) between
    `start()` and `stop()`. One thread per source, so a slow BMC never delays GPU samples.

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
        self._rate_hz = rate_hz
        self._now_ns: NowNs = now_ns or time.monotonic_ns
        self._stop = threading.Event()
        self._lock = threading.Lock()  # guards series.errors across source threads
        self._threads: list[threading.Thread] = []
        self._by_device: dict[str, DeviceSeries] = {}
        self.series = PowerSeries(rate_hz=rate_hz)
        for src in self._sources:
            for info in src.devices():
                ds = DeviceSeries(info=info)
                self._by_device[info.device] = ds
                self.series.devices.append(ds)

    def read_source(self, src: PowerSource) -> None:
        """Read one source once and append its readings, stamped at the read's midpoint."""
        t0 = self._now_ns()
        try:
            readings = src.read()
        except Exception as exc:  # a failed read is data (a gap), never a crash
            with self._lock:
                self.series.errors.append(f"{t0} {src.name}: {exc!r}")
            return
        t_ns = (t0 + self._now_ns()) // 2
        for r in readings:
            ds = self._by_device.get(r.device)
            if ds is not None:  # each device belongs to one source, so one thread appends
                ds.append(t_ns, r)

    def sample_once(self) -> None:
        """Read every source once, in order (tests and probes)."""
        for src in self._sources:
            self.read_source(src)

    def _run(self, src: PowerSource) -> None:
        rate_hz = min(self._rate_hz, float(getattr(src, "max_rate_hz", self._rate_hz)))
        period_ns = round(1e9 / rate_hz)
        start_ns = self._now_ns()
        k = 0
        while not self._stop.is_set():
            self.read_source(src)
            k += 1
            now = self._now_ns()
            next_ns = start_ns + k * period_ns
            if next_ns < now:  # fell behind by more than a tick: skip, don't burst
                k = (now - start_ns) // period_ns + 1
                next_ns = start_ns + k * period_ns
            self._stop.wait((next_ns - now) / 1e9)
        self.read_source(src)  # a closing sample so the last window edge is bracketed

    def start(self) -> None:
        if self._threads:
            raise RuntimeError("sampler already started")
        for i, src in enumerate(self._sources):
            th = threading.Thread(target=self._run, args=(src,), name=f"scoville-power-{i}")
            th.daemon = True
            th.start()
            self._threads.append(th)

    def stop(self) -> PowerSeries:
        """Stop, join, close the sources, and return the recorded series."""
        self._stop.set()
        for th in self._threads:
            th.join()
        self._threads = []
        for src in self._sources:
            src.close()
        return self.series
