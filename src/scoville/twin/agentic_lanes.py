"""`FastLanes`: the twin's `LanesExecutor` for agentic replay. Each point runs its sessions
(`AgentPoint`, agentic.py) on a fresh deployment, one point after another on one virtual
timeline, yielding to the event loop every `SLICE_NS` of simulated time so a signal can stop it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from scoville.client.lanes import LaneConfig, lane_window
from scoville.records.model import PointWindow
from scoville.records.sink import Sink
from scoville.twin.agentic import AgentPoint
from scoville.twin.cluster import Cluster, TwinConfig
from scoville.twin.kernel import EventKernel
from scoville.twin.prefix_runs import RunPrefixCache
from scoville.workload.agentic.runs import Run, runs_of
from scoville.workload.agentic.session import Session, Turn

SLICE_NS = 30_000_000_000  # simulated time between yields to the event loop (a signal can stop us)


class FastLanes:
    """`LanesExecutor` for the twin: each point on a fresh deployment, one after another on one
    virtual timeline. `extras` holds each point's twin fields (bottleneck shares, KV, hits)."""

    def __init__(self, cfg: TwinConfig, start_ns: int = 0) -> None:
        self.cfg = cfg
        self.t_ns = start_ns
        self.extras: dict[str, dict[str, Any]] = {}
        self._runs: dict[int, tuple[Turn, tuple[Run, ...]]] = {}

    def _turn_runs(self, turn: Turn) -> tuple[Run, ...]:
        hit = self._runs.get(id(turn))
        if hit is None:  # the turn is kept with its runs, so its id is never reused
            hit = self._runs[id(turn)] = (turn, runs_of(turn.hash_ids))
        return hit[1]

    async def run_lanes(
        self, sessions: Sequence[Session], cfg: LaneConfig, sink: Sink
    ) -> PointWindow:
        return await self._run(sessions, cfg, sink, timestamps=False)

    async def run_timestamps(
        self, sessions: Sequence[Session], cfg: LaneConfig, sink: Sink
    ) -> PointWindow:
        return await self._run(sessions, cfg, sink, timestamps=True)

    async def _run(
        self, sessions: Sequence[Session], cfg: LaneConfig, sink: Sink, timestamps: bool
    ) -> PointWindow:
        kernel = EventKernel(self.t_ns)
        cluster = Cluster(self.cfg, kernel)
        for r in cluster.replicas:
            r.prefix = RunPrefixCache()
        point = AgentPoint(cluster, kernel, sessions, cfg, sink, self._turn_runs)
        n = point.start_timestamps() if timestamps else point.start()
        while len(kernel):
            kernel.run(kernel.now_ns() + SLICE_NS)
            await asyncio.sleep(0)
        self.t_ns = kernel.now_ns()
        end_ns = max(point.stats.last_end_ns, min(self.t_ns, point.window_end_ns))
        if timestamps:
            window, _ = lane_window(
                cfg, point.stats, point.start_ns, end_ns, "rate", n / cfg.window_s
            )
        else:
            window, _ = lane_window(cfg, point.stats, point.start_ns, end_ns)
        sink.write_window(window)
        self.extras[cfg.pid] = cluster.point_extras() | {"n_accelerators": self.cfg.n_accelerators}
        return window

    def point_extras(self, windows: Sequence[PointWindow]) -> dict[str, dict[str, Any]]:
        return {w.point_id: self.extras[w.point_id] for w in windows if w.point_id in self.extras}
