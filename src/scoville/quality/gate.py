"""`spec.quality` in a benchmark run: refused before anything is measured where the quality
pass cannot work (the twin, a metric other than accuracy, no bar to qualify against), so a
run never looks qualified when nothing was checked.
"""

from __future__ import annotations

from scoville.errors import SpecError
from scoville.spec.model import BenchmarkSpec

TWIN_REFUSAL = (
    "The twin has no tokens to judge: it simulates token counts and timings, never text, so "
    "quality cannot be measured on it. Compare real targets: 'embedded', 'embedded?kv=q4_0', "
    "'embedded?spec=ngram' or http://HOST:PORT."
)
METRICS = ("accuracy",)


def check_run_quality(spec: BenchmarkSpec) -> None:
    """Raise a `SpecError` (one paragraph, naming the field) when the run's quality pass
    cannot work; return silently when `quality.task` is unset or the pass can run."""
    q = spec.quality
    if q.task is None:
        return
    for name, url in (("target.url", spec.target.url), ("quality.reference", q.reference)):
        if url is not None and url.startswith("twin:"):
            raise SpecError(f"{name}={url} with quality.task={q.task}: {TWIN_REFUSAL}")
    if q.metric not in METRICS:
        raise SpecError(
            f"quality.metric={q.metric}: a run's quality pass measures 'accuracy' (the share of "
            "judged items answered right); set quality.metric=accuracy or leave it unset."
        )
    if q.threshold is None and q.reference is None:
        raise SpecError(
            f"quality.task={q.task} sets no bar to qualify against: set quality.threshold "
            "(the lowest acceptable pass rate, e.g. 0.5) or quality.reference (a target whose "
            "pass rate the run must keep, e.g. embedded), or both. To compare two targets "
            "without a sweep, use `scoville quality --reference A --candidate B`."
        )
