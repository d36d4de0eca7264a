"""The 1 Hz /metrics scraper: polls a server's Prometheus endpoint during a run into series.

Runs as an asyncio task beside the driver (one small GET a second). Each scrape is stamped at
the midpoint of its request on the run's `Clock`, so the series lines up with the records.
`summarize_window` reduces the series over one point's window (gauge means, counter rates).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from scoville.client.seam import Clock, MonotonicClock
from scoville.telemetry.prometheus import CANONICAL, COUNTERS, extract_canonical, parse_exposition


@dataclass(slots=True)
class ServerMetricsSeries:
    """Canonical metrics over time: `values[name][i]` at `t_ns[i]` (None = absent then)."""

    url: str
    t_ns: list[int] = field(default_factory=list)
    values: dict[str, list[float | None]] = field(default_factory=dict)
    exposed: list[str] = field(default_factory=list)  # every metric name the server showed
    errors: list[str] = field(default_factory=list)

    def append(self, t_ns: int, canon: dict[str, float]) -> None:
        n = len(self.t_ns)
        self.t_ns.append(t_ns)
        for name in canon.keys() | self.values.keys():
            col = self.values.setdefault(name, [None] * n)
            col.append(canon.get(name))

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "t_ns": list(self.t_ns),
            "values": {k: list(v) for k, v in sorted(self.values.items())},
            "exposed": list(self.exposed),
            "errors": list(self.errors),
        }


def _at(t: list[int], v: list[float | None], start_ns: int, end_ns: int) -> list[tuple[int, float]]:
    return [
        (ti, vi) for ti, vi in zip(t, v, strict=True) if vi is not None and start_ns <= ti <= end_ns
    ]


def summarize_window(series: ServerMetricsSeries, start_ns: int, end_ns: int) -> dict[str, float]:
    """Over the scrapes inside [start_ns, end_ns]: `mean_X` and `max_X` of each gauge, `X_per_s`
    (first-to-last delta over their time span) for each counter, and
    `prefix_cache_hit_ratio` = delta hits / delta queries when both counters exist."""
    out: dict[str, float] = {}
    deltas: dict[str, float] = {}
    for name, col in series.values.items():
        pts = _at(series.t_ns, col, start_ns, end_ns)
        if not pts:
            continue
        if name in COUNTERS:
            if len(pts) >= 2 and pts[-1][0] > pts[0][0]:
                deltas[name] = pts[-1][1] - pts[0][1]
                out[name.removesuffix("_total") + "_per_s"] = deltas[name] / (
                    (pts[-1][0] - pts[0][0]) / 1e9
                )
        else:
            vals = [v for _, v in pts]
            out[f"mean_{name}"] = sum(vals) / len(vals)
            out[f"max_{name}"] = max(vals)
    q = deltas.get("prefix_cache_queries_total")
    if q and "prefix_cache_hits_total" in deltas:
        out["prefix_cache_hit_ratio"] = deltas["prefix_cache_hits_total"] / q
    return out


class MetricsScraper:
    """Scrape `url` every `interval_s` seconds between `start()` and `stop()`."""

    def __init__(
        self, url: str, interval_s: float = 1.0, clock: Clock | None = None, timeout_s: float = 5.0
    ) -> None:
        self.series = ServerMetricsSeries(url=url)
        self._interval_ns = round(interval_s * 1e9)
        self._clock = clock or MonotonicClock()
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)
        self._task: asyncio.Task[None] | None = None
        self._session: aiohttp.ClientSession | None = None

    async def scrape_once(self) -> None:
        """One GET; a failure is recorded in `series.errors`, never raised."""
        assert self._session is not None
        t0 = self._clock.now_ns()
        try:
            async with self._session.get(self.series.url) as resp:
                resp.raise_for_status()
                body = await resp.text()
        except (aiohttp.ClientError, TimeoutError) as exc:
            self.series.errors.append(f"{t0} {exc!r}")
            return
        t_ns = (t0 + self._clock.now_ns()) // 2
        samples = parse_exposition(body)
        if not self.series.exposed:
            self.series.exposed = sorted({s.name for s in samples})
        self.series.append(t_ns, extract_canonical(samples))

    async def _run(self) -> None:
        start_ns = self._clock.now_ns()
        k = 0
        while True:
            await self.scrape_once()
            k = max(k + 1, (self._clock.now_ns() - start_ns) // self._interval_ns + 1)
            await self._clock.sleep_until_ns(start_ns + k * self._interval_ns)

    async def start(self) -> None:
        self._session = aiohttp.ClientSession(timeout=self._timeout)
        self._task = asyncio.create_task(self._run(), name="scoville-metrics-scraper")

    async def stop(self) -> ServerMetricsSeries:
        """Cancel the loop, take one closing scrape (so the window's end is bracketed)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._session is not None:
            await self.scrape_once()
            await self._session.close()
            self._session = None
        return self.series


__all__ = ["CANONICAL", "MetricsScraper", "ServerMetricsSeries", "summarize_window"]
