"""Run-to-run noise for regression checks: the request bootstrap of `regression` sees only the
sampling of one run's requests; identical reruns of the baseline show what else moves between
runs (machine load, server state), and a regression must stand out from that too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
from scipy.stats import t as student_t

from scoville.analysis.regression import CheckLine, CheckReport, Verdict

ONE_BASELINE = (
    "one baseline run: the interval covers request sampling only, not run-to-run noise "
    "(machine load, server state); give --baseline twice or more (identical reruns) to measure it"
)


def _key(ln: CheckLine) -> tuple[str, str]:
    return ln.metric, ln.where


def with_run_noise(report: CheckReport, nulls: Sequence[CheckReport]) -> CheckReport:
    """Re-decide `report` (candidate vs the first baseline) with run-to-run noise measured
    from `nulls` (each further baseline replicate checked against that first one: changes an
    identical rerun shows). Per line, s = root mean square of the m replicates' changes (zero
    mean under "no change"); a regression or improvement must also exceed t(0.975, m) x s, the
    two-sided 95 % bound an identical run's change stays within. A line no replicate could
    read (a frontier end a rerun did not reach) pools the same metric's other lines."""
    if not nulls:
        return CheckReport(
            report.candidate,
            report.baseline,
            report.rule,
            report.lines,
            [*report.notes, ONE_BASELINE],
        )
    changes: dict[tuple[str, str], list[float]] = {}
    for null in nulls:
        for ln in null.lines:
            if ln.change is not None and np.isfinite(ln.change):
                changes.setdefault(_key(ln), []).append(ln.change)
                changes.setdefault((ln.metric, "*"), []).append(ln.change)
    lines = []
    for ln in report.lines:
        if ln.verdict not in ("regression", "improvement") or ln.change is None:
            lines.append(ln)
            continue
        seen, where = changes.get(_key(ln), []), "here"
        if not seen:  # a level no rerun could read: the metric's other lines, pooled
            seen, where = changes.get((ln.metric, "*"), []), f"pooled over {ln.metric} lines"
        if not seen:
            lines.append(_noted(ln, "run-to-run noise not measured"))
            continue
        s = float(np.sqrt(np.mean(np.square(seen))))
        bound = float(student_t.ppf(0.975, len(seen))) * s
        note = f"run-to-run {s:.1%} ({where}, {len(seen)} change(s)): bound {bound:.1%}"
        verdict: Verdict = ln.verdict if abs(ln.change) > bound else "no change"
        lines.append(replace(_noted(ln, note), verdict=verdict))
    k = len(nulls) + 1
    note = f"run-to-run noise measured from {k} baseline runs (each line's note gives it)"
    return CheckReport(report.candidate, report.baseline, report.rule, lines, [*report.notes, note])


def _noted(ln: CheckLine, note: str) -> CheckLine:
    return replace(ln, note="; ".join(n for n in (ln.note, note) if n))
