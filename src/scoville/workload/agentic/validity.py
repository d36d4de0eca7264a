"""Validity rules of an agentic point, written once and stamped on every result.

A point is valid for publication only if its measured window is at least `min_window_s` long
(shorter = diagnostic), its failed share is at most `max_error_rate`, and its context-overflow
share is at most `max_context_overflow_share` (AgentX: 1 %). Pure arithmetic on counts.
"""

from __future__ import annotations

from dataclasses import dataclass

from scoville.spec.agentic import ValiditySpec


@dataclass(frozen=True, slots=True)
class Verdict:
    valid: bool
    diagnostic: bool  # too short to publish, whatever else holds
    notes: tuple[str, ...]


def judge(
    rules: ValiditySpec, window_s: float, n_measured: int, n_failed: int, n_overflow: int
) -> Verdict:
    """Apply the rules; every broken rule leaves a note that says what and by how much."""
    notes: list[str] = []
    diagnostic = window_s < rules.min_window_s
    if diagnostic:
        notes.append(
            f"diagnostic: window {window_s:.0f} s is shorter than the {rules.min_window_s:.0f} s "
            "a valid agentic point needs"
        )
    if n_measured == 0:
        notes.append("invalid: no measured requests")
        return Verdict(False, diagnostic, tuple(notes))
    err = n_failed / n_measured
    if err > rules.max_error_rate:
        notes.append(
            f"invalid: {err:.1%} of measured requests failed (limit {rules.max_error_rate:.1%})"
        )
    over = n_overflow / n_measured
    if over > rules.max_context_overflow_share:
        notes.append(
            f"invalid: {over:.1%} of measured requests overflowed the context window (limit "
            f"{rules.max_context_overflow_share:.1%}); scale contexts down or use a larger window"
        )
    valid = not diagnostic and not any(n.startswith("invalid") for n in notes)
    return Verdict(valid, diagnostic, tuple(notes))
