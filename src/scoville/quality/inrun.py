"""The quality pass of `scoville run`: the spec's items, greedy, on the run's own target once
the sweep ends (and on `quality.reference` when the spec names one), the status rule that
qualifies the run, its `quality.json` document and the columns every summary row carries.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from statistics import fmean
from typing import Any, Literal

from scoville.bundle.quality import QUALITY_SCHEMA
from scoville.quality.datasets import resolve_tasks
from scoville.quality.items import Item
from scoville.quality.outcome import build_report, item_row, side_counts, side_row
from scoville.quality.passes import Endpoint, PassConfig, run_passes
from scoville.quality.probe import Generation, build_request, generate_all
from scoville.quality.stats import MAX_FAILED_SHARE
from scoville.spec.load import load_spec
from scoville.spec.model import BenchmarkSpec, QualityTarget

Status = Literal["qualified", "not qualified", "not measured"]
NOT_MEASURED: Status = "not measured"
WHEN = "after the sweep, on the same server process, before it is stopped"
TOP_K = 5  # top-k logprobs asked per token (llama.cpp, vLLM and SGLang answer it)
Z95 = 1.959963984540054  # two-sided 95 % normal quantile


def items_of(spec: BenchmarkSpec) -> list[Item]:
    """The run's quality items (empty when `quality.task` is unset); a bad task name or data
    file is a `DataError` raised before anything is measured."""
    q = spec.quality
    return [] if q.task is None else resolve_tasks(q.task, q.items_per_task, spec.seed)


def context_tokens(items: Sequence[Item]) -> int:
    """Tokens one item may hold (prompt + answer), counting at least one token per 2
    characters of prompt, as `scoville quality` sizes its targets."""
    return max((len(it.prompt) // 2 + 16 + it.max_tokens for it in items), default=0)


def reference_spec(spec: BenchmarkSpec, items: Sequence[Item]) -> BenchmarkSpec:
    """The spec that opens `quality.reference`: one slot per quality request in flight,
    a context for the longest item, the model whatever the reference serves."""
    q = spec.quality
    assert q.reference is not None
    return load_spec(
        None,
        [
            f"target.url={q.reference}",
            f"load.concurrency={q.concurrency}",
            f"shape.isl_tokens={max(1, context_tokens(items) - max_tokens(items))}",
            f"shape.osl_tokens={max_tokens(items)}",
        ],
    )


def max_tokens(items: Sequence[Item]) -> int:
    return max((it.max_tokens for it in items), default=1)


def wilson(right: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a pass rate right / n: (centre -+ half) / (1 + z^2/n) with
    centre = p + z^2/(2n), half = z sqrt(p(1-p)/n + z^2/(4n^2)). Never zero-width: 10 of 10
    right gives [0.722, 1], not the [1, 1] a bootstrap would claim."""
    if n <= 0:
        return (0.0, 1.0)
    p = right / n
    denom = 1.0 + z * z / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n))
    lo = 0.0 if right == 0 else max(0.0, (centre - half) / denom)  # exact ends, no rounding
    hi = 1.0 if right == n else min(1.0, (centre + half) / denom)
    return lo, hi


def rate_block(counts: Mapping[str, int]) -> dict[str, Any] | None:
    """The pass rate right / judged items (a failed item is not right) and its 95 % Wilson
    interval; None when no item was judged."""
    n = counts["items"]
    if n == 0:
        return None
    lo, hi = wilson(counts["right"], n)
    return {"estimate": counts["right"] / n, "lo": lo, "hi": hi, "level": 0.95, "n": n}


def status_rule(
    own: Mapping[str, int], ref: Mapping[str, int] | None, q: QualityTarget
) -> tuple[Status, str]:
    """Qualified when the pass rate (point estimate, MLPerf's and InferenceX's convention)
    is at least `threshold` and, with a reference, at least (1 - margin) x the reference's,
    with at most 5 % of judged items failed on either side (a reference that answered
    nothing right sets no bar: not qualified); not measured when no item was judged. The
    reason names the numbers."""
    if own["items"] == 0:
        return NOT_MEASURED, "no judged item (free-text items have no right answer)"
    sides = [("the target", own)] + ([("the reference", ref)] if ref is not None else [])
    for name, c in sides:
        share = c["failed_items"] / max(1, c["items"])
        if share > MAX_FAILED_SHARE:
            return "not qualified", (
                f"{100 * share:.1f} % of {name}'s quality requests failed (over 5 %): its pass "
                "rate is not trusted"
            )
    if ref is not None and ref["right"] == 0:
        return "not qualified", "the reference answered no judged item right: no bar to keep"
    rate = own["right"] / own["items"]
    why = [f"pass rate {rate:.3f} ({own['right']} of {own['items']})"]
    ok = True
    if q.threshold is not None:
        ok = rate >= q.threshold
        why.append(f"{'>=' if ok else '<'} threshold {q.threshold:g}")
    if ref is not None:
        bar = (1.0 - q.margin_rel) * ref["right"] / ref["items"]
        keeps = rate >= bar - 1e-12
        ok = ok and keeps
        why.append(
            f"{'>=' if keeps else '<'} {100 * (1 - q.margin_rel):g} % of the reference's "
            f"{ref['right'] / ref['items']:.3f} ({bar:.3f})"
        )
    return ("qualified" if ok else "not qualified"), " ".join(why)


def _own_logprob(gen: Generation) -> dict[str, Any] | None:
    """Mean logprob of the target's own greedy tokens, where its top-k lists them."""
    if gen.tokens is None or gen.top is None:
        return None
    lps = [top[t] for t, top in zip(gen.tokens, gen.top, strict=False) if t in top]
    return {"positions": len(lps), "mean_logprob": fmean(lps)} if lps else None


def own_rows(items: Sequence[Item], gens: Sequence[Generation]) -> list[dict[str, Any]]:
    """Per item without a reference: prompt id, output, extracted answer, correctness and the
    mean logprob of the output where the server sent logprobs."""
    return [
        item_row(item, None, side_row(gen, item)[0], logprob=_own_logprob(gen))
        for item, gen in zip(items, gens, strict=True)
    ]


def by_task(rows: Sequence[Mapping[str, Any]], side: str) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        if r["kind"] != "free":
            t = out.setdefault(r["task"], {"items": 0, "right": 0})
            t["items"] += 1
            t["right"] += r[side]["right"] is True
    return out


async def measure(
    own: Endpoint, ref: Endpoint | None, items: Sequence[Item], spec: BenchmarkSpec
) -> dict[str, Any]:
    """Run the pass and return the run's `quality.json` document. The run's target answers
    as the candidate; with a reference, the paired instruments of `scoville quality` run too
    (their verdicts under `equivalence`)."""
    q, t0_ns = spec.quality, time.monotonic_ns()
    cfg = PassConfig(seed=spec.seed, top_k=TOP_K, concurrency=q.concurrency, resume_limit=0)
    equivalence: dict[str, Any] | None = None
    if ref is None:
        reqs = [build_request(it, it.item_id, spec.seed, TOP_K) for it in items]
        rows = own_rows(items, await generate_all(own.server, reqs, q.concurrency))
    else:
        passes = await run_passes(ref, own, items, cfg)
        report = build_report(
            passes, {"reference": ref.label, "candidate": own.label}, q.margin_rel, spec.seed
        )
        rows = report.pop("items")
        equivalence = report
    return document(rows, equivalence, spec, own.label, (time.monotonic_ns() - t0_ns) / 1e9)


def document(
    rows: list[dict[str, Any]],
    equivalence: dict[str, Any] | None,
    spec: BenchmarkSpec,
    label: str,
    wall_s: float,
) -> dict[str, Any]:
    """`quality.json` of a run: the status and its reason, the pass rate with its interval,
    counts that add up, per-task rates, the equivalence blocks (with a reference), items."""
    q = spec.quality
    own = side_counts(rows, "candidate")
    ref = side_counts(rows, "reference") if equivalence is not None else None
    status, reason = status_rule(own, ref, q)
    return {
        "schema": QUALITY_SCHEMA,
        "target": label,
        "reference": q.reference,
        "when": WHEN,
        "quality": q.model_dump(mode="json"),
        "status": status,
        "reason": reason,
        "pass_rate": rate_block(own),
        "reference_pass_rate": rate_block(ref) if ref is not None else None,
        "counts": {"target": own, **({"reference": ref} if ref is not None else {})},
        "by_task": by_task(rows, "candidate"),
        "equivalence": equivalence,
        "wall_s": wall_s,
        "items": rows,
    }


def columns(doc: Mapping[str, Any] | None) -> dict[str, Any]:
    """The quality fields of every summary row of the run (the pass is run-wide)."""
    rate = (doc or {}).get("pass_rate") or {}
    return {
        "quality_status": (doc or {}).get("status", NOT_MEASURED),
        "quality_pass_rate": rate.get("estimate"),
        "quality_pass_rate_lo": rate.get("lo"),
        "quality_pass_rate_hi": rate.get("hi"),
    }
