"""`spec.quality` in a benchmark run: refused until the run itself performs a quality pass.

A quality target that is parsed and then ignored would let a run look qualified when nothing
was checked; the run stops before measuring and points to `scoville quality` instead.
"""

from __future__ import annotations

from scoville.errors import SpecError
from scoville.spec.model import BenchmarkSpec, QualityTarget


def refuse_unmeasured_quality(spec: BenchmarkSpec) -> None:
    """Raise a `SpecError` when the spec sets any `quality.*` field."""
    if spec.quality == QualityTarget():
        return
    fields = ", ".join(
        f"quality.{k}={v}"
        for k, v in spec.quality.model_dump().items()
        if v != getattr(QualityTarget(), k)
    )
    raise SpecError(
        f"{fields}: `scoville run` does not perform a quality pass, so a quality target here "
        "would be silently unchecked. Measure quality with `scoville quality --reference "
        "TARGET --candidate TARGET --tasks ...` (verdicts in quality.json) and leave quality.* "
        "unset in the run spec."
    )
