"""The lane driver: closed-loop replay of agentic session trees through a `Server`.

Concurrency counts live session trees ("lanes"), not HTTP requests: a lane runs one play of a
session (root chain plus sub-agents, which fan out and join) and takes the next session only
when the whole tree has drained. Think times, spawn delays and the window all go through the
`Clock`. Each lane's first play starts at a seeded point into its session, after primer requests
(max_tokens=1, phase="primer") that put the prefix in the server's cache. No request starts
after the window closes; requests in flight then drain and count. One record per request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from scoville.client.driver import cancelled_exchange, count_chunk_tokens, to_record
from scoville.client.lanes import (
    LaneConfig,
    LaneResult,
    LaneStats,
    Play,
    PlayDeck,
    lane_request,
    lane_tags,
    lane_window,
)
from scoville.client.seam import Clock, Exchange, GenerateRequest, Server, quiet_collector
from scoville.records.model import ErrorKind, Phase
from scoville.records.sink import Sink
from scoville.workload.agentic.cache import PrefixTracker
from scoville.workload.agentic.prompts import PromptBook, prefix_keys
from scoville.workload.agentic.session import Agent, Session
from scoville.workload.tokenizers import Tokenizer


@dataclass
class _Tree:
    """A play in progress: its tasks (so the lane can wait for the whole tree) and, in live
    mode, each agent's last prompt and output."""

    play: Play
    sent: int = 0
    tasks: list[asyncio.Task[int]] = field(default_factory=list)
    live: dict[str, tuple[str, str, int]] = field(default_factory=dict)


class LaneDriver:
    """Replays `sessions` on `cfg.lanes` lanes for one point. Sessions are taken in a seeded
    order, cycling; every take is a new play with a fresh marker."""

    def __init__(
        self,
        sessions: Sequence[Session],
        book: PromptBook,
        server: Server,
        clock: Clock,
        sink: Sink,
        cfg: LaneConfig,
        tokenizer: Tokenizer | None = None,
    ) -> None:
        self.sessions, self.book, self.server, self.clock = sessions, book, server, clock
        self.sink, self.cfg, self.tokenizer = sink, cfg, tokenizer
        self.stats = LaneStats()
        self.tracker = PrefixTracker()
        self.deck = PlayDeck(sessions, cfg)
        self._window_end_ns = 0

    def _next_play(self, lane: int, initial: bool) -> Play:
        return self.deck.next(lane, initial)

    async def run(self) -> LaneResult:
        with quiet_collector(self.clock):
            return await self._run_lanes()

    async def run_timestamps(self) -> LaneResult:
        """Open loop: every turn of every session at its recorded `t_s`, in recorded order,
        regardless of dependencies; each session is one play without a marker. The window
        closes `window_s` after the first send; later requests are not sent."""
        with quiet_collector(self.clock):
            return await self._run_timestamps()

    async def _run_lanes(self) -> LaneResult:
        plays = [self._next_play(lane, initial=True) for lane in range(self.cfg.lanes)]
        if self.cfg.warmup_per_lane:
            await asyncio.gather(*(self._warmup(lane) for lane in range(self.cfg.lanes)))
        if self.cfg.primers:
            await asyncio.gather(*(self._primer(p) for p in plays if p.start_turn > 0))
        start_ns = self.clock.now_ns()
        self._window_end_ns = start_ns + int(self.cfg.window_s * 1e9)
        await asyncio.gather(*(self._lane(p) for p in plays))
        return self._finish(start_ns, "lanes", float(self.cfg.lanes))

    async def _run_timestamps(self) -> LaneResult:
        trees = {id(s): _Tree(Play(s, k, 0, 0, None)) for k, s in enumerate(self.sessions)}
        items = sorted(
            ((t.t_s, k, s, a, i) for k, s in enumerate(self.sessions) for a, i, t in s.turns()),
            key=lambda x: (x[0], x[1]),
        )
        t0_s = items[0][0]
        tasks: list[asyncio.Task[Exchange]] = []
        req = self._request(trees[id(items[0][2])], items[0][3], items[0][4], "measure")
        start_ns = self.clock.now_ns()
        self._window_end_ns = start_ns + int(self.cfg.window_s * 1e9)
        for j, (t_s, _, s, a, i) in enumerate(items):
            at = start_ns + int((t_s - t0_s) * 1e9)
            if at >= self._window_end_ns:
                break
            if j > 0:  # built before its time comes
                req = self._request(trees[id(s)], a, i, "measure")
            await self.clock.sleep_until_ns(at)
            tasks.append(asyncio.ensure_future(self._send(trees[id(s)], a, i, "measure", at, req)))
            await asyncio.sleep(0)  # let it leave now, before the next one is built
        await asyncio.gather(*tasks)
        return self._finish(start_ns, "rate", len(tasks) / self.cfg.window_s)

    def _finish(self, start_ns: int, mode: Literal["lanes", "rate"], level: float) -> LaneResult:
        end_ns = max(self.stats.last_end_ns, min(self.clock.now_ns(), self._window_end_ns))
        window, verdict = lane_window(self.cfg, self.stats, start_ns, end_ns, mode, level)
        self.sink.write_window(window)
        return LaneResult(window, self.stats, verdict)

    async def _warmup(self, lane: int) -> None:
        """`warmup_per_lane` requests back to back (no think time), phase "warmup"."""
        trees: dict[int, _Tree] = {}
        for play, i in self.deck.warmup_turns(lane):
            tree = trees.setdefault(play.index, _Tree(play))
            await self._send(tree, play.session.root, i, "warmup", None)
            self.stats.warmup += 1

    async def _primer(self, play: Play) -> None:
        tree = _Tree(play)
        self.stats.primers += 1
        await self._send(tree, play.session.root, play.start_turn - 1, "primer", None)

    async def _lane(self, play: Play) -> None:
        while True:
            t0 = self.clock.now_ns()
            self.stats.plays_started += 1
            sent = await self._play(play)
            self.stats.plays_finished += 1
            now = self.clock.now_ns()
            if now >= self._window_end_ns or sent == 0:  # sent == 0: its first turn is too late
                return
            if now == t0:
                raise RuntimeError(
                    "a whole play took no time on the clock (zero latency and zero think "
                    "time): the window would never close"
                )
            play = self._next_play(play.lane, initial=False)

    async def _play(self, play: Play) -> int:
        """Run a play until its whole tree has drained; returns the requests it sent."""
        tree = _Tree(play)
        await self._agent(tree, play.session.root, play.start_turn, self.clock.now_ns())
        while not all(t.done() for t in tree.tasks):  # background agents may spawn more
            await asyncio.gather(*tree.tasks)
        return tree.sent

    async def _agent(self, tree: _Tree, agent: Agent, first: int, spawned_ns: int) -> int:
        """Run turns `first..` of `agent`; returns when its last turn ended (clock ns)."""
        children = tree.play.session.children_of(agent.agent_id)
        mine: dict[str, asyncio.Task[int]] = {}

        def spawn(after: int, at_ns: int) -> None:
            for c in children:
                if c.spawn_after == after:
                    task = asyncio.ensure_future(self._agent(tree, c, 0, at_ns))
                    mine[c.agent_id] = task
                    tree.tasks.append(task)

        if first == 0:
            spawn(-1, spawned_ns)
        else:  # started mid-session: sub-agents live at the start point run from their turn 0
            for c in children:
                if c.spawn_after < first and (c.join_before is None or c.join_before >= first):
                    task = asyncio.ensure_future(self._agent(tree, c, 0, spawned_ns))
                    mine[c.agent_id] = task
                    tree.tasks.append(task)
        prev_end = spawned_ns
        for i in range(first, len(agent.turns)):
            joins = [
                mine[c.agent_id] for c in children if c.join_before == i and c.agent_id in mine
            ]
            join_ns = max(await asyncio.gather(*joins), default=0)
            ready = max(prev_end + int(agent.turns[i].think_s * 1e9), join_ns)
            if ready >= self._window_end_ns:
                break
            req = self._request(tree, agent, i, "measure")  # built before its time comes
            await self.clock.sleep_until_ns(ready)
            ex = await self._send(tree, agent, i, "measure", ready, req)
            prev_end = max(ex.end_ns, ready)
            spawn(i, prev_end)
        return prev_end

    def _text(self, tree: _Tree, agent: Agent, i: int) -> str:
        s, turn = tree.play.session, agent.turns[i]
        key = f"{s.session_id}/{agent.agent_id}/{i}"
        if not self.cfg.live or agent.agent_id not in tree.live:
            return self.book.turn_text(s, turn, tree.play.marker, key)
        prompt, output, prev_n = tree.live[agent.agent_id]
        ids = self.book.turn_word_ids(s, turn, tree.play.marker, key)
        return prompt + output + self.book.text(ids[prev_n:])

    def _request(self, tree: _Tree, agent: Agent, i: int, phase: Phase) -> GenerateRequest:
        keys = prefix_keys(tree.play.session, agent.turns[i], tree.play.marker)
        return lane_request(self.cfg, tree.play, agent, i, phase, self._text(tree, agent, i), keys)

    def _tags(self, tree: _Tree, agent: Agent, i: int, req: GenerateRequest) -> dict[str, Any]:
        play, turn = tree.play, agent.turns[i]
        expected = self.tracker.observe(
            req.prefix_hashes, turn.input_tokens, play.session.block_size_tokens
        )
        return lane_tags(self.cfg, play, agent, i, expected)

    async def _send(
        self,
        tree: _Tree,
        agent: Agent,
        i: int,
        phase: Phase,
        scheduled_ns: int | None,
        req: GenerateRequest | None = None,
    ) -> Exchange:
        req = req or self._request(tree, agent, i, phase)
        tags = self._tags(tree, agent, i, req)
        st = self.stats
        st.in_flight += 1
        st.max_in_flight = max(st.max_in_flight, st.in_flight)
        start_ns = self.clock.now_ns()

        def keep(ex: Exchange) -> None:
            counted = count_chunk_tokens(ex, self.tokenizer)
            self.sink.write(
                to_record(ex, req, self.cfg.pid, phase, counted, scheduled_ns, tags=tags)
            )

        try:
            ex = await self.server.generate(req)
        except asyncio.CancelledError:  # the replay is stopping: the request keeps a record
            keep(cancelled_exchange(start_ns, self.clock.now_ns()))
            raise
        finally:
            st.in_flight -= 1
        keep(ex)
        if phase == "measure":
            tree.sent += 1
            st.measured += 1
            st.failed += ex.error is not None
            st.overflow += ex.error == ErrorKind.CONTEXT_OVERFLOW
            st.last_end_ns = max(st.last_end_ns, ex.end_ns)
        if self.cfg.live and phase == "measure":
            prompt = req.prompt if req.prompt is not None else (req.messages or ({},))[0]["content"]
            nominal = agent.turns[i].input_tokens + agent.turns[i].output_tokens
            tree.live[agent.agent_id] = (prompt, "".join(ex.chunk_text), nominal)
        return ex
