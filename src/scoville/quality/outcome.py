"""From the passes to `quality.json`: per-item rows, counts, the three instruments, verdicts.

Counts add up by construction: per side, ok + failed = sent; over judged items, right + wrong
+ failed = items. A failed request counts as failed (not as wrong, and never dropped); for the
accuracy comparison it is not a right answer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from statistics import fmean
from typing import Any

from scoville.quality.agreement import first_divergence, token_agreement
from scoville.quality.divergence import kl_tv, summarize, top_token
from scoville.quality.items import Item
from scoville.quality.passes import Passes, walk
from scoville.quality.probe import Generation
from scoville.quality.scoring import Score, score
from scoville.quality.stats import (
    MLPERF_MARGIN,
    AccuracyVerdict,
    Verdict,
    accuracy_verdict,
    bootstrap_mean,
    token_ratio_ok,
)

SCHEMA = "scoville.quality/1"
NOT_AVAILABLE = "not available from this server"


def side_row(gen: Generation, item: Item) -> tuple[dict[str, Any], Score | None]:
    sc = score(item, gen.text) if gen.ok and item.judged else None
    return {
        "text": gen.text,
        "extracted": sc.extracted if sc else None,
        "right": (sc.right if sc else False) if item.judged and gen.ok else None,
        "checks": sc.checks if sc else {},
        "failed": gen.error,
        "completion_tokens": _n_tokens(gen),
        "latency_ms": round(gen.latency_ns / 1e6, 3),
    }, sc


def _n_tokens(gen: Generation) -> int | None:
    if gen.completion_tokens is not None:
        return gen.completion_tokens
    return len(gen.tokens) if gen.tokens is not None else None


def _logprob_row(pairs: Sequence[tuple[Any, Any]]) -> dict[str, Any] | None:
    if not pairs:
        return None
    kts = [kl_tv(r, c) for r, c in pairs]
    mism = sum(1 for r, c in pairs if top_token(r) != top_token(c))
    return {
        "positions": len(pairs),
        "kl_mean": fmean(k for k, _ in kts),
        "tv_mean": fmean(t for _, t in kts),
        "top_mismatch": mism,
    }


def item_row(
    item: Item,
    reference: dict[str, Any] | None,
    candidate: dict[str, Any],
    divergence_position: int | None = None,
    tokens_compared: int = 0,
    logprob: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The one shape of an item's row in quality.json (both sides, or the target alone)."""
    return {
        "id": item.item_id,
        "task": item.task,
        "kind": item.kind,
        "prompt": item.prompt,
        "answer": item.answer if item.answer is not None else item.expect,
        "reference": reference,
        "candidate": candidate,
        "divergence_position": divergence_position,
        "tokens_compared": tokens_compared,
        "logprob": logprob,
    }


def item_rows(p: Passes) -> list[dict[str, Any]]:
    """One row per item: prompt id, both outputs, extracted answers, correctness, divergence
    position and logprob scores."""
    rows = []
    for i, item in enumerate(p.items):
        ref, cand = p.reference[i], p.candidate[i]
        both = ref.ok and cand.ok and ref.tokens is not None and cand.tokens is not None
        pairs = walk(ref, p.segments[i])[0] if i in p.segments else []
        rows.append(
            item_row(
                item,
                side_row(ref, item)[0],
                side_row(cand, item)[0],
                first_divergence(ref.tokens or (), cand.tokens or ()) if both else None,
                len(ref.tokens or ()) if both else 0,
                _logprob_row(pairs) if p.same_tokenizer else None,
            )
        )
    return rows


def side_counts(rows: Sequence[dict[str, Any]], side: str) -> dict[str, int]:
    """One side's counts: sent = ok + failed (requests); items (judged) = right + wrong +
    failed_items. A failed request counts as failed, never as wrong, never dropped."""
    judged = [r[side] for r in rows if r["kind"] != "free"]
    return {
        "sent": len(rows),
        "ok": sum(1 for r in rows if r[side]["failed"] is None),
        "failed": sum(1 for r in rows if r[side]["failed"] is not None),
        "items": len(judged),
        "right": sum(1 for s in judged if s["right"] is True),
        "wrong": sum(1 for s in judged if s["right"] is False),
        "failed_items": sum(1 for s in judged if s["failed"] is not None),
    }


def _plain(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    return obj


def accuracy_block(rows: Sequence[dict[str, Any]], margin_rel: float, seed: int) -> dict[str, Any]:
    judged = [r for r in rows if r["kind"] != "free"]
    ref = [r["reference"]["right"] is True for r in judged]
    cand = [r["candidate"]["right"] is True for r in judged]
    failed = sum(
        1 for r in judged if r["reference"]["failed"] or r["candidate"]["failed"]
    )  # fmt: skip
    v: AccuracyVerdict = accuracy_verdict(
        ref, cand, failed / max(1, len(judged)), margin_rel, seed=seed
    )
    by_task: dict[str, dict[str, float]] = {}
    for task in sorted({r["task"] for r in judged}):
        sel = [(a, b) for a, b, r in zip(ref, cand, judged, strict=True) if r["task"] == task]
        by_task[task] = {
            "items": len(sel),
            "reference": sum(a for a, _ in sel) / len(sel),
            "candidate": sum(b for _, b in sel) / len(sel),
        }
    return {
        "verdict": v.verdict,
        "reason": v.reason,
        "margin_rel": margin_rel,
        "reference_accuracy": v.table.ref_accuracy,
        "candidate_accuracy": v.table.cand_accuracy,
        "reference_interval": _plain(bootstrap_mean([float(x) for x in ref], seed=seed)),
        "candidate_interval": _plain(bootstrap_mean([float(x) for x in cand], seed=seed)),
        "table": _plain(v.table),
        "mcnemar_p": v.mcnemar_p,
        "diff_interval": _plain(v.diff_interval),
        "tost": _plain(v.tost),
        "needed_items": v.needed_items,
        "by_task": by_task,
    }


def tokens_block(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """MLPerf's rule over items both sides answered: mean generated tokens within 90-110 %."""
    both = [
        (r["reference"]["completion_tokens"], r["candidate"]["completion_tokens"])
        for r in rows
        if r["reference"]["failed"] is None and r["candidate"]["failed"] is None
    ]
    both = [(a, b) for a, b in both if a is not None and b is not None]
    if not both:
        return {"ok": None, "reason": "no item with token counts on both sides"}
    ref_mean, cand_mean = fmean(a for a, _ in both), fmean(b for _, b in both)
    return {
        "reference_mean": ref_mean,
        "candidate_mean": cand_mean,
        "ratio": cand_mean / ref_mean if ref_mean else None,
        "ok": token_ratio_ok(ref_mean, cand_mean),
    }


def _agreement(pairs: Sequence[tuple[Sequence[Any], Sequence[Any]]], seed: int) -> dict[str, Any]:
    a = token_agreement(pairs, seed=seed)
    return {
        "verdict": a.verdict,
        "items": a.items,
        "prefix_share": _plain(a.prefix_share),
        "whole_match": _plain(a.whole_match),
        "divergence_median": a.divergence_median,
        "divergence_positions": list(a.divergence_positions),
        "still_matching": [list(x) for x in a.still_matching],
    }


def _token_pairs(ref: Sequence[Generation], other: Sequence[Generation]) -> list[tuple[Any, Any]]:
    return [
        (a.tokens, b.tokens)
        for a, b in zip(ref, other, strict=True)
        if a.ok and b.ok and a.tokens is not None and b.tokens is not None
    ]


def agreement_block(p: Passes, seed: int) -> dict[str, Any]:
    if not p.same_tokenizer:
        return {"verdict": None, "refused": p.tokenizer_note}
    pairs = _token_pairs(p.reference, p.candidate)
    if not pairs:
        return {"verdict": None, "refused": "no item has tokens from both sides"}
    return {**_agreement(pairs, seed), "tokenizer": p.tokenizer_note}


def divergence_block(p: Passes) -> dict[str, Any]:
    if not p.same_tokenizer:
        return {"refused": p.tokenizer_note}
    if p.logprob_gaps is not None:
        return {"not_available": f"{NOT_AVAILABLE} ({p.logprob_gaps})"}
    pairs = [pr for i, segs in p.segments.items() for pr in walk(p.reference[i], segs)[0]]
    d = summarize(pairs)
    if d is None:
        return {"not_available": "no position had top-k lists on both sides"}
    return {**dataclasses.asdict(d), "tail": "k+1 buckets, see docs", "continuation": p.resume_note}


def batch_block(p: Passes, seed: int) -> dict[str, Any] | None:
    if p.batched is None:
        return None
    single, batched = p.batched
    pairs = _token_pairs(single, batched)
    if not pairs:
        return {"verdict": None, "refused": "no item has tokens in both passes"}
    same_text = sum(
        1 for a, b in zip(single, batched, strict=True) if a.ok and b.ok and a.text == b.text
    )
    return {**_agreement(pairs, seed), "same_text_items": same_text}


def overall(blocks: Sequence[Verdict | None], tokens_ok: bool | None) -> Verdict:
    """Not equivalent when any instrument says so (or tokens per sample fall outside
    90-110 %); equivalent when every measured instrument says so; else not enough evidence."""
    measured = [b for b in blocks if b is not None]
    if "not equivalent" in measured or tokens_ok is False:
        return "not equivalent"
    if measured and all(b == "equivalent" for b in measured):
        return "equivalent"
    return "not enough evidence"


def build_report(
    p: Passes, labels: dict[str, str], margin_rel: float = MLPERF_MARGIN, seed: int = 0
) -> dict[str, Any]:
    """The whole `quality.json` document."""
    rows = item_rows(p)
    acc = accuracy_block(rows, margin_rel, seed)
    agree = agreement_block(p, seed)
    toks = tokens_block(rows)
    counts = {side: side_counts(rows, side) for side in ("reference", "candidate")}
    verdicts = [acc["verdict"] if counts["reference"]["items"] else None, agree.get("verdict")]
    return {
        "schema": SCHEMA,
        "reference": labels.get("reference"),
        "candidate": labels.get("candidate"),
        "verdict": overall(verdicts, toks.get("ok")),
        "counts": counts,
        "accuracy": acc,
        "tokens_per_sample": toks,
        "token_agreement": agree,
        "logprob_divergence": divergence_block(p),
        "batch_invariance": batch_block(p, seed),
        "wall_s": p.wall_s,
        "items": rows,
    }
