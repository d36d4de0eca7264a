"""The frozen agentic-replay spec: which sessions, how many lanes, which window, against what.

Declared once before anything runs (like `BenchmarkSpec`) and hashed into every result. The
workload (`scoville.workload.agentic`) and the lane driver (`scoville.client.lanes`) read it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import Field, model_validator

from scoville.spec.model import (
    AcceleratorSpec,
    FrozenModel,
    ServingSpec,
    SloSpec,
    TargetSpec,
)


class LogNormal(FrozenModel):
    """A log-normal distribution given by its median and the sigma of log(x)."""

    median: float = Field(gt=0, description="Median of the distribution (its unit is the field's).")
    sigma: float = Field(ge=0, description="Standard deviation of ln(x); 0 = always the median.")


class SyntheticSpec(FrozenModel):
    """A seeded agentic-coding generator. Defaults give request shapes close to the published
    AgentX corpus statistics (median request ~142k input and ~444 output tokens)."""

    sessions: int = Field(64, ge=1, description="Distinct sessions to generate.")
    block_size_tokens: int = Field(64, ge=1, description="Prefix-block size (AgentX uses 64).")
    system_tokens: int = Field(12_000, ge=1, description="Tools + system prompt of a root agent.")
    repo_context_tokens: LogNormal = Field(
        LogNormal(median=80_000, sigma=0.5),
        description="Repository context read into the root agent before its first turn.",
    )
    root_turns: LogNormal = Field(
        LogNormal(median=40, sigma=0.6), description="Turns of the root agent (clipped 2..400)."
    )
    tool_result_tokens: LogNormal = Field(
        LogNormal(median=1_500, sigma=1.2),
        description="New input per turn (tool result or user message), after the last output.",
    )
    output_tokens: LogNormal = Field(
        LogNormal(median=444, sigma=1.0), description="Output tokens per turn (clipped 1..16384)."
    )
    think_s: LogNormal = Field(
        LogNormal(median=2.0, sigma=1.0), description="Think/tool delay before each turn (s)."
    )
    subagent_probability: float = Field(
        0.03, ge=0, le=1, description="Chance that a root turn spawns sub-agents after it."
    )
    max_fanout: int = Field(4, ge=1, description="Sub-agents per spawn: uniform in 1..max_fanout.")
    subagent_turns: LogNormal = Field(
        LogNormal(median=8, sigma=0.5), description="Turns of a sub-agent (clipped 1..100)."
    )
    subagent_system_tokens: int = Field(
        12_000, ge=1, description="Tools + system prompt of a sub-agent (fresh context)."
    )
    subagent_context_tokens: LogNormal = Field(
        LogNormal(median=60_000, sigma=0.8),
        description="Task and files a sub-agent reads before its first turn.",
    )
    background_probability: float = Field(
        0.1, ge=0, le=1, description="Chance that a sub-agent runs in the background (no join)."
    )
    max_context_tokens: int = Field(
        400_000, ge=1, description="An agent stops when its next input would exceed this."
    )


class SourceSpec(FrozenModel):
    kind: Literal["mooncake", "weka", "synthetic"] = Field(
        "synthetic",
        description="'mooncake' (FAST'25 JSONL), 'weka' (AgentX/WEKA trace JSON, a file or a "
        "directory) or 'synthetic' (the seeded generator).",
    )
    path: str | None = Field(None, description="Trace file or directory (mooncake, weka).")
    mooncake_mode: Literal["sessions", "requests"] = Field(
        "sessions",
        description="'sessions': group requests into sessions by shared prefixes and drive them "
        "in lanes; 'requests': every request is its own one-turn session.",
    )
    min_shared_blocks: int = Field(
        2,
        ge=1,
        description="Mooncake grouping: blocks a request must share with an earlier "
        "one to continue its session (block 0 is often a system prompt shared by all).",
    )
    time_scale: float = Field(
        1.0, gt=0, description="Multiply recorded gaps and timestamps by this factor."
    )
    max_sessions: int | None = Field(None, ge=1, description="Use only the first N sessions.")
    synthetic: SyntheticSpec = SyntheticSpec()

    @model_validator(mode="after")
    def _path_needed(self) -> SourceSpec:
        if self.kind in ("mooncake", "weka") and not self.path:
            raise ValueError(f"source kind '{self.kind}' needs a path to the trace")
        return self


class WarmupSpec(FrozenModel):
    start_min_ratio: float = Field(
        0.25,
        ge=0,
        le=1,
        description="Each lane's first session starts at a seeded point this far "
        "into its root turns at the earliest.",
    )
    start_max_ratio: float = Field(0.75, ge=0, le=1, description="... and this far at the latest.")
    primers: bool = Field(
        True,
        description="Before the window, send the turn before the start point with "
        "max_tokens=1 so the server holds the prefix (recorded with phase='primer').",
    )

    requests_per_lane: int = Field(
        0,
        ge=0,
        le=100_000,
        description="Warm-up requests each lane sends back to back before the window (AgentX "
        "uses 10), from a play of its own; recorded with phase='warmup', excluded from every "
        "metric, counted in the manifest. 0 = none.",
    )

    @model_validator(mode="after")
    def _ordered(self) -> WarmupSpec:
        if self.start_min_ratio > self.start_max_ratio:
            raise ValueError("start_min_ratio must be <= start_max_ratio")
        return self


class ContextSpec(FrozenModel):
    scale_factor: float | None = Field(
        None,
        gt=0,
        le=1,
        description="Scale every context (block size, input and output "
        "lengths) by this factor; None = 1.0, or just enough to fit `target_window_tokens`.",
    )
    target_window_tokens: int | None = Field(
        None,
        ge=16,
        description="The target's context window; contexts are scaled to fit it "
        "when no scale_factor is given (the embedded SmolLM2 serves a few thousand tokens).",
    )
    scale_outputs: bool = Field(True, description="Scale output lengths by the same factor.")
    max_request_tokens: int | None = Field(
        None,
        ge=2,
        description="Drop whole sessions whose largest request (input + output) "
        "exceeds this many tokens, before scaling (AgentX's --max-context-length); the number "
        "dropped is stated in the run notes. None = keep all (overflows then count against "
        "validity).",
    )


class ValiditySpec(FrozenModel):
    max_error_rate: float = Field(
        0.05, ge=0, le=1, description="Failed share of measured requests."
    )
    max_context_overflow_share: float = Field(
        0.01, ge=0, le=1, description="Context-overflow share of measured requests (AgentX: 1%)."
    )
    min_window_s: float = Field(
        3600.0, gt=0, description="Shorter windows are diagnostic, never valid for publication."
    )
    min_stream_liveness: float = Field(
        0.95,
        ge=0,
        le=1,
        description="Streamed content must be seen through this share of the window (AgentX).",
    )


class AgenticSpec(FrozenModel):
    """A frozen agentic replay: everything needed to reproduce it, and nothing measured."""

    schema_version: Literal[1] = 1
    kind: Literal["agentic"] = "agentic"
    name: str = Field("agentic-replay", description="Free label for the run.")
    source: SourceSpec = SourceSpec()
    schedule: Literal["lanes", "timestamps"] = Field(
        "lanes",
        description="'lanes': closed loop, one point per lane count; 'timestamps': "
        "open loop, every request sent at its recorded time (times `source.time_scale`), in "
        "recorded order, one point, no cache-bust marker (the trace plays once).",
    )
    lanes: tuple[int, ...] = Field((1, 2, 4, 8), description="Lane counts; one point each.")
    window_s: float = Field(3600.0, gt=0, description="Measured window per point (s).")
    idle_gap_cap_s: float | None = Field(
        10.0, ge=0, description="Clamp recorded think/tool delays to this (None = as recorded)."
    )
    warmup: WarmupSpec = WarmupSpec()
    context: ContextSpec = ContextSpec()
    assistant_turns: Literal["recorded", "live"] = Field(
        "recorded",
        description="'recorded': later prompts are built from recorded lengths; "
        "'live': the model's own output is threaded back into the agent's next prompt.",
    )
    cache_bust: bool = Field(
        True,
        description="Start every play of a session with a unique marker so replays never "
        "hit each other's cache (prefixes are still shared within a play).",
    )
    seed: int = Field(0, description="Seed for generation, start points and session order.")
    target: TargetSpec = TargetSpec()
    model_name: str | None = Field(None, description="Canonical model under test.")
    precision: str = Field("unknown", description="Weights/activations label, e.g. fp8.")
    slo: SloSpec = Field(SloSpec(), description="Per-turn SLOs for goodput (ttft_ms, ...).")
    accelerators: AcceleratorSpec = AcceleratorSpec()
    serving: ServingSpec = ServingSpec()
    validity: ValiditySpec = ValiditySpec()

    @model_validator(mode="after")
    def _lanes_positive(self) -> AgenticSpec:
        if not self.lanes or any(n < 1 for n in self.lanes):
            raise ValueError("lanes: give at least one lane count, each >= 1")
        if self.schedule == "timestamps" and self.warmup.requests_per_lane:
            raise ValueError(
                "warmup.requests_per_lane applies to the lanes schedule; a timestamps replay "
                "plays the trace once, as recorded"
            )
        return self

    def canonical_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))

    def content_hash(self) -> str:
        """sha256 of the canonical JSON, first 16 hex digits."""
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")
