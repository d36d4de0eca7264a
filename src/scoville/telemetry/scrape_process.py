"""The /metrics scraper in a child process, so that parsing an exposition (about 50 ns a byte
of CPU: 13 ms for a 250 KB vLLM page) never holds the measuring process's event loop or GIL.

Same `start()` / `stop()` as `MetricsScraper`; the child stamps on the monotonic clock, which
is system-wide on Linux, so its series lines up with the records of the parent.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing as mp
from multiprocessing.connection import Connection
from typing import Any

from scoville.telemetry.scraper import MetricsScraper, ServerMetricsSeries


def _child(url: str, interval_s: float, conn: Connection) -> None:
    async def run() -> None:
        scraper = MetricsScraper(url, interval_s)
        await scraper.start()
        while not (scraper.series.t_ns or scraper.series.errors):  # the first scrape is in
            await asyncio.sleep(0.01)
        conn.send("ready")
        await asyncio.to_thread(conn.recv)  # the parent's "stop"
        conn.send((await scraper.stop()).to_json_dict())

    asyncio.run(run())


def series_from_json(d: dict[str, Any]) -> ServerMetricsSeries:
    return ServerMetricsSeries(
        url=str(d["url"]),
        t_ns=[int(t) for t in d["t_ns"]],
        values={k: list(v) for k, v in d["values"].items()},
        exposed=list(d["exposed"]),
        errors=list(d["errors"]),
    )


class ScraperProcess:
    """`MetricsScraper` run in a spawned child between `start()` and `stop()`; `start()`
    returns once the child has scraped once."""

    def __init__(self, url: str, interval_s: float = 1.0, stop_timeout_s: float = 30.0) -> None:
        self.url, self.interval_s, self.stop_timeout_s = url, interval_s, stop_timeout_s
        self._conn: Connection | None = None
        self._proc: Any = None

    async def start(self) -> None:
        ctx = mp.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(
            target=_child, args=(self.url, self.interval_s, child), daemon=True
        )
        self._proc.start()
        child.close()
        # Wait for the first scrape (a spawned child needs about a second to start), so
        # the series covers the sweep from its first request.
        with contextlib.suppress(EOFError, OSError):  # a dead child: `stop()` says so
            if await asyncio.to_thread(self._conn.poll, self.stop_timeout_s):
                self._conn.recv()

    async def stop(self) -> ServerMetricsSeries:
        """Ask the child for its series; a child that died or hangs gives an empty series
        with the reason in `errors`."""
        series = ServerMetricsSeries(url=self.url)
        if self._conn is None or self._proc is None:
            return series
        conn, self._conn = self._conn, None
        try:
            conn.send("stop")
            if await asyncio.to_thread(conn.poll, self.stop_timeout_s):
                series = series_from_json(conn.recv())
            else:
                series.errors.append(f"scraper process gave no series in {self.stop_timeout_s} s")
        except (OSError, EOFError) as exc:
            series.errors.append(f"scraper process failed: {exc!r}")
        finally:
            conn.close()
            await asyncio.to_thread(self._proc.join, 5)
            if self._proc.is_alive():
                self._proc.kill()
        return series
