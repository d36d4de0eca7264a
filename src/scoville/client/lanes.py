"""What every lanes executor shares: the lane configuration, plays and their seeded deck,
a turn as a request, its tags, the point's window and verdict, and the `LanesExecutor` seam.
The asyncio lane driver over a `Server` (`client/lane_driver.py`) is the reference executor;
the twin has an event-driven one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np

from scoville.client.seam import Api, GenerateRequest
from scoville.records.model import Phase, PointWindow
from scoville.records.sink import Sink
from scoville.spec.agentic import ValiditySpec
from scoville.workload.agentic.session import Agent, Session
from scoville.workload.agentic.validity import Verdict, judge

WARMUP_PLAY = 1 << 31  # warm-up plays are numbered from here, apart from measured plays


@dataclass(frozen=True, slots=True)
class LaneConfig:
    lanes: int
    window_s: float
    point_id: str = ""
    api: Api = "completions"
    start_min_ratio: float = 0.25
    start_max_ratio: float = 0.75
    primers: bool = True
    cache_bust: bool = True
    live: bool = False  # thread the model's output into the agent's next prompt
    seed: int = 0
    run_nonce: int = 0  # 32 bits written into every marker: plays of two runs never collide
    ignore_eos: bool = True
    validity: ValiditySpec = field(default_factory=ValiditySpec)
    warmup_per_lane: int = 0  # requests each lane sends back to back before the window

    @property
    def pid(self) -> str:
        return self.point_id or f"lanes{self.lanes}"


@dataclass(frozen=True, slots=True)
class Play:
    """One replay of a session on a lane. `marker` is the cache-bust value (None = off)."""

    session: Session
    index: int
    lane: int
    start_turn: int
    marker: int | None


@dataclass
class LaneStats:
    in_flight: int = 0
    max_in_flight: int = 0
    plays_started: int = 0
    plays_finished: int = 0
    primers: int = 0
    warmup: int = 0
    measured: int = 0
    failed: int = 0
    overflow: int = 0
    last_end_ns: int = 0


@dataclass(frozen=True)
class LaneResult:
    window: PointWindow
    stats: LaneStats
    verdict: Verdict


class PlayDeck:
    """The plays of one point, as every lanes executor takes them: sessions in a seeded order,
    cycling; a lane's first play starts at a seeded point into its root turns; every take has
    a fresh cache-bust marker."""

    def __init__(self, sessions: Sequence[Session], cfg: LaneConfig) -> None:
        if not sessions:
            raise ValueError("no sessions to replay")
        self.sessions, self.cfg = sessions, cfg
        self._order = np.random.default_rng([cfg.seed, 0]).permutation(len(sessions)).tolist()
        self._taken = 0

    def next(self, lane: int, initial: bool) -> Play:
        s = self.sessions[self._order[self._taken % len(self._order)]]
        index = self._taken
        self._taken += 1
        start = 0
        if initial:
            r = np.random.default_rng([self.cfg.seed, lane, 1]).uniform(
                self.cfg.start_min_ratio, self.cfg.start_max_ratio
            )
            start = min(len(s.root.turns) - 1, int(r * len(s.root.turns)))
        marker = (self.cfg.run_nonce % 2**32) << 32 | index if self.cfg.cache_bust else None
        return Play(s, index, lane, start, marker)

    def warmup_turns(self, lane: int) -> list[tuple[Play, int]]:
        """A lane's `warmup_per_lane` warm-up requests as (play, root turn): the root turns of
        the lane's sessions in the seeded order, in plays of their own (indices from 2^31, own
        markers), so the server is warm but no measured prefix is cached by them."""
        out: list[tuple[Play, int]] = []
        k, want = 0, self.cfg.warmup_per_lane
        while len(out) < want:
            slot = lane + k * self.cfg.lanes
            s = self.sessions[self._order[slot % len(self._order)]]
            index = WARMUP_PLAY | slot
            marker = (self.cfg.run_nonce % 2**32) << 32 | index if self.cfg.cache_bust else None
            play = Play(s, index, lane, 0, marker)
            out += [(play, i) for i in range(min(len(s.root.turns), want - len(out)))]
            k += 1
        return out


def lane_request(
    cfg: LaneConfig,
    play: Play,
    agent: Agent,
    i: int,
    phase: Phase,
    text: str,
    prefix_hashes: tuple[int, ...] = (),
) -> GenerateRequest:
    """Turn `i` of `agent` in `play` as a request (a primer asks for one token)."""
    turn = agent.turns[i]
    rid = f"{cfg.pid}-p{play.index}-{agent.agent_id}-t{i}"
    return GenerateRequest(
        request_id=rid + (f"-{phase}" if phase != "measure" else ""),
        api=cfg.api,
        input_tokens=turn.input_tokens,
        max_tokens=1 if phase == "primer" else turn.output_tokens,
        prompt=text if cfg.api == "completions" else None,
        messages=None if cfg.api == "completions" else ({"role": "user", "content": text},),
        ignore_eos=cfg.ignore_eos,
        prefix_hashes=prefix_hashes,
        block_size_tokens=play.session.block_size_tokens,
    )


def lane_tags(cfg: LaneConfig, play: Play, agent: Agent, i: int, expected: int) -> dict[str, Any]:
    """The tags of a lane request's record (`expected`: tokens an unlimited cache serves)."""
    return {
        "session": play.session.session_id,
        "play": play.index,
        "lane": play.lane,
        "agent": agent.agent_id,
        "parent": agent.parent_id,
        "turn": i,
        "depth": agent.agent_id.count("/"),
        "think_s": agent.turns[i].think_s,
        "expected_cached_tokens": expected,
        "cache_hit_expected": expected > 0,
        "live": cfg.live,
    }


def lane_window(
    cfg: LaneConfig,
    stats: LaneStats,
    start_ns: int,
    end_ns: int,
    mode: Literal["lanes", "rate"] = "lanes",
    level: float | None = None,
) -> tuple[PointWindow, Verdict]:
    """A lanes point's window (`level` defaults to the lane count) and its validity verdict."""
    verdict = judge(cfg.validity, cfg.window_s, stats.measured, stats.failed, stats.overflow)
    window = PointWindow(
        point_id=cfg.pid,
        start_ns=start_ns,
        end_ns=end_ns,
        mode=mode,
        level=float(cfg.lanes) if level is None else level,
        sent=stats.measured,
        diagnostic=verdict.diagnostic,
        notes=verdict.notes,
    )
    return window, verdict


class LanesExecutor(Protocol):
    """Runs one lanes point of `sessions` (closed loop, `cfg.lanes` live session trees):
    writes one record per request and the window to `sink`, returns the window. The lane
    driver over a `Server` is the reference; a target may offer a faster one (the twin's)."""

    async def run_lanes(
        self, sessions: Sequence[Session], cfg: LaneConfig, sink: Sink
    ) -> PointWindow: ...

    async def run_timestamps(
        self, sessions: Sequence[Session], cfg: LaneConfig, sink: Sink
    ) -> PointWindow:
        """Open loop: every turn at its recorded time, one point (`LaneDriver.run_timestamps`)."""
        ...
