"""Property tests for the trace parsers: any well-formed trace parses into a valid graph that
accounts for every request; nested sub-agents keep their parents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from scoville.workload.agentic.mooncake import mooncake_sessions
from scoville.workload.agentic.weka import weka_session


def _req(t: float, n: int) -> dict[str, Any]:
    return {"t": t, "type": "n", "in": n, "out": 3, "hash_ids": list(range(n // 64 + 1))}


@st.composite
def weka_requests(draw: st.DrawFn, depth: int = 0) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    t = 0.0
    for _ in range(draw(st.integers(1, 5))):
        t += draw(st.floats(0, 5))
        if depth < 2 and draw(st.booleans()):
            inner = draw(weka_requests(depth + 1))
            status = draw(st.sampled_from(["completed", "async_launched"]))
            items.append(
                {
                    "t": t,
                    "type": "subagent",
                    "agent_id": f"a{len(items)}",
                    "status": status,
                    "requests": inner,
                }
            )
        else:
            items.append(_req(t, draw(st.integers(1, 500))))
    if not any(i["type"] == "n" for i in items):
        items.append(_req(t + 1, 10))
    return items


def _count(items: list[dict[str, Any]]) -> tuple[int, int]:
    """(requests, agents) in a request list, markers included recursively."""
    reqs, agents = 0, 1
    for i in items:
        if i["type"] == "subagent":
            r, a = _count(i["requests"])
            reqs, agents = reqs + r, agents + a
        else:
            reqs += 1
    return reqs, agents


@settings(max_examples=60, deadline=None)
@given(weka_requests())
def test_any_weka_trace_parses_into_a_valid_complete_graph(items: list[dict[str, Any]]) -> None:
    s = weka_session({"id": "p", "block_size": 64, "requests": items}, "prop.json")
    n_req, n_agents = _count(items)
    assert s.n_requests == n_req and len(s.agents) == n_agents
    ids = {a.agent_id for a in s.agents}
    for a in s.agents[1:]:
        assert a.parent_id in ids and a.agent_id.startswith(f"{a.parent_id}/")
        parent = s.agent(a.parent_id or "")
        assert -1 <= a.spawn_after < len(parent.turns)
        if a.join_before is not None:
            assert a.join_before == a.spawn_after + 1


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 10_000), st.lists(st.integers(0, 6), max_size=6)),
        min_size=1,
        max_size=40,
    )
)
def test_mooncake_grouping_partitions_every_line(
    tmp_path_factory: Any, rows: list[tuple[int, list[int]]]
) -> None:
    path: Path = tmp_path_factory.mktemp("mc") / "t.jsonl"
    rows = sorted(rows)
    path.write_text(
        "".join(
            json.dumps(
                {
                    "timestamp": ts,
                    "input_length": 512 * max(1, len(h)),
                    "output_length": 5,
                    "hash_ids": h,
                }
            )
            + "\n"
            for ts, h in rows
        )
    )
    sessions = mooncake_sessions(path)
    assert sum(len(s.root.turns) for s in sessions) == len(rows)
    for s in sessions:
        gaps = [t.think_s for t in s.root.turns]
        assert gaps[0] == 0.0 and all(g >= 0 for g in gaps)
