"""The session DAG: validation catches cycles, joins to nothing and malformed agents."""

from __future__ import annotations

import pytest

from scoville.errors import DataError
from scoville.workload.agentic.session import (
    Agent,
    Session,
    Turn,
    cap_think_times,
    validate_session,
)


def _t(n: int = 10, think: float = 0.0) -> Turn:
    return Turn(n, 2, (1,), think)


def _s(*agents: Agent) -> Session:
    return Session("s", agents, 64, "ns", source="file.json:3")


def test_valid_tree_passes() -> None:
    s = _s(
        Agent("root", (_t(), _t(), _t())),
        Agent("a", (_t(),), "root", 0, 2),
        Agent("a/b", (_t(), _t()), "a", 0, None),
        Agent("c", (_t(),), "root", -1, 1),
    )
    assert validate_session(s) is s
    assert s.n_requests == 7
    assert [a.agent_id for a in s.children_of("root")] == ["a", "c"]


@pytest.mark.parametrize(
    ("agents", "needle"),
    [
        (
            (Agent("root", (_t(), _t())), Agent("a", (_t(),), "root", 0, 5)),
            "joins before parent turn 5",
        ),
        (
            (Agent("root", (_t(), _t())), Agent("a", (_t(),), "root", 1, 1)),
            "joins before parent turn 1",
        ),
        ((Agent("root", (_t(),)), Agent("a", (_t(),), "ghost", 0, None)), "does not exist"),
        (
            (Agent("root", (_t(),)), Agent("a", (_t(),), "root", 3, None)),
            "spawns after parent turn 3",
        ),
        ((Agent("root", ()),), "has no turns"),
        ((Agent("root", (Turn(0, 1, ()),)),), "must be >= 1"),
        ((Agent("root", (_t(),)), Agent("root", (_t(),), "root")), "appear twice"),
        (
            (
                Agent("root", (_t(), _t())),
                Agent("a", (_t(), _t()), "b", 0, 1),
                Agent("b", (_t(), _t()), "a", 0, 1),
            ),
            "cycle",
        ),
    ],
)
def test_invalid_graphs_are_refused_with_source(agents: tuple[Agent, ...], needle: str) -> None:
    with pytest.raises(DataError, match=needle) as exc:
        validate_session(_s(*agents))
    assert "file.json:3" in str(exc.value)


def test_cap_think_times_clamps_only_long_gaps() -> None:
    s = _s(Agent("root", (_t(think=0.5), _t(think=30.0), _t(think=10.0))))
    assert [t.think_s for t in cap_think_times(s, 10.0).root.turns] == [0.5, 10.0, 10.0]
    assert cap_think_times(s, None) is s
