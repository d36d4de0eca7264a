"""Mooncake (FAST'25) JSONL traces into sessions: workload source for agentic replay.

Each line is `{"timestamp": ms, "input_length": n, "output_length": n, "hash_ids": [...]}` with
512-token blocks and one hash namespace for the whole file. Requests are either grouped into
sessions by shared prefixes (a request continues the session of the most recent request it shares
at least `min_shared_blocks` leading blocks with) or kept as one-turn sessions.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from scoville.errors import DataError
from scoville.spec.limits import MAX_DATA_BYTES, MAX_SEQUENCE_TOKENS, read_text
from scoville.workload.agentic.session import Agent, Session, Turn, validate_session

MOONCAKE_BLOCK_TOKENS = 512


@dataclass(frozen=True, slots=True)
class MooncakeRequest:
    line: int
    t_s: float
    input_tokens: int
    output_tokens: int
    hash_ids: tuple[int, ...]


def _int_field(obj: dict[str, Any], key: str, where: str, minimum: int = 0) -> int:
    v = obj.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or not minimum <= v <= MAX_SEQUENCE_TOKENS:
        raise DataError(
            f"{where}: '{key}' must be an integer from {minimum} to {MAX_SEQUENCE_TOKENS:,} "
            f"(tokens of one request), got {v!r}. Each Mooncake line is "
            '{"timestamp": ms, "input_length": n, "output_length": n, "hash_ids": [ints]}.'
        )
    return v


def parse_mooncake_line(text: str, where: str) -> MooncakeRequest:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{where}: not valid JSON ({exc.msg}); fix or delete the line.") from exc
    if not isinstance(obj, dict):
        raise DataError(f"{where}: expected a JSON object, got {type(obj).__name__}.")
    ts = obj.get("timestamp")
    if isinstance(ts, bool) or not isinstance(ts, int | float) or not 0 <= ts < math.inf:
        raise DataError(f"{where}: 'timestamp' must be a number of ms >= 0, got {ts!r}.")
    hashes = obj.get("hash_ids")
    if not isinstance(hashes, list) or not all(
        isinstance(h, int) and not isinstance(h, bool) for h in hashes
    ):
        raise DataError(f"{where}: 'hash_ids' must be a list of integers.")
    return MooncakeRequest(
        line=int(where.rsplit(":", 1)[1]),
        t_s=float(ts) / 1000.0,
        input_tokens=_int_field(obj, "input_length", where, 1),
        output_tokens=max(1, _int_field(obj, "output_length", where, 0)),  # max_tokens must be >= 1
        hash_ids=tuple(hashes),
    )


def read_mooncake_requests(path: Path) -> list[MooncakeRequest]:
    """Every request of the file, in file order. A bad line raises, naming file and line."""
    if not path.is_file():
        raise DataError(f"Mooncake trace {path} does not exist; give the path of a .jsonl file.")
    out: list[MooncakeRequest] = []
    text = read_text(path, "Mooncake trace", MAX_DATA_BYTES, DataError)
    for n, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            out.append(parse_mooncake_line(line, f"{path}:{n}"))
    if not out:
        raise DataError(f"Mooncake trace {path} has no requests.")
    return out


def group_by_prefix(reqs: list[MooncakeRequest], min_shared_blocks: int) -> list[list[int]]:
    """Indices of `reqs` per session. Request j continues the session of the latest earlier
    request that shares its longest leading run of blocks, if that run is >= min_shared_blocks."""
    owner: dict[tuple[int, ...], int] = {}  # block prefix -> latest request holding it
    session_of: list[int] = []
    sessions: list[list[int]] = []
    for j, r in enumerate(reqs):
        h = r.hash_ids
        parent = None
        for k in range(len(h), min_shared_blocks - 1, -1):
            if k > 0 and h[:k] in owner:
                parent = owner[h[:k]]
                break
        if parent is None:
            session_of.append(len(sessions))
            sessions.append([j])
        else:
            session_of.append(session_of[parent])
            sessions[session_of[parent]].append(j)
        for k in range(1, len(h) + 1):
            owner[h[:k]] = j
    return sessions


def mooncake_sessions(
    path: Path,
    mode: Literal["sessions", "requests"] = "sessions",
    min_shared_blocks: int = 2,
    time_scale: float = 1.0,
) -> list[Session]:
    """Sessions from a Mooncake trace. Think time before a turn is the start-to-start gap to the
    previous turn of the session, times `time_scale` (Mooncake records no end times)."""
    reqs = read_mooncake_requests(path)
    groups = (
        [[j] for j in range(len(reqs))]
        if mode == "requests"
        else group_by_prefix(reqs, min_shared_blocks)
    )
    namespace = f"mooncake:{path.name}"
    sessions: list[Session] = []
    for g in groups:
        turns = []
        for pos, j in enumerate(g):
            r = reqs[j]
            gap_s = 0.0 if pos == 0 else max(0.0, r.t_s - reqs[g[pos - 1]].t_s)
            turns.append(
                Turn(
                    r.input_tokens,
                    r.output_tokens,
                    r.hash_ids,
                    gap_s * time_scale,
                    r.t_s * time_scale,
                )
            )
        first = reqs[g[0]]
        sessions.append(
            validate_session(
                Session(
                    session_id=f"{path.stem}:{first.line}",
                    agents=(Agent("root", tuple(turns)),),
                    block_size_tokens=MOONCAKE_BLOCK_TOKENS,
                    namespace=namespace,
                    source=f"{path}:{first.line}",
                )
            )
        )
    return sessions
