"""Claim -> matrix: the frozen benchmark spec that would test each side of a claim file.

Every condition the claim states goes into the spec; every one it leaves unstated gets a
default recorded as an assumption, so a plan never hides what the claim did not say. The twin
runs themselves are started by the command layer (analysis never imports the twin).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scoville.analysis.audit import side_conditions
from scoville.analysis.claims import ClaimFile, Side, weaker
from scoville.analysis.comparable import judge
from scoville.analysis.verdicts import PER_KW_METRICS
from scoville.spec.model import BenchmarkSpec

DEFAULT_CONCURRENCY = (1, 2, 4, 8, 16, 32, 64)


@dataclass(frozen=True, slots=True)
class SidePlan:
    side_id: str
    system: str
    spec: BenchmarkSpec  # for a measured run (the target URL is a placeholder to replace)
    tp: int
    assumed: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ClaimPlan:
    claim_id: str
    metric: str
    system_side: str
    baseline_side: str
    like: bool
    reasons: tuple[str, ...]
    caveats: tuple[str, ...]
    evidence: str  # the claim's own evidence tier (the weaker of its sides')
    notes: tuple[str, ...] = field(default=())
    boundary: str | None = None  # per-kW claims: the power boundary both sides state


def tp_of(parallelism: str | None) -> int | None:
    """'TP8', 'tp=4 ep4', '8-way tensor parallel' -> 8 / 4 / 8; None when not stated."""
    if not parallelism:
        return None
    m = re.search(r"tp\s*=?\s*(\d+)", parallelism, re.IGNORECASE) or re.search(
        r"(\d+)[- ]way", parallelism
    )
    return int(m.group(1)) if m else None


def side_spec(
    side_id: str,
    side: Side,
    concurrency: Sequence[int],
    default_tp: int = 8,
    power_profile: Mapping[str, Any] | None = None,
) -> SidePlan:
    """The frozen spec that would test one side, and what had to be assumed. A power profile
    (the mapping `spec.power.read_profile` returns) is frozen in, so the run records per-kW at
    every boundary the profile determines, the claim's among them."""
    assumed: list[str] = []

    def pick(value: Any, default: Any, name: str) -> Any:
        if value is None:
            assumed.append(f"{name}: not stated by the claim; {default!r} assumed")
            return default
        return value

    tp = tp_of(side.parallelism)
    if tp is None:
        assumed.append(f"parallelism: not stated; TP={default_tp} assumed")
        tp = default_tp
    model = pick(side.model, "unknown", "model")
    doc: dict[str, Any] = {
        "name": f"claim side {side_id}: {side.system}",
        "target": {"url": "http://127.0.0.1:8000", "model": model},
        "model_name": model,
        "precision": pick(side.precision, "unknown", "precision"),
        "shape": {
            "isl_tokens": pick(side.isl_tokens, 1024, "isl_tokens"),
            "osl_tokens": pick(side.osl_tokens, 1024, "osl_tokens"),
            "range_ratio": pick(side.range_ratio, 1.0, "range_ratio"),
        },
        "load": {"concurrency": list(concurrency)},
        "accelerators": {
            "kind": side.system,
            "count": tp,
            "power_w_per_accelerator": side.power.w_per_accelerator,
            "power_boundary": pick(side.power.boundary, "package-tdp", "power boundary"),
        },
        "serving": {
            "tensor_parallel": tp,
            "speculative_decoding": pick(side.spec_decode, "none", "spec_decode"),
            "disaggregated": pick(side.disagg, False, "disagg"),
            "notes": f"latency target: {side.latency_target or 'not stated'}",
        },
        "quality": {"task": side.quality_target},
        "power_profile": dict(power_profile) if power_profile else None,
    }
    if side.quality_target is None:
        assumed.append("quality_target: not stated; no quality check planned")
    spec = BenchmarkSpec.model_validate(doc)
    return SidePlan(side_id, side.system, spec, tp, tuple(assumed))


def plan_claims(
    cf: ClaimFile,
    concurrency: Sequence[int] = DEFAULT_CONCURRENCY,
    power_profile: Mapping[str, Any] | None = None,
) -> tuple[dict[str, SidePlan], list[ClaimPlan]]:
    """A spec per side that some claim names (each carrying `power_profile` when given), and
    per claim the like-for-like verdict of its two sides as the claim states them."""
    used = {s for c in cf.claims for s in (c.system, c.baseline)}
    sides = {
        sid: side_spec(sid, cf.sides[sid], concurrency, power_profile=power_profile)
        for sid in cf.sides
        if sid in used
    }
    claims = []
    for c in cf.claims:
        s, b = cf.sides[c.system], cf.sides[c.baseline]
        comp = judge(side_conditions(s), side_conditions(b), c.metric in PER_KW_METRICS)
        claims.append(
            ClaimPlan(
                c.id,
                c.metric,
                c.system,
                c.baseline,
                comp.like,
                tuple(comp.reasons()),
                tuple(comp.caveats()),
                weaker(s.evidence, b.evidence),
                boundary=claim_boundary(c.metric, s, b),
            )
        )
    return sides, claims


def claim_boundary(metric: str, s: Side, b: Side) -> str | None:
    """The power boundary a per-kW claim is judged at: the one both sides state (None for
    other metrics, or when the sides differ or leave it unstated; `judge` says so)."""
    if metric not in PER_KW_METRICS or s.power.boundary != b.power.boundary:
        return None
    return s.power.boundary
