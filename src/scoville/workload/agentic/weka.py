"""AgentX / WEKA trace JSON into sessions: workload source for agentic replay.

The public AgentX corpus (SemiAnalysis InferenceX, captured with WEKA's kv-cache-tester) stores
one coding session per JSON object: `{"id", "block_size": 64, "hash_id_scope": "local"|"global",
"requests": [...]}`. A request is `{"t", "type": "n"|"s", "in", "out", "hash_ids", "think_time"?,
"api_time"?, ...}`; a `{"type": "subagent", "t", "agent_id", "status", "requests": [...]}` marker
holds a sub-agent's own requests (nested markers allowed). A sub-agent spawns after the parent's
preceding request and joins before the parent's next one, unless its status is
`async_launched` or no parent request follows (then it runs in the background).
Accepted inputs: a `.json` file (one trace), a `.jsonl` file (one trace per line) or a directory
of either.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scoville.errors import DataError
from scoville.spec.limits import MAX_DATA_BYTES, MAX_SEQUENCE_TOKENS, read_text
from scoville.workload.agentic.session import Agent, Session, Turn, validate_session

_REQUEST_TYPES = ("n", "s")


def _num(obj: dict[str, Any], key: str, where: str, default: float | None = None) -> float:
    v = obj.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v < math.inf:
        raise DataError(f"{where}: '{key}' must be a number >= 0 (and finite), got {v!r}.")
    return float(v)


def _tokens(obj: dict[str, Any], key: str, where: str) -> int:
    """A token count of one request: at least 1, at most MAX_SEQUENCE_TOKENS."""
    v = _num(obj, key, where)
    if v > MAX_SEQUENCE_TOKENS:
        raise DataError(
            f"{where}: '{key}' = {v:.0f} tokens is over the limit of {MAX_SEQUENCE_TOKENS:,} "
            "tokens per request; is the trace in tokens?"
        )
    return max(1, int(v))


def _hashes(obj: dict[str, Any], where: str) -> tuple[int, ...]:
    h = obj.get("hash_ids", [])
    if not isinstance(h, list) or not all(
        isinstance(x, int) and not isinstance(x, bool) for x in h
    ):
        raise DataError(f"{where}: 'hash_ids' must be a list of integers.")
    return tuple(h)


@dataclass
class _Build:
    """Mutable state while one trace is turned into agents."""

    where: str
    agents: list[Agent] = field(default_factory=list)


def _turn(req: dict[str, Any], where: str, prev: dict[str, Any] | None, start_t: float) -> Turn:
    t = _num(req, "t", where)
    if "think_time" in req and req["think_time"] is not None:
        think = _num(req, "think_time", where)
    elif prev is None:
        think = max(0.0, t - start_t)
    else:  # end-to-start gap when the previous request's server time is known
        api = prev.get("api_time")
        end = float(prev["t"]) + (float(api) if isinstance(api, int | float) else 0.0)
        think = max(0.0, t - end)
    return Turn(
        input_tokens=_tokens(req, "in", where),  # a prompt has at least one token
        output_tokens=_tokens(req, "out", where),  # max_tokens must be >= 1
        hash_ids=_hashes(req, where),
        think_s=think,
        t_s=t,
    )


def _agent(
    b: _Build,
    agent_id: str,
    entries: list[Any],
    where: str,
    start_t: float,
    parent: tuple[str, int, int | None] | None,
) -> None:
    """Append the agent for `entries` (and, recursively, its sub-agents) to `b.agents`."""
    if not isinstance(entries, list):
        raise DataError(f"{where}: 'requests' must be a list.")
    turns: list[Turn] = []
    pending: list[tuple[dict[str, Any], str, int]] = []  # sub-agent markers, where, spawn_after
    prev: dict[str, Any] | None = None
    for i, e in enumerate(entries):
        w = f"{where}.requests[{i}]"
        if not isinstance(e, dict):
            raise DataError(f"{w}: expected an object, got {type(e).__name__}.")
        kind = e.get("type")
        if kind in _REQUEST_TYPES:
            turns.append(_turn(e, w, prev, start_t))
            prev = e
        elif kind == "subagent":
            pending.append((e, w, len(turns) - 1))
        else:
            raise DataError(f"{w}: unknown request type {kind!r}; expected 'n', 's' or 'subagent'.")
    if not turns:
        raise DataError(f"{where}: an agent with no 'n'/'s' requests; remove the empty marker.")
    spawn_after, join_before = (-1, None) if parent is None else (parent[1], parent[2])
    b.agents.append(
        Agent(
            agent_id, tuple(turns), None if parent is None else parent[0], spawn_after, join_before
        )
    )
    for marker, w, after in pending:
        _subagent(b, agent_id, marker, w, after, len(turns))


def _subagent(b: _Build, parent_id: str, m: dict[str, Any], where: str, after: int, n: int) -> None:
    sub_id = m.get("agent_id")
    if not isinstance(sub_id, str) or not sub_id:
        raise DataError(f"{where}: a subagent marker needs a string 'agent_id'.")
    spawn_t = _num(m, "t", where)
    inner = m.get("requests")
    if not isinstance(inner, list) or not inner:
        raise DataError(f"{where}: subagent '{sub_id}' has no 'requests'.")
    # Raw kv-cache-tester traces time inner requests from the marker; published AgentX traces
    # use absolute times. Absolute when every inner request starts at or after the marker.
    ts = [float(r.get("t", 0)) for r in inner if isinstance(r, dict)]
    if ts and min(ts) < spawn_t:
        inner = [_shift(r, spawn_t) for r in inner]
    background = m.get("status") == "async_launched" or after + 1 >= n
    join = None if background else after + 1
    _agent(b, f"{parent_id}/{sub_id}", inner, where, spawn_t, (parent_id, after, join))


def _shift(r: Any, dt: float) -> Any:
    if not isinstance(r, dict) or not isinstance(r.get("t"), int | float):
        return r
    out = dict(r, t=float(r["t"]) + dt)
    if r.get("type") == "subagent" and isinstance(r.get("requests"), list):
        out["requests"] = [_shift(x, dt) for x in r["requests"]]
    return out


def weka_session(obj: Any, where: str) -> Session:
    """One AgentX/WEKA trace object into a validated session."""
    if not isinstance(obj, dict):
        raise DataError(f"{where}: a WEKA trace is a JSON object, got {type(obj).__name__}.")
    for key in ("id", "block_size", "requests"):
        if key not in obj:
            raise DataError(
                f"{where}: missing '{key}'; this does not look like an AgentX/WEKA trace "
                "(fields id, block_size, hash_id_scope, requests)."
            )
    block = obj["block_size"]
    if isinstance(block, bool) or not isinstance(block, int) or block < 1:
        raise DataError(f"{where}: 'block_size' must be a positive integer, got {block!r}.")
    scope = obj.get("hash_id_scope", "local")
    if scope not in ("local", "global"):
        raise DataError(f"{where}: 'hash_id_scope' must be 'local' or 'global', got {scope!r}.")
    trace_id = str(obj["id"])
    b = _Build(where)
    _agent(b, "root", obj["requests"], where, 0.0, None)
    return validate_session(
        Session(
            session_id=trace_id,
            agents=tuple(b.agents),
            block_size_tokens=block,
            namespace="weka:global" if scope == "global" else f"weka:{trace_id}",
            source=where,
        )
    )


def _load_json(path: Path) -> list[tuple[Any, str]]:
    text = read_text(path, "WEKA trace", MAX_DATA_BYTES, DataError)
    if path.suffix == ".jsonl":
        out = []
        for n, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                out.append((_decode(line, f"{path}:{n}"), f"{path}:{n}"))
        return out
    return [(_decode(text, str(path)), str(path))]


def _decode(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        raise DataError(f"{where}: JSON nested too deeply to be a trace.") from None
    except json.JSONDecodeError as exc:
        raise DataError(
            f"{where}: not valid JSON ({exc.msg} at line {exc.lineno}); fix the file."
        ) from exc


def weka_sessions(path: Path) -> list[Session]:
    """Sessions from a WEKA trace file (.json / .jsonl) or a directory of them (sorted by name)."""
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in (".json", ".jsonl"))
        if not files:
            raise DataError(f"{path} holds no .json or .jsonl WEKA trace files.")
    elif path.is_file():
        files = [path]
    else:
        raise DataError(f"WEKA trace {path} does not exist; give a .json file or a directory.")
    return [weka_session(obj, where) for f in files for obj, where in _load_json(f)]
