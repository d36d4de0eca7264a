"""A seeded synthetic agentic-coding generator: workload source for agentic replay.

A root agent opens with its system prompt and a slice of repository context, then runs turns:
each turn's output and the next tool result (or user message) grow the context, which is cut into
`block_size_tokens` blocks with fresh hash ids. After some root turns it fans out sub-agents with
their own fresh context, which join before the next root turn (or run in the background). All
sizes and delays are log-normal (`SyntheticSpec` documents each); same spec + seed = same sessions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scoville.spec.agentic import LogNormal, SyntheticSpec
from scoville.workload.agentic.session import Agent, Session, Turn, validate_session


def _draw(rng: np.random.Generator, d: LogNormal, lo: float, hi: float) -> float:
    return float(np.clip(d.median * np.exp(d.sigma * rng.standard_normal()), lo, hi))


TAIL_IDS = 1 << 40  # partial tails are numbered from here, full blocks from 0


@dataclass
class _Blocks:
    """Hash ids of a growing context: full blocks get ids once; the partial tail gets a new id
    every time it is sent (its content differs from the full block it later becomes). Full
    blocks are numbered apart from tails, so a context is one run of consecutive ids plus a
    tail (what a run-length prefix cache stores cheaply)."""

    block: int
    next_id: int = 0
    next_tail: int = TAIL_IDS

    def ids_for(self, full: list[int], n_tokens: int) -> tuple[int, ...]:
        need = n_tokens // self.block - len(full)
        if need > 0:
            full.extend(range(self.next_id, self.next_id + need))
            self.next_id += need
        tail: tuple[int, ...] = ()
        if n_tokens % self.block:
            tail = (self.next_tail,)
            self.next_tail += 1
        return (*full[: n_tokens // self.block], *tail)


def _chain(
    spec: SyntheticSpec, rng: np.random.Generator, ids: _Blocks, opening_tokens: int, n_turns: int
) -> list[Turn]:
    """One agent's turns: the context starts at `opening_tokens` and grows by output + tool
    result each turn; stops early when the next input would pass `max_context_tokens`."""
    full: list[int] = []
    context = opening_tokens
    turns: list[Turn] = []
    for i in range(n_turns):
        if context > spec.max_context_tokens:
            break
        out = round(_draw(rng, spec.output_tokens, 1, 16_384))
        think = 0.0 if i == 0 else _draw(rng, spec.think_s, 0.0, 3600.0)
        turns.append(Turn(context, out, ids.ids_for(full, context), think))
        context += out + round(_draw(rng, spec.tool_result_tokens, 1, 200_000))
    return turns


def _subagents(
    spec: SyntheticSpec, rng: np.random.Generator, ids: _Blocks, root: list[Turn]
) -> list[Agent]:
    agents: list[Agent] = []
    for i in range(len(root) - 1):  # the last root turn spawns nothing that could join
        if rng.random() >= spec.subagent_probability:
            continue
        for k in range(int(rng.integers(1, spec.max_fanout + 1))):
            n = round(_draw(rng, spec.subagent_turns, 1, 100))
            task = round(_draw(rng, spec.subagent_context_tokens, 0, 1_000_000))
            turns = _chain(spec, rng, ids, spec.subagent_system_tokens + task, n)
            if not turns:
                continue
            background = rng.random() < spec.background_probability
            agents.append(
                Agent(f"root/sa{i}.{k}", tuple(turns), "root", i, None if background else i + 1)
            )
    return agents


def synthetic_session(spec: SyntheticSpec, seed: int, index: int) -> Session:
    """Session `index` of the generator seeded with `seed` (independent of the other sessions)."""
    rng = np.random.default_rng([seed, index])
    ids = _Blocks(spec.block_size_tokens)
    opening = spec.system_tokens + round(_draw(rng, spec.repo_context_tokens, 0, 10_000_000))
    n_root = round(_draw(rng, spec.root_turns, 2, 400))
    root = _chain(spec, rng, ids, opening, n_root)
    if not root:  # the opening alone is over max_context_tokens: send it once, as recorded
        root = [Turn(opening, 1, ids.ids_for([], opening))]
    t_s = 0.0
    for j, t in enumerate(root):  # a nominal recorded timeline (think + 20 ms/output token)
        t_s += t.think_s
        root[j] = Turn(t.input_tokens, t.output_tokens, t.hash_ids, t.think_s, t_s)
        t_s += 0.02 * t.output_tokens
    agents = (Agent("root", tuple(root)), *_subagents(spec, rng, ids, root))
    return validate_session(
        Session(
            session_id=f"syn{seed}-{index}",
            agents=agents,
            block_size_tokens=spec.block_size_tokens,
            namespace=f"synthetic:{seed}:{index}",
            source=f"synthetic:seed={seed}:session={index}",
        )
    )


def synthetic_sessions(spec: SyntheticSpec, seed: int) -> list[Session]:
    return [synthetic_session(spec, seed, i) for i in range(spec.sessions)]
