"""From an `AgenticSpec` to the sessions a replay sends: load, cap idle gaps, scale to the target.

The one entry point of the agentic workload for the command and the pipeline. It also says, in
notes that go on the result, what was changed (scale factor, capped gaps) and what the trace
itself promises (its theoretical prefix-cache hit rate with an unlimited cache).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from scoville.errors import DataError
from scoville.spec.agentic import AgenticSpec, SourceSpec
from scoville.workload.agentic.cache import (
    CacheTally,
    fit_factor,
    min_block_tokens,
    scale_session,
    theoretical_hits,
)
from scoville.workload.agentic.mooncake import mooncake_sessions
from scoville.workload.agentic.session import Session, cap_think_times
from scoville.workload.agentic.synthetic import synthetic_sessions
from scoville.workload.agentic.weka import weka_sessions

BUILTIN_TRACES = {
    "mooncake-conversation": "conversation_trace.jsonl",
    "mooncake-synthetic": "synthetic_trace.jsonl",
}


@dataclass(frozen=True)
class AgenticWorkload:
    sessions: tuple[Session, ...]
    scale_factor: float  # applied to every context (1.0 = full size)
    trace_hits: CacheTally  # unlimited-cache hits of the unscaled trace, in recorded order
    notes: tuple[str, ...]


def builtin_path(name: str) -> Path:
    ref = resources.files("scoville.data").joinpath(f"mooncake/{BUILTIN_TRACES[name]}")
    return Path(str(ref))


def detect_source(arg: str) -> SourceSpec:
    """`synthetic`, a built-in trace name, or a path whose format is read from its content."""
    if arg == "synthetic":
        return SourceSpec(kind="synthetic")
    if arg in BUILTIN_TRACES:
        return SourceSpec(kind="mooncake", path=str(builtin_path(arg)))
    p = Path(arg)
    if p.is_dir() or p.suffix == ".json":
        return SourceSpec(kind="weka", path=arg)
    if not p.is_file():
        raise DataError(
            f"'{arg}' is neither 'synthetic', a built-in trace ({', '.join(BUILTIN_TRACES)}) "
            "nor an existing file or directory."
        )
    with p.open("rb") as fh:
        raw = next((line for line in fh if line.strip()), b"")
    if b"\0" in raw:
        raise DataError(f"{p} is a binary file, not a JSONL or JSON trace.")
    first = raw.decode("utf-8", errors="replace")
    try:
        obj = json.loads(first)
    except json.JSONDecodeError:
        obj = None
    if isinstance(obj, dict) and "hash_ids" in obj and "timestamp" in obj:
        return SourceSpec(kind="mooncake", path=arg)
    if isinstance(obj, dict) and "requests" in obj:
        return SourceSpec(kind="weka", path=arg)
    raise DataError(
        f"{p}:1: unknown trace format. Expected Mooncake JSONL (timestamp, input_length, "
        "output_length, hash_ids) or AgentX/WEKA traces (id, block_size, requests)."
    )


def load_sessions(src: SourceSpec, seed: int) -> list[Session]:
    if src.kind == "synthetic":
        sessions = synthetic_sessions(src.synthetic, seed)
    elif src.kind == "mooncake":
        sessions = mooncake_sessions(
            Path(src.path or ""), src.mooncake_mode, src.min_shared_blocks, src.time_scale
        )
    else:
        sessions = weka_sessions(Path(src.path or ""))
    return sessions[: src.max_sessions] if src.max_sessions else sessions


def _drop_oversized(sessions: list[Session], cap: int, notes: list[str]) -> list[Session]:
    kept = [s for s in sessions if s.max_context_tokens() <= cap]
    notes.append(
        f"{len(sessions) - len(kept)} of {len(sessions)} sessions dropped: a request over "
        f"{cap} tokens (input + output)"
    )
    if not kept:
        raise DataError(
            f"Every session has a request over {cap} tokens; raise "
            "context.max_request_tokens or scale contexts instead."
        )
    return kept


def _scale_all(
    sessions: list[Session], factor: float, scale_outputs: bool, notes: list[str]
) -> tuple[list[Session], float]:
    ids: dict[str, set[int]] = {}  # distinct hash ids per namespace
    for s in sessions:
        seen = ids.setdefault(s.namespace, set())
        for _, _, t in s.turns():
            seen.update(t.hash_ids)
    n_blocks = sum(len(v) for v in ids.values())
    floor = min_block_tokens(n_blocks)
    scaled = [scale_session(s, factor, floor, scale_outputs) for s in sessions]
    applied = min(f for _, f in scaled)
    notes.append(
        f"contexts scaled by {applied:.4g} (asked {factor:.4g}; blocks keep their hashes, "
        f"block size >= {floor} tokens); outputs "
        f"{'scaled too' if scale_outputs else 'at recorded length'}"
    )
    return [s for s, _ in scaled], applied


def build_workload(spec: AgenticSpec, window_tokens: int | None = None) -> AgenticWorkload:
    """Sessions ready to replay. `window_tokens` is the target's context window when known
    (used only when the spec gives no scale factor but no `target_window_tokens` either)."""
    sessions = load_sessions(spec.source, spec.seed)
    notes = [f"source: {spec.source.kind} ({len(sessions)} sessions)"]
    tally = theoretical_hits(sessions)
    notes.append(
        f"theoretical prefix-cache hit rate of the trace (unlimited cache, recorded order): "
        f"{tally.token_hit_rate:.1%} of input tokens, {tally.block_hit_rate:.1%} of blocks"
    )
    if spec.context.max_request_tokens is not None:
        sessions = _drop_oversized(sessions, spec.context.max_request_tokens, notes)
    sessions = [cap_think_times(s, spec.idle_gap_cap_s) for s in sessions]
    if spec.idle_gap_cap_s is not None:
        notes.append(f"think/tool delays capped at {spec.idle_gap_cap_s:g} s")
    window = spec.context.target_window_tokens or window_tokens
    factor = spec.context.scale_factor or (fit_factor(sessions, window) if window else 1.0)
    applied = 1.0
    if factor < 1.0:
        sessions, applied = _scale_all(sessions, factor, spec.context.scale_outputs, notes)
    if window:
        over = sum(
            1
            for s in sessions
            for _, _, t in s.turns()
            if t.input_tokens + t.output_tokens > window
        )
        if over:
            notes.append(f"{over} requests still exceed the {window}-token window")
    notes.append(f"assistant turns: {spec.assistant_turns}")
    return AgenticWorkload(tuple(sessions), applied, tally, tuple(notes))
