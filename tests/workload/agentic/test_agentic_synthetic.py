"""The synthetic agentic-coding generator: determinism, valid graphs, AgentX-like shapes."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from scoville.spec.agentic import LogNormal, SyntheticSpec
from scoville.workload.agentic.synthetic import synthetic_session, synthetic_sessions

SMALL = SyntheticSpec(
    sessions=3,
    system_tokens=500,
    repo_context_tokens=LogNormal(median=2_000, sigma=0.5),
    root_turns=LogNormal(median=8, sigma=0.5),
    tool_result_tokens=LogNormal(median=200, sigma=1.0),
    output_tokens=LogNormal(median=40, sigma=0.5),
    subagent_probability=0.4,
    subagent_context_tokens=LogNormal(median=300, sigma=0.5),
    subagent_system_tokens=200,
    subagent_turns=LogNormal(median=3, sigma=0.5),
)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), index=st.integers(0, 1000))
def test_sessions_are_deterministic_valid_and_prefix_shaped(seed: int, index: int) -> None:
    s = synthetic_session(SMALL, seed, index)
    assert s == synthetic_session(SMALL, seed, index)
    b = s.block_size_tokens
    for a in s.agents:
        for prev, cur in zip(a.turns, a.turns[1:], strict=False):
            # the context only grows, and the previous turn's full blocks stay a prefix
            assert cur.input_tokens > prev.input_tokens
            full = prev.input_tokens // b
            assert cur.hash_ids[:full] == prev.hash_ids[:full]
        for t in a.turns:  # one hash per (possibly partial) block
            assert len(t.hash_ids) == -(-t.input_tokens // b)
    for a in s.agents[1:]:  # sub-agents spawn after a root turn and join the next (or never)
        assert a.parent_id == "root"
        assert a.join_before in (None, a.spawn_after + 1)


def test_agents_of_one_session_never_share_blocks_by_accident() -> None:
    s = synthetic_session(SMALL, 7, 0)
    owners: dict[int, str] = {}
    for a, _, t in s.turns():
        for h in t.hash_ids:
            assert owners.setdefault(h, a.agent_id) == a.agent_id


def test_default_shapes_are_close_to_published_agentx_medians() -> None:
    sessions = synthetic_sessions(SyntheticSpec(sessions=120), seed=3)
    ins = [t.input_tokens for s in sessions for _, _, t in s.turns()]
    outs = [t.output_tokens for s in sessions for _, _, t in s.turns()]
    assert 142_000 * 0.85 < np.median(ins) < 142_000 * 1.15
    assert 444 * 0.85 < np.median(outs) < 444 * 1.15
    assert any(len(s.agents) > 1 for s in sessions)
    assert max(t.input_tokens for s in sessions for _, _, t in s.turns()) <= 400_000
