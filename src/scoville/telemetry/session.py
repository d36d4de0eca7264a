"""One object the pipeline starts before a run and stops after: power sampling, server-metric
scraping and the client monitor together; `stop()` returns what goes into telemetry.json.

    session = TelemetrySession(sources, metrics_url=target.metrics_url, clock=target.clock)
    await session.start(); ...run the driver...; result = await session.stop()
    rows: result.point_fields(windows, records, n_accelerators) -> point_id -> extra columns
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scoville.client.seam import Clock, MonotonicClock
from scoville.client.selftest.integrity import (
    ClientMonitor,
    ClientSeries,
    Thresholds,
    client_fields,
)
from scoville.records.model import PointWindow, RequestRecord
from scoville.telemetry.energy import point_energy_fields
from scoville.telemetry.sampler import PowerSampler
from scoville.telemetry.scrape_process import ScraperProcess
from scoville.telemetry.scraper import MetricsScraper, ServerMetricsSeries, summarize_window
from scoville.telemetry.series import PowerSeries
from scoville.telemetry.sources import DeclaredSource, PowerSource, probe_sources

SCHEMA = "scoville.telemetry/1"


@dataclass(slots=True)
class TelemetryResult:
    """Everything a session recorded, and the per-point reductions of it."""

    power: PowerSeries | None
    server: ServerMetricsSeries | None
    client: ClientSeries | None
    unavailable: dict[str, str]  # power sources probed and not usable, with the reason

    def point_fields(
        self,
        windows: Sequence[PointWindow],
        records: Sequence[RequestRecord],
        n_accelerators: int = 1,
        thresholds: Thresholds | None = None,
    ) -> dict[str, dict[str, Any]]:
        """point_id -> flat columns to merge into that point's summary row: the energy fields,
        the client-integrity fields, and `server_*` means/rates over the window."""
        out = point_energy_fields(self.power, windows, records, n_accelerators)
        for w in windows:
            row = out.setdefault(w.point_id, {})
            row.update(client_fields(w, records, self.client, thresholds or Thresholds()))
            if self.server is not None:
                srv = summarize_window(self.server, w.start_ns, w.end_ns)
                row.update({f"server_{k}": v for k, v in srv.items()})
        return out

    def to_json_dict(self) -> dict[str, Any]:
        """The body of telemetry.json (no credentials: sources carry none)."""
        return {
            "schema": SCHEMA,
            "power": self.power.to_json_dict() if self.power is not None else None,
            "power_unavailable": dict(self.unavailable),
            "server_metrics": self.server.to_json_dict() if self.server is not None else None,
            "client": self.client.to_json_dict() if self.client is not None else None,
        }


class TelemetrySession:
    """Starts/stops the three recorders. Any of them may be off: no sources, no URL, or
    `monitor_client=False` (the twin's virtual time has no loop lag worth measuring)."""

    def __init__(
        self,
        sources: Sequence[PowerSource] = (),
        power_rate_hz: float = 10.0,
        metrics_url: str | None = None,
        scrape_interval_s: float = 1.0,
        clock: Clock | None = None,
        monitor_client: bool = True,
        unavailable: dict[str, str] | None = None,
    ) -> None:
        clock = clock or MonotonicClock()
        self._sampler = PowerSampler(sources, power_rate_hz) if sources else None
        self._scraper: MetricsScraper | ScraperProcess | None = None
        if metrics_url and isinstance(clock, MonotonicClock):  # off the measuring process
            self._scraper = ScraperProcess(metrics_url, scrape_interval_s)
        elif metrics_url:
            self._scraper = MetricsScraper(metrics_url, scrape_interval_s, clock)
        self._monitor = ClientMonitor(clock) if monitor_client else None
        self._unavailable = dict(unavailable or {})

    @classmethod
    def auto(
        cls,
        metrics_url: str | None = None,
        declared_power_w: float | None = None,
        n_accelerators: int = 1,
        **kw: Any,
    ) -> TelemetrySession:
        """Probe NVML, amdsmi, RAPL and IPMI; add a declared source when a power is declared
        and nothing measures the accelerators."""
        sources, why_not = probe_sources()
        boards = any(d.boundary == "accelerator-board" for s in sources for d in s.devices())
        if declared_power_w is not None and not boards:
            sources.append(DeclaredSource(declared_power_w, n_accelerators))
        return cls(sources, metrics_url=metrics_url, unavailable=why_not, **kw)

    async def start(self) -> None:
        if self._sampler is not None:
            self._sampler.start()
        if self._scraper is not None:
            await self._scraper.start()
        if self._monitor is not None:
            await self._monitor.start()

    async def stop(self) -> TelemetryResult:
        client = await self._monitor.stop() if self._monitor is not None else None
        server = await self._scraper.stop() if self._scraper is not None else None
        # joining the sampler waits out a read in flight (ipmitool: up to its timeout)
        power = await asyncio.to_thread(self._sampler.stop) if self._sampler is not None else None
        return TelemetryResult(power, server, client, self._unavailable)
