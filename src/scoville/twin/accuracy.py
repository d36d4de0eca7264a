"""The twin's accuracy targets and the errors `twin validate` checks against them: the median
|error| and signed bias of each regime of one split (`by_regime`), and what a split misses of
the targets (`missed_targets`). The comparisons come from `calibration.validate`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median

from scoville.twin.calibration import STALLED, STEADY, THROUGHPUTS, Comparison


@dataclass(frozen=True, slots=True)
class RegimeError:
    regime: str
    metric: str
    n: int
    median_abs_error: float
    bias: float  # median signed error


# The twin's accuracy targets, as `twin validate` checks each split against them: over
# throughput per GPU and median TPOT, the median |error| over all rows at most 10 %, the signed
# bias within +/-5 %, and no regime's median |error| above 20 % (TTFT is reported, not a target)
TARGET_METRICS = ("tput_per_gpu", "tpot_ms")
MEDIAN_TARGET = 0.10
BIAS_TARGET = 0.05
REGIME_TARGET = 0.20
TARGETS = (
    f"median |error| <= {MEDIAN_TARGET:.0%}, bias within +/-{BIAS_TARGET:.0%}, "
    f"no regime above {REGIME_TARGET:.0%}; throughput and TPOT"
)


def missed_targets(regs: Sequence[RegimeError]) -> list[str]:
    """What one split's errors (`by_regime`) miss of the targets, one line each: empty when all
    are met. Every regime counts, however few its rows; each line gives its row count. A target
    metric the split has no row of is not judged, and says so: the targets hold for both."""
    judged = {r.metric for r in regs if r.regime == "all"}
    out = [f"no {m} rows: not judged" for m in TARGET_METRICS if regs and m not in judged]
    for r in regs:
        if r.metric not in TARGET_METRICS:
            continue
        if r.regime == "all" and r.median_abs_error > MEDIAN_TARGET:
            out.append(f"all {r.n} rows' {r.metric} median |error| {r.median_abs_error:.1%}")
        if r.regime == "all" and abs(r.bias) > BIAS_TARGET:
            out.append(f"all {r.n} rows' {r.metric} bias {r.bias:+.1%}")
        if r.regime != "all" and r.median_abs_error > REGIME_TARGET:
            out.append(f"{r.regime} ({r.n} rows) {r.metric} {r.median_abs_error:.1%}")
    return out


def by_regime(
    rows: Sequence[Comparison],
    split: str = "test",
    metrics: Sequence[str] = ("tput_per_gpu", "tpot_ms", "ttft_ms"),
) -> list[RegimeError]:
    """Median |error| and signed bias per regime and metric over one split ("all" first; then,
    where the split has stalled starts, STEADY: all without those rows' throughput)."""
    chosen = [c for c in rows if c.role == split]
    tags = {t for c in chosen for t in c.regimes}
    names = ["all", *([STEADY] if STALLED in tags else []), *sorted(tags)]

    def member(c: Comparison, regime: str) -> bool:
        if regime == STEADY:
            return not (STALLED in c.regimes and c.metric in THROUGHPUTS)
        return regime == "all" or regime in c.regimes

    out = []
    for regime in names:
        for metric in metrics:
            errs = [c.error for c in chosen if c.metric == metric and member(c, regime)]
            if errs:
                out.append(
                    RegimeError(
                        regime, metric, len(errs), median([abs(e) for e in errs]), median(errs)
                    )
                )
    return out
