"""Agentic replay on the twin's event kernel: one point's session trees on lanes (think time,
sub-agent spawn and join, primers, the window) as `AgentPoint`, without asyncio, HTTP or prompt
text; `agentic_lanes.FastLanes` runs it behind the client's `LanesExecutor` seam.

Same plays (`PlayDeck`), request ids and tags (`lane_request`, `lane_tags`), record definition
(`exchange_of` -> `to_record`) and window rule (`lane_window`) as the lane driver; only the loop
is the engine's own. Prompt blocks travel as `BlockRuns` and the replicas keep a run-length
prefix cache, so a request costs a step per run of its prompt, not one per block.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from scoville.client.driver import count_chunk_tokens, to_record
from scoville.client.lanes import (
    LaneConfig,
    LaneStats,
    Play,
    PlayDeck,
    lane_request,
    lane_tags,
)
from scoville.records.model import ErrorKind, Phase
from scoville.records.sink import Sink
from scoville.twin.cluster import Cluster
from scoville.twin.engine import Seq
from scoville.twin.kernel import EventKernel
from scoville.twin.server import exchange_of
from scoville.workload.agentic.runs import BlockRuns, Run, RunSet
from scoville.workload.agentic.session import Agent, Session, Turn


class _Tree:
    """A play in progress: sub-agent runs not yet finished, requests sent, and whether the
    root is done and waits for the rest to drain."""

    __slots__ = ("draining", "pending", "play", "sent", "started_ns")

    def __init__(self, play: Play, started_ns: int) -> None:
        self.play, self.started_ns = play, started_ns
        self.pending = 0
        self.sent = 0
        self.draining = False


class _Run:
    """One agent of a play, from turn `i` on: the event-driven form of the lane driver's
    `_agent` coroutine. `prev_end_ns` is its last turn's end (once `done`, what a joining
    parent waits for)."""

    __slots__ = (
        "agent",
        "done",
        "i",
        "joins",
        "mine",
        "parent",
        "prev_end_ns",
        "tree",
        "waiting",
    )

    def __init__(
        self, tree: _Tree, agent: Agent, first: int, spawned_ns: int, parent: _Run | None
    ) -> None:
        self.tree, self.agent, self.i, self.parent = tree, agent, first, parent
        self.prev_end_ns = spawned_ns
        self.mine: dict[str, _Run] = {}
        self.joins: list[_Run] = []
        self.waiting = 0  # joined sub-agents not finished yet
        self.done = False


class AgentPoint:
    """One lanes point on a fresh deployment.

    Ties matter: requests that reach the replica at the same nanosecond queue in the order
    they were submitted. Each handler therefore runs as many event-loop turns after its cause
    as the lane driver's coroutine does (`_later`; the kernel, like asyncio's ready queue, is
    first in first out at equal times): a finished request is seen one turn after its step
    ends, a task starts one turn after it is created, a wait on finished sub-agents (gather)
    resumes two turns after the last one ends, a sleep of zero costs one turn."""

    def __init__(
        self,
        cluster: Cluster,
        kernel: EventKernel,
        sessions: Sequence[Session],
        cfg: LaneConfig,
        sink: Sink,
        runs: Callable[[Turn], tuple[Run, ...]],
    ) -> None:
        self.cluster, self.kernel, self.cfg, self.sink, self.runs = cluster, kernel, cfg, sink, runs
        self.deck = PlayDeck(sessions, cfg)
        self.stats = LaneStats()
        self.tracker = RunSet()
        self.window_end_ns = 0
        self.start_ns = 0
        self.children: dict[tuple[int, str], tuple[Agent, ...]] = {}
        self.rid = 0
        self.ones: dict[int, tuple[int, ...]] = {}

    def _later(self, turns: int, fn: Callable[[], None]) -> None:
        """Run `fn` `turns` event-loop turns from now, at the same virtual time."""
        if turns <= 1:
            self.kernel.schedule(self.kernel.now_ns(), lambda _: fn())
        else:
            self.kernel.schedule(self.kernel.now_ns(), lambda _: self._later(turns - 1, fn))

    # -- the point: primers, then every lane until the window closes and the trees drain ----

    def start(self) -> int:
        plays = [self.deck.next(lane, initial=True) for lane in range(self.cfg.lanes)]
        if not self.cfg.warmup_per_lane:
            self._prime(plays)
            return self.cfg.lanes
        left = [self.cfg.lanes]

        def lane_warm() -> None:  # the warm-ups' gather resumes the driver two turns later
            left[0] -= 1
            if left[0] == 0:
                self._later(2, lambda: self._prime(plays))

        for lane in range(self.cfg.lanes):
            self._warm(self.deck.warmup_turns(lane), 0, {}, lane_warm)
        return self.cfg.lanes

    def _warm(
        self,
        turns: list[tuple[Play, int]],
        k: int,
        trees: dict[int, _Tree],
        then: Callable[[], None],
    ) -> None:
        """A lane's warm-up requests back to back, as the lane driver sends them."""
        if k == len(turns):
            then()
            return
        play, i = turns[k]
        tree = trees.setdefault(play.index, _Tree(play, self.kernel.now_ns()))
        self.stats.warmup += 1
        run = _Run(tree, play.session.root, i, self.kernel.now_ns(), None)
        self._send(run, "warmup", None, lambda: self._warm(turns, k + 1, trees, then))

    def _prime(self, plays: list[Play]) -> None:
        primed = [p for p in plays if self.cfg.primers and p.start_turn > 0]
        left = [len(primed)]

        def primer_done() -> None:  # the primers' gather resumes the driver two turns later
            left[0] -= 1
            if left[0] == 0:
                self._later(2, lambda: self._open(plays))

        for p in primed:
            self.stats.primers += 1
            run = _Run(_Tree(p, 0), p.session.root, p.start_turn - 1, 0, None)
            self._send(run, "primer", None, primer_done)
        if not primed:
            self._open(plays)

    def start_timestamps(self) -> int:
        """Open loop: every turn of every session at its recorded `t_s`, in recorded order,
        one play per session without a marker, until the window closes (the lane driver's
        `run_timestamps`). Returns the requests scheduled."""
        items = sorted(
            (
                (t.t_s, k, s, a, i)
                for k, s in enumerate(self.deck.sessions)
                for a, i, t in s.turns()
            ),
            key=lambda x: (x[0], x[1]),
        )
        self.start_ns = self.kernel.now_ns()
        self.window_end_ns = self.start_ns + int(self.cfg.window_s * 1e9)
        trees = {
            k: _Tree(Play(s, k, 0, 0, None), self.start_ns)
            for k, s in enumerate(self.deck.sessions)
        }
        n = 0
        for t_s, k, _, a, i in items:
            at = self.start_ns + int((t_s - items[0][0]) * 1e9)
            if at >= self.window_end_ns:
                break
            run = _Run(trees[k], a, i, at, None)
            self.kernel.schedule(at, partial(self._timed_send, run, at))
            n += 1
        return n

    def _timed_send(self, run: _Run, at_ns: int, _: int) -> None:
        self._send(run, "measure", at_ns, lambda: None)

    def _open(self, plays: list[Play]) -> None:
        self.start_ns = self.kernel.now_ns()
        self.window_end_ns = self.start_ns + int(self.cfg.window_s * 1e9)
        for p in plays:  # one lane task each
            self._later(1, partial(self._start_play, p))

    def _start_play(self, play: Play) -> None:
        self.stats.plays_started += 1
        now = self.kernel.now_ns()
        self._begin(_Run(_Tree(play, now), play.session.root, play.start_turn, now, None))

    def _play_drained(self, tree: _Tree) -> None:
        self.stats.plays_finished += 1
        now = self.kernel.now_ns()
        if now >= self.window_end_ns or tree.sent == 0:  # sent == 0: its first turn is too late
            return
        if now == tree.started_ns:
            raise RuntimeError(
                "a whole play took no time on the clock (zero latency and zero think time): "
                "the window would never close"
            )
        self._start_play(self.deck.next(tree.play.lane, initial=False))

    # -- an agent: spawn, joins, think time, send, next turn -----------------------------------

    def _kids(self, run: _Run) -> tuple[Agent, ...]:
        s = run.tree.play.session
        key = (id(s), run.agent.agent_id)
        kids = self.children.get(key)
        if kids is None:
            kids = self.children[key] = s.children_of(run.agent.agent_id)
        return kids

    def _spawn(self, run: _Run, c: Agent, at_ns: int) -> None:
        """A sub-agent task: created now, it starts on the next turn."""
        child = _Run(run.tree, c, 0, at_ns, run)
        run.mine[c.agent_id] = child
        run.tree.pending += 1
        self._later(1, partial(self._begin, child))

    def _begin(self, run: _Run) -> None:
        """Start an agent: its sub-agents live at its start point, then its first turn."""
        first = run.i
        for c in self._kids(run):
            if (first == 0 and c.spawn_after == -1) or (
                first > 0
                and c.spawn_after < first
                and (c.join_before is None or c.join_before >= first)
            ):
                self._spawn(run, c, run.prev_end_ns)
        self._turn(run)

    def _turn(self, run: _Run) -> None:
        """Turn `run.i`: wait for the sub-agents that join here, if any."""
        if run.i >= len(run.agent.turns):
            self._finish(run)
            return
        run.joins = [
            run.mine[c.agent_id]
            for c in self._kids(run)
            if c.join_before == run.i and c.agent_id in run.mine
        ]
        if not run.joins:
            self._ready(run)
            return
        run.waiting = sum(not j.done for j in run.joins)
        if run.waiting == 0:
            self._later(2, partial(self._ready, run))

    def _ready(self, run: _Run) -> None:
        """Send after the think time, unless the window has closed (then the agent is done)."""
        join_ns = max((j.prev_end_ns for j in run.joins), default=0)
        ready = max(run.prev_end_ns + int(run.agent.turns[run.i].think_s * 1e9), join_ns)
        if ready >= self.window_end_ns:
            self._finish(run)
        elif ready > self.kernel.now_ns():  # a timer, then the task wakes a turn later
            self.kernel.schedule(ready, lambda _: self._later(1, partial(self._turn_send, run)))
        else:
            self._later(1, partial(self._turn_send, run, ready))

    def _turn_send(self, run: _Run, ready_ns: int | None = None) -> None:
        self._send(run, "measure", self.kernel.now_ns() if ready_ns is None else ready_ns, None)

    def _turn_done(self, run: _Run, ready_ns: int, end_ns: int) -> None:
        run.prev_end_ns = max(end_ns, ready_ns)
        for c in self._kids(run):
            if c.spawn_after == run.i:
                self._spawn(run, c, run.prev_end_ns)
        run.i += 1
        self._turn(run)

    def _finish(self, run: _Run) -> None:
        """The agent is done: a joining parent and a draining play resume two turns later;
        the root's play goes on at once when nothing else of it is running."""
        run.done = True
        tree, parent = run.tree, run.parent
        if parent is None:
            tree.draining = True
            if tree.pending == 0:
                self._play_drained(tree)
            return
        tree.pending -= 1
        if tree.pending == 0 and tree.draining:
            self._later(2, partial(self._play_drained, tree))
        if run in parent.joins and parent.waiting > 0:
            parent.waiting -= 1
            if parent.waiting == 0:
                self._later(2, partial(self._ready, parent))

    # -- one request -----------------------------------------------------------------------------

    def _send(
        self,
        run: _Run,
        phase: Phase,
        scheduled_ns: int | None,
        then: Callable[[], None] | None,
    ) -> None:
        """Submit turn `run.i` of the run's agent now; its record is written when it ends."""
        play, agent, i = run.tree.play, run.agent, run.i
        turn = agent.turns[i]
        s = play.session
        keys = BlockRuns((s.namespace, play.marker), self.runs(turn))
        expected = self.tracker.observe(keys, turn.input_tokens, s.block_size_tokens)
        req = lane_request(self.cfg, play, agent, i, phase, "")
        tags = lane_tags(self.cfg, play, agent, i, expected)
        now = self.kernel.now_ns()
        self.rid += 1
        seq = Seq(
            self.rid,
            now,
            max(req.input_tokens, 1),
            max(req.max_tokens, 1),
            keys,
            s.block_size_tokens,
        )
        st = self.stats
        st.in_flight += 1
        st.max_in_flight = max(st.max_in_flight, st.in_flight)

        def done() -> None:  # the sender sees the answer one turn after the step ends
            st.in_flight -= 1
            ex = exchange_of(seq, req, self.ones)
            rec = to_record(
                ex, req, self.cfg.pid, phase, count_chunk_tokens(ex, None), scheduled_ns, tags=tags
            )
            self.sink.write(rec)
            if phase == "measure":
                run.tree.sent += 1
                st.measured += 1
                st.failed += ex.error is not None
                st.overflow += ex.error == ErrorKind.CONTEXT_OVERFLOW
                st.last_end_ns = max(st.last_end_ns, ex.end_ns)
            if then is not None:
                then()
            elif phase == "measure":
                self._turn_done(run, now if scheduled_ns is None else scheduled_ns, seq.end_ns)

        seq.on_done = lambda _: self._later(1, done)
        self.cluster.submit(seq, now)
