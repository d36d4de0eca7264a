"""The soak spec: a steady load on a fleet of replicas for a duration, a fault schedule, and
the rules its analysis applies (window, recovery band, error budget, degraded-replica test).

Declared once as frozen pydantic models; `scoville soak --spec FILE` loads it, `--set` edits it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, model_validator

from scoville.spec.load import apply_overrides, read_mapping, validate_as
from scoville.spec.model import FrozenModel

Pos = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNeg = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class KillFault(FrozenModel):
    """Kill a replica's process (SIGKILL) at `at_s`; restart it `restart_after_s` later."""

    kind: Literal["kill"] = "kill"
    at_s: NonNeg = Field(description="When, in seconds from the soak's start.")
    replica: int = Field(ge=0, description="Which replica (0-based).")
    restart_after_s: NonNeg | None = Field(
        None, description="Restart this many seconds after the kill (None: stays down)."
    )


class SlowFault(FrozenModel):
    """The router stretches every response of one replica `factor` times (first byte and every
    gap between frames), for `for_s` seconds."""

    kind: Literal["slow"] = "slow"
    at_s: NonNeg
    replica: int = Field(ge=0)
    factor: Annotated[float, Field(gt=1, le=100, allow_inf_nan=False)] = Field(
        description="Latency multiplier (> 1)."
    )
    for_s: Pos | None = Field(None, description="How long (None: to the end of the soak).")


class LatencyFault(FrozenModel):
    """The router delays the first byte of every response by `add_ms` (one replica or all)."""

    kind: Literal["latency"] = "latency"
    at_s: NonNeg
    add_ms: Annotated[float, Field(gt=0, le=60_000, allow_inf_nan=False)]
    replica: int | None = Field(None, ge=0, description="None: every replica.")
    for_s: Pos | None = None


class DropFault(FrozenModel):
    """The router cuts a `fraction` of connections mid-stream (one replica or all)."""

    kind: Literal["drop"] = "drop"
    at_s: NonNeg
    fraction: Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]
    replica: int | None = Field(None, ge=0)
    for_s: Pos | None = None


Fault = Annotated[KillFault | SlowFault | LatencyFault | DropFault, Field(discriminator="kind")]


class AnalysisRules(FrozenModel):
    """How the soak is judged (every rule stated, every threshold here)."""

    window_s: Pos = Field(5.0, description="Width of a timeline window.")
    warmup_s: NonNeg = Field(5.0, description="Start of the soak left out of every baseline.")
    baseline_s: Pos = Field(30.0, description="Pre-fault span a fault's baseline is taken from.")
    band: Annotated[float, Field(gt=0, lt=1)] = Field(
        0.2,
        description="Recovered when throughput >= (1 - band) x baseline and p99 latency <= "
        "(1 + band) x baseline and the window's failures stay within the error budget.",
    )
    hold_windows: int = Field(2, ge=1, description="Consecutive in-band windows that count.")
    error_budget: Annotated[float, Field(ge=0, lt=1)] = Field(
        0.01, description="Allowed failed fraction of requests (the SLO's error budget)."
    )
    alpha: Annotated[float, Field(gt=0, lt=1)] = Field(
        0.01, description="Family-wise error rate of the degraded-replica test (Holm)."
    )
    min_effect: Annotated[float, Field(gt=0.5, lt=1)] = Field(
        0.6,
        description="Smallest probability of superiority P(replica slower than its peers) "
        "that counts as degraded.",
    )


class SoakSpec(FrozenModel):
    """A soak: `streams_per_replica x replicas` closed-loop streams for `duration_s`."""

    replicas_kind: Literal["twin", "embedded"] = Field(
        "twin",
        description="'twin' (HTTP twin processes) or 'embedded' (llama.cpp processes).",
    )
    replicas: int = Field(2, ge=1, le=16, description="How many replicas behind the router.")
    duration_s: Annotated[float, Field(gt=0, le=7 * 86400, allow_inf_nan=False)] = 60.0
    streams_per_replica: int = Field(2, ge=1, le=256)
    isl_tokens: int = Field(64, ge=1, le=32_768)
    osl_tokens: int = Field(32, ge=1, le=8_192)
    request_timeout_s: Pos = Field(60.0, description="Per-request read timeout.")
    router_retries: int = Field(
        1, ge=0, le=8, description="Times the router retries a refused connect elsewhere."
    )
    twin_speedup: Pos = Field(1.0, description="Time compression of twin replicas.")
    seed: int = 0
    faults: tuple[Fault, ...] = ()
    rules: AnalysisRules = AnalysisRules()

    @model_validator(mode="after")
    def _faults_fit(self) -> SoakSpec:
        for i, fault in enumerate(self.faults):
            rep = getattr(fault, "replica", None)
            if rep is not None and rep >= self.replicas:
                raise ValueError(
                    f"faults[{i}] names replica {rep}, but the fleet has replicas "
                    f"0..{self.replicas - 1}"
                )
            if fault.at_s >= self.duration_s:
                raise ValueError(
                    f"faults[{i}] starts at {fault.at_s} s, after the soak ends "
                    f"({self.duration_s} s)"
                )
        return self

    @property
    def streams(self) -> int:
        return self.streams_per_replica * self.replicas


def load_soak_spec(path: Path | None, overrides: list[str] | None = None) -> SoakSpec:
    """The soak spec at `path` (or the defaults) with `--set a.b=c` overrides, validated."""
    data = read_mapping(path) if path is not None else {}
    data = apply_overrides(data, overrides or [], SoakSpec)
    return validate_as(SoakSpec, data, str(path) if path else "the command line")
