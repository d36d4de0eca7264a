"""The lane driver against a fake server on the monotonic clock: fan-out, joins, think times,
recycling only after a tree drains, primers, the window and its drain."""

from __future__ import annotations

import asyncio
from functools import lru_cache

from agentic_fakes import FakeAgentServer

from scoville.client.lane_driver import LaneDriver
from scoville.client.lanes import LaneConfig, LaneResult
from scoville.client.seam import MonotonicClock
from scoville.records.model import RequestRecord
from scoville.records.sink import MemorySink
from scoville.spec.agentic import ValiditySpec
from scoville.workload.agentic.prompts import PromptBook, WordVocab
from scoville.workload.agentic.session import Agent, Session, Turn, validate_session
from scoville.workload.tokenizers import TiktokenTokenizer

MS = 1_000_000


@lru_cache(maxsize=1)
def _vocab() -> WordVocab:
    return WordVocab.for_tokenizer(TiktokenTokenizer("cl100k_base"))


def _turn(n_blocks: int, base: int, out: int = 3, think: float = 0.0) -> Turn:
    return Turn(n_blocks * 16, out, tuple(range(base, base + n_blocks)), think)


def fanout_session(name: str = "s") -> Session:
    """Root: 3 turns. After turn 0, three sub-agents (2 turns, 40 ms think) join before
    turn 1; a background agent (3 turns, 60 ms think) outlives the root."""
    root = Agent("root", (_turn(2, 0), _turn(3, 0, think=0.03), _turn(4, 0, think=0.02)))
    subs = tuple(
        Agent(
            f"root/sa{k}",
            (_turn(2, 100 * (k + 1)), _turn(3, 100 * (k + 1), think=0.04)),
            "root",
            0,
            1,
        )
        for k in range(3)
    )
    bg = Agent("root/bg", tuple(_turn(1 + j, 900, think=0.06) for j in range(3)), "root", 0, None)
    return validate_session(Session(name, (root, *subs, bg), 16, f"ns-{name}"))


def _run(
    sessions: list[Session], cfg: LaneConfig, timestamps: bool = False, **server_kw: float
) -> tuple[MemorySink, FakeAgentServer, LaneResult]:
    clock = MonotonicClock()
    server = FakeAgentServer(clock, **server_kw)
    sink = MemorySink()
    book = PromptBook(_vocab(), sessions)
    driver = LaneDriver(sessions, book, server, clock, sink, cfg)
    result = asyncio.run(driver.run_timestamps() if timestamps else driver.run())
    return sink, server, result


def _by_play(records: list[RequestRecord], play: int) -> dict[tuple[str, int], RequestRecord]:
    return {(r.tags["agent"], r.tags["turn"]): r for r in records if r.tags["play"] == play}


def test_fanout_join_think_and_drain() -> None:
    cfg = LaneConfig(lanes=1, window_s=0.5, start_min_ratio=0, start_max_ratio=0, primers=False)
    sink, server, result = _run([fanout_session()], cfg)
    recs = _by_play(sink.records, 0)
    assert len(recs) == 3 + 3 * 2 + 3
    # fan-out: one lane, yet several requests in flight at once
    assert result.stats.max_in_flight >= 3 and server.max_in_flight >= 3
    # join: root turn 1 starts only after every joining sub-agent's last turn ended
    last_sub_end = max(recs[(f"root/sa{k}", 1)].end_ns for k in range(3))
    assert recs[("root", 1)].start_ns >= last_sub_end
    assert recs[("root", 1)].scheduled_ns == max(recs[("root", 0)].end_ns + 30 * MS, last_sub_end)
    # think times: sent at end of the previous turn + think, within a few ms
    for k in range(3):
        first, second = recs[(f"root/sa{k}", 0)], recs[(f"root/sa{k}", 1)]
        assert second.scheduled_ns == first.end_ns + 40 * MS
        assert 0 <= second.start_ns - second.scheduled_ns < 5 * MS
    for j in (1, 2):
        prev, cur = recs[("root/bg", j - 1)], recs[("root/bg", j)]
        assert cur.scheduled_ns == prev.end_ns + 60 * MS
        assert 0 <= cur.start_ns - cur.scheduled_ns < 5 * MS
    # the background agent outlives the root; the lane's next play waits for it
    bg_end = recs[("root/bg", 2)].end_ns
    assert bg_end > recs[("root", 2)].end_ns
    nxt = [r for r in sink.records if r.tags["play"] == 1]
    assert nxt and min(r.start_ns for r in nxt) >= bg_end


def test_window_closes_sends_and_drains_in_flight() -> None:
    cfg = LaneConfig(
        lanes=2,
        window_s=0.3,
        start_min_ratio=0,
        start_max_ratio=0,
        primers=False,
        validity=ValiditySpec(min_window_s=3600),
    )
    sink, _, result = _run([fanout_session("a"), fanout_session("b")], cfg, tpot_s=0.01)
    w = result.window
    end_of_window = w.start_ns + int(0.3e9)
    measured = [r for r in sink.records if r.phase == "measure"]
    assert all(r.start_ns < end_of_window for r in measured)
    assert any(r.end_ns > end_of_window for r in measured)  # in flight at the close, counted
    assert w.sent == len(measured) and w.mode == "lanes" and w.level == 2.0
    assert w.end_ns == max(r.end_ns for r in measured)
    assert w.diagnostic and any("diagnostic" in n for n in w.notes)
    assert sink.windows == [w]


def test_primers_materialise_the_prefix_and_share_the_marker() -> None:
    root = Agent("root", tuple(_turn(2 + i, 0, think=0.0) for i in range(4)))
    s = validate_session(Session("p", (root,), 16, "ns-p"))
    cfg = LaneConfig(lanes=1, window_s=0.05, start_min_ratio=0.5, start_max_ratio=0.5)
    sink, server, _ = _run([s], cfg)
    primer = [r for r in sink.records if r.phase == "primer"]
    assert len(primer) == 1 and primer[0].expected_output_tokens == 1
    assert primer[0].tags["turn"] == 1
    first = next(r for r in sink.records if r.phase == "measure")
    assert first.tags["turn"] == 2
    # the primer put turn 1's three blocks in the cache: the first measured turn hits them
    assert first.cached_tokens == 3 * 16 and first.tags["expected_cached_tokens"] == 3 * 16
    prompts = [q.prompt or "" for q in server.requests]
    assert prompts[1].startswith(prompts[0][: len(prompts[0]) // 2])


def test_recycled_plays_get_fresh_markers_and_no_cross_play_hits() -> None:
    root = Agent("root", (_turn(3, 0), _turn(4, 0, think=0.001)))
    s = validate_session(Session("r", (root,), 16, "ns-r"))
    cfg = LaneConfig(lanes=1, window_s=0.08, start_min_ratio=0, start_max_ratio=0, primers=False)
    sink, _, _ = _run([s], cfg)
    plays = sorted({r.tags["play"] for r in sink.records})
    assert len(plays) >= 2
    for r in sink.records:  # turn 0 of every play misses; turn 1 hits its own play's prefix
        assert r.cached_tokens == (0 if r.tags["turn"] == 0 else 3 * 16)
        assert r.tags["cache_hit_expected"] == (r.tags["turn"] == 1)


def test_overflow_is_counted_and_makes_the_point_invalid() -> None:
    root = Agent("root", (_turn(2, 0), _turn(40, 0, think=0.001)))
    s = validate_session(Session("o", (root,), 16, "ns-o"))
    cfg = LaneConfig(
        lanes=1,
        window_s=0.05,
        start_min_ratio=0,
        start_max_ratio=0,
        primers=False,
        validity=ValiditySpec(min_window_s=0.01),
    )
    _, _, result = _run([s], cfg, window_tokens=200)
    assert result.stats.overflow > 0
    assert not result.verdict.valid
    assert any("overflowed" in n for n in result.window.notes)


def test_live_mode_threads_the_models_output_into_the_next_prompt() -> None:
    root = Agent("root", (_turn(2, 0, out=3), _turn(4, 0, out=2, think=0.001)))
    s = validate_session(Session("l", (root,), 16, "ns-l"))
    cfg = LaneConfig(
        lanes=1, window_s=0.03, start_min_ratio=0, start_max_ratio=0, primers=False, live=True
    )
    _, server, _ = _run([s], cfg)
    reqs = server.requests
    first, second = reqs[0].prompt or "", reqs[1].prompt or ""
    assert second.startswith(first + " tok tok tok")
    assert second != first + " tok tok tok"  # new tool-result content follows the output


def test_timestamp_replay_reaches_the_traces_theoretical_hit_rate() -> None:
    from pathlib import Path

    from scoville.workload.agentic.cache import theoretical_hits
    from scoville.workload.agentic.mooncake import mooncake_sessions

    path = Path(__file__).parents[1] / "workload/agentic/data/mooncake_conversation_head300.jsonl"
    sessions = mooncake_sessions(path, mode="requests", time_scale=1e-2)
    sessions = [s for s in sessions if s.root.turns[0].t_s < 0.5]
    cfg = LaneConfig(lanes=1, window_s=10, point_id="ts", cache_bust=False)
    sink, _, result = _run(sessions, cfg, timestamps=True, tpot_s=0.0, base_s=0.001)
    assert result.window.mode == "rate" and result.window.sent == len(sessions)
    starts = [r.start_ns for r in sink.records]
    assert len(starts) == len(sessions)
    # sent at the (scaled) recorded times; the trace sends bursts of up to 16 requests at the
    # same millisecond, so a burst's last request leaves a little after its first
    late = [r.start_ns - (r.scheduled_ns or 0) for r in sink.records]
    assert min(late) >= 0 and max(late) < 100 * MS
    order = sorted(sink.records, key=lambda r: r.start_ns)
    assert [r.tags["play"] for r in order] == sorted(r.tags["play"] for r in order)
    trace = theoretical_hits(sessions)
    measured = sum(r.cached_tokens or 0 for r in sink.records)
    assert measured == trace.hit_tokens  # an unlimited cache serves exactly what the hashes say
    assert sum(r.tags["expected_cached_tokens"] for r in sink.records) == trace.hit_tokens
    assert trace.hit_tokens > 0


def test_a_play_whose_first_turn_falls_after_the_window_ends_the_lane() -> None:
    late = Agent("root", (Turn(16, 2, (1,), think_s=5.0),))
    s = validate_session(Session("late", (late,), 16, "ns-late"))
    cfg = LaneConfig(lanes=1, window_s=0.05, start_min_ratio=0, start_max_ratio=0, primers=False)
    sink, _, result = _run([s], cfg)
    assert sink.records == [] and result.window.sent == 0
    assert result.stats.plays_started == 1  # no busy loop of empty plays until the close
    assert any("no measured requests" in n for n in result.window.notes)


def test_sub_agents_live_at_the_start_point_run_and_are_joined() -> None:
    root = Agent("root", tuple(_turn(2 + i, 0, think=0.0) for i in range(4)))
    live = Agent("root/live", (_turn(2, 500), _turn(3, 500, think=0.03)), "root", 0, 2)
    done = Agent("root/done", (_turn(2, 600),), "root", 0, 1)  # joined before the start
    s = validate_session(Session("m", (root, live, done), 16, "ns-m"))
    cfg = LaneConfig(lanes=1, window_s=0.2, start_min_ratio=0.5, start_max_ratio=0.5)
    sink, _, _ = _run([s], cfg)
    recs = _by_play(sink.records, 0)
    assert ("root", 2) in recs and ("root/live", 1) in recs
    assert ("root/done", 0) not in recs
    assert recs[("root", 2)].start_ns >= recs[("root/live", 1)].end_ns


def test_warmup_per_lane_goes_first_in_plays_of_its_own() -> None:
    # Sessions of 2 root turns and 3 warm-up requests a lane: each lane plays one warm-up
    # session whole and the first turn of the next, back to back, before the window opens.
    sessions = [
        validate_session(Session(f"w{k}", (Agent("root", (_turn(2, 0), _turn(3, 0))),), 16, "w"))
        for k in range(4)
    ]
    cfg = LaneConfig(lanes=2, window_s=0.05, primers=False, warmup_per_lane=3)
    sink, _, result = _run(sessions, cfg)
    warm = [r for r in sink.records if r.phase == "warmup"]
    assert result.stats.warmup == 6 and len(warm) == 6
    assert sorted(r.tags["lane"] for r in warm) == [0, 0, 0, 1, 1, 1]
    assert [r.tags["turn"] for r in warm if r.tags["lane"] == 0] == [0, 1, 0]
    assert all(r.request_id.endswith("-warmup") and r.tags["play"] >= 2**31 for r in warm)
    assert max(r.end_ns for r in warm) <= result.window.start_ns
    measured = [r for r in sink.records if r.phase == "measure"]
    assert measured and all(r.tags["play"] < 2**31 for r in measured)
    assert result.window.sent == len(measured)  # warm-up never counts as measured
