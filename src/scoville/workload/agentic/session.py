"""The agentic session model: a DAG of turns, built by the sources, replayed by the lane driver.

A session is one recorded (or generated) agent run. Its root agent is a chain of turns; sub-agent
chains spawn after a parent turn and join before a later parent turn (background sub-agents never
join). Each turn carries its input as prefix blocks (hash ids of `block_size_tokens` tokens), its
input and output lengths, and the think/tool delay recorded before it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, replace

from scoville.errors import DataError


@dataclass(frozen=True, slots=True)
class Turn:
    """One request of an agent.

    `think_s` is the recorded client-side delay before this request, counted from the end of the
    agent's previous turn (for turn 0: from the moment the agent was spawned). `hash_ids` name the
    prompt's blocks in order; tokens past `len(hash_ids) * block_size_tokens` are unique to this
    request. `t_s` is the request's offset in the recording (seconds), used to pick start points.
    """

    input_tokens: int
    output_tokens: int
    hash_ids: tuple[int, ...]
    think_s: float = 0.0
    t_s: float = 0.0


@dataclass(frozen=True, slots=True)
class Agent:
    """A chain of turns. The root agent has `parent_id is None`.

    A sub-agent starts after its parent's turn `spawn_after` has completed (-1: when the parent
    itself starts) and its parent's turn `join_before` waits for it (None: a background agent that
    blocks nothing, though its lane stays busy until it drains).
    """

    agent_id: str
    turns: tuple[Turn, ...]
    parent_id: str | None = None
    spawn_after: int = -1
    join_before: int | None = None


@dataclass(frozen=True, slots=True)
class Session:
    """A session tree. `agents[0]` is the root. Equal `(namespace, hash id)` pairs stand for equal
    prompt content; different namespaces never share content."""

    session_id: str
    agents: tuple[Agent, ...]
    block_size_tokens: int
    namespace: str
    source: str = ""  # "FILE:LINE" or "synthetic:seed", for error messages and records

    @property
    def root(self) -> Agent:
        return self.agents[0]

    def agent(self, agent_id: str) -> Agent:
        for a in self.agents:
            if a.agent_id == agent_id:
                return a
        raise KeyError(agent_id)

    def children_of(self, agent_id: str) -> tuple[Agent, ...]:
        return tuple(a for a in self.agents if a.parent_id == agent_id)

    def turns(self) -> Iterator[tuple[Agent, int, Turn]]:
        """Every (agent, turn index, turn), agent by agent."""
        for a in self.agents:
            for i, t in enumerate(a.turns):
                yield a, i, t

    @property
    def n_requests(self) -> int:
        return sum(len(a.turns) for a in self.agents)

    def max_context_tokens(self) -> int:
        """Largest input + output of any request (what must fit the target's window)."""
        return max(t.input_tokens + t.output_tokens for _, _, t in self.turns())


def validate_session(session: Session) -> Session:
    """Check the graph; raise `DataError` naming the source and the fix. Returns the session."""
    where = session.source or session.session_id
    if not session.agents:
        raise DataError(f"{where}: session '{session.session_id}' has no agents; give it turns.")
    if session.block_size_tokens < 1:
        raise DataError(f"{where}: block size must be >= 1 token, got {session.block_size_tokens}.")
    ids = [a.agent_id for a in session.agents]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise DataError(f"{where}: agent ids {sorted(dup)} appear twice; make them unique.")
    if session.root.parent_id is not None:
        raise DataError(f"{where}: the first agent is the root and must have no parent.")
    by_id = {a.agent_id: a for a in session.agents}
    for a in session.agents:
        _check_agent(a, by_id, where)
    _check_acyclic(session, where)
    return session


def _check_agent(a: Agent, by_id: dict[str, Agent], where: str) -> None:
    if not a.turns:
        raise DataError(f"{where}: agent '{a.agent_id}' has no turns; drop it or give it requests.")
    for i, t in enumerate(a.turns):
        if t.input_tokens < 1 or t.output_tokens < 1:
            raise DataError(
                f"{where}: agent '{a.agent_id}' turn {i} has input {t.input_tokens} / output "
                f"{t.output_tokens} tokens; both must be >= 1."
            )
        if t.think_s < 0:
            raise DataError(f"{where}: agent '{a.agent_id}' turn {i} has a negative think time.")
    if a.parent_id is None:
        return
    parent = by_id.get(a.parent_id)
    if parent is None:
        raise DataError(
            f"{where}: agent '{a.agent_id}' names parent '{a.parent_id}', which does not exist; "
            "fix the parent id or remove the sub-agent."
        )
    n = len(parent.turns)
    if not -1 <= a.spawn_after < n:
        raise DataError(
            f"{where}: agent '{a.agent_id}' spawns after parent turn {a.spawn_after}, but "
            f"'{parent.agent_id}' has turns 0..{n - 1}."
        )
    if a.join_before is not None and not a.spawn_after < a.join_before < n:
        raise DataError(
            f"{where}: agent '{a.agent_id}' joins before parent turn {a.join_before}, which is not "
            f"a turn of '{parent.agent_id}' after its spawn point (turns {a.spawn_after + 1}.."
            f"{n - 1}); make it a background agent (no join) or fix the index."
        )


def _check_acyclic(session: Session, where: str) -> None:
    """Kahn's algorithm over (agent, turn) nodes with chain, spawn and join edges."""
    succ: dict[tuple[str, int], list[tuple[str, int]]] = {}
    indeg: dict[tuple[str, int], int] = {}
    for a, i, _ in session.turns():
        succ.setdefault((a.agent_id, i), [])
        indeg.setdefault((a.agent_id, i), 0)

    def edge(u: tuple[str, int], v: tuple[str, int]) -> None:
        succ[u].append(v)
        indeg[v] += 1

    for a in session.agents:
        for i in range(1, len(a.turns)):
            edge((a.agent_id, i - 1), (a.agent_id, i))
        if a.parent_id is not None:
            if a.spawn_after >= 0:
                edge((a.parent_id, a.spawn_after), (a.agent_id, 0))
            if a.join_before is not None:
                edge((a.agent_id, len(a.turns) - 1), (a.parent_id, a.join_before))
    ready = deque(n for n, d in indeg.items() if d == 0)
    seen = 0
    while ready:
        u = ready.popleft()
        seen += 1
        for v in succ[u]:
            indeg[v] -= 1
            if indeg[v] == 0:
                ready.append(v)
    if seen != len(indeg) or _parent_loop(session):
        stuck = sorted({n[0] for n, d in indeg.items() if d > 0})
        raise DataError(
            f"{where}: the session graph has a cycle (agents {stuck or 'in a parent loop'} wait "
            "on each other); every sub-agent must spawn from and join into its ancestors only."
        )


def _parent_loop(session: Session) -> bool:
    parent = {a.agent_id: a.parent_id for a in session.agents}
    for start in parent:
        seen: set[str] = set()
        node: str | None = start
        while node is not None:
            if node in seen:
                return True
            seen.add(node)
            node = parent.get(node)
    return False


def cap_think_times(session: Session, cap_s: float | None) -> Session:
    """Clamp every recorded delay to `cap_s` (AgentX compresses idle gaps to 10 s)."""
    if cap_s is None:
        return session
    agents = tuple(
        replace(a, turns=tuple(replace(t, think_s=min(t.think_s, cap_s)) for t in a.turns))
        for a in session.agents
    )
    return replace(session, agents=agents)
