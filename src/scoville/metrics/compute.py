"""Pure functions from records to numbers: per-request latencies and per-point summary rows.

Definitions live in `scoville.metrics.table`; this module implements them. A summary row is a
typed `SummaryRow` (times in seconds, throughputs in tokens/s) whose names follow InferenceX
where the quantity is the same (see the table).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from scoville.metrics.row import SummaryRow
from scoville.metrics.table import INVALID_FAILURE_RATE, PERCENTILES
from scoville.records.model import PointWindow, RequestRecord

NS = 1e9


@dataclass(frozen=True, slots=True)
class RequestLatency:
    """Latencies of one successful request, in seconds."""

    ttft_s: float
    e2e_s: float
    tpot_s: float | None  # None when the request produced a single token
    itl_chunk_s: tuple[float, ...]
    itl_token_s: tuple[float, ...]


def request_latency(r: RequestRecord) -> RequestLatency:
    """TTFT, E2E, TPOT and both ITL conventions of a successful record (see the table)."""
    if not r.chunk_ns:
        raise ValueError(f"record {r.request_id} has no output frame")
    ttft_ns = r.chunk_ns[0] - r.start_ns
    e2e_ns = r.end_ns - r.start_ns
    tpot = (e2e_ns - ttft_ns) / (r.output_tokens - 1) / NS if r.output_tokens > 1 else None
    gaps = np.diff(np.asarray(r.chunk_ns, dtype=np.int64))
    tokens = np.asarray(r.chunk_tokens[1:], dtype=np.int64)
    if len(tokens) != len(gaps):
        raise ValueError(f"record {r.request_id}: chunk_tokens and chunk_ns differ in length")
    # each frame's gap shared by its tokens, repeated once per token (at least once)
    per_token = cast(list[float], np.repeat(gaps / tokens / NS, np.maximum(tokens, 1)).tolist())
    return RequestLatency(
        ttft_ns / NS, e2e_ns / NS, tpot, tuple((gaps / NS).tolist()), tuple(per_token)
    )


def stats(values: Sequence[float], prefix: str = "") -> dict[str, float | None]:
    """mean, median, p90, p99, p999 of `values` (None for all when empty)."""
    keys = ["mean", *PERCENTILES]
    if len(values) == 0:
        return {f"{k}_{prefix}": None for k in keys}
    arr = np.asarray(values, dtype=np.float64)
    out: dict[str, float | None] = {f"mean_{prefix}": float(arr.mean())}
    pct = np.percentile(arr, list(PERCENTILES.values()))
    for k, v in zip(PERCENTILES, pct, strict=True):
        out[f"{k}_{prefix}"] = float(v)
    return out


def interactivity_stats(tpots_s: Sequence[float]) -> dict[str, float | None]:
    """mean = mean(1/tpot); pX = 1/pX(tpot): the rate that X% of requests got at least."""
    tp = [t for t in tpots_s if t > 0]
    if not tp:
        return {f"{k}_intvty": None for k in ["mean", *PERCENTILES]}
    arr = np.asarray(tp, dtype=np.float64)
    out: dict[str, float | None] = {"mean_intvty": float(np.mean(1.0 / arr))}
    pct = np.percentile(arr, list(PERCENTILES.values()))
    for k, v in zip(PERCENTILES, pct, strict=True):
        out[f"{k}_intvty"] = float(1.0 / v)
    return out


@dataclass(frozen=True, slots=True)
class Declared:
    """What the spec declares for normalisation and goodput."""

    n_accelerators: int = 1
    power_w_per_accelerator: float | None = None
    power_boundary: str = "package-tdp"
    slo_ttft_s: float | None = None
    slo_tpot_s: float | None = None
    slo_e2e_s: float | None = None


def _meets_slo(lat: RequestLatency, d: Declared) -> bool:
    if d.slo_ttft_s is not None and lat.ttft_s > d.slo_ttft_s:
        return False
    if d.slo_tpot_s is not None and lat.tpot_s is not None and lat.tpot_s > d.slo_tpot_s:
        return False
    return not (d.slo_e2e_s is not None and lat.e2e_s > d.slo_e2e_s)


def per_kw(tok_per_s_per_accelerator: float, w_per_accelerator: float) -> float:
    """Tokens/s per kW = tokens/s per accelerator / (W per accelerator / 1000): the one
    definition of every per-kW number (declared, measured or renormalised power)."""
    return tok_per_s_per_accelerator / (w_per_accelerator / 1000.0)


# A point needs this many successful measured requests to have numbers at all. (How many a
# percentile needs is the spec's choice: docs/DESIGN.md gives the embedded default's counts.)
MIN_OK_REQUESTS = 1


def invalid_reasons(
    n_ok: int, n_sent: int, diagnostic: bool = False, errors: Mapping[str, int] | None = None
) -> list[str]:
    """Why the point's numbers cannot be trusted, one short phrase each (empty = valid): more
    than INVALID_FAILURE_RATE of the measured requests failed, fewer than MIN_OK_REQUESTS
    succeeded, or the window is diagnostic (e.g. too short)."""
    reasons: list[str] = []
    failed = n_sent - n_ok
    if n_sent and failed / n_sent > INVALID_FAILURE_RATE:
        kinds = ", ".join(f"{k} {v}" for k, v in sorted((errors or {}).items()))
        reasons.append(
            f"{failed} of {n_sent} requests failed"
            f" (> {INVALID_FAILURE_RATE:.0%}{': ' + kinds if kinds else ''})"
        )
    if n_ok < MIN_OK_REQUESTS:
        reasons.append(f"too few samples ({n_ok} successful requests)")
    if diagnostic:
        reasons.append("diagnostic window (too short to publish)")
    return reasons


def point_valid(n_ok: int, n_sent: int, diagnostic: bool = False) -> bool:
    """A point is valid when `invalid_reasons` finds nothing."""
    return not invalid_reasons(n_ok, n_sent, diagnostic)


def _throughputs(ok: Sequence[RequestRecord], window_s: float, d: Declared) -> dict[str, Any]:
    out_tok = sum(r.output_tokens for r in ok)
    in_tok = sum(r.input_tokens for r in ok)
    w = window_s if window_s > 0 else float("nan")
    row: dict[str, Any] = {
        "req_per_s": len(ok) / w,
        "output_tok_per_s": out_tok / w,
        "input_tok_per_s": in_tok / w,
        "total_tok_per_s": (in_tok + out_tok) / w,
        "n_accelerators": d.n_accelerators,
    }
    watts = d.power_w_per_accelerator
    row["power_w_per_accelerator"] = watts
    row["power_boundary"] = d.power_boundary if watts else None
    for side, key in (
        ("", "total_tok_per_s"),
        ("output_", "output_tok_per_s"),
        ("input_", "input_tok_per_s"),
    ):
        row[f"{side}tput_per_gpu"] = row[key] / d.n_accelerators
        row[f"{side}tput_per_kw"] = per_kw(row[f"{side}tput_per_gpu"], watts) if watts else None
    return row


def _latency_columns(lats: Sequence[RequestLatency]) -> dict[str, Any]:
    """mean/median/p90/p99/p999 of TTFT, TPOT, both ITLs, E2E and interactivity."""
    tpots = [x.tpot_s for x in lats if x.tpot_s is not None]
    return {
        **stats([x.ttft_s for x in lats], "ttft"),
        **stats(tpots, "tpot"),
        **stats([g for x in lats for g in x.itl_token_s], "itl"),
        **stats([g for x in lats for g in x.itl_chunk_s], "itl_chunk"),
        **stats([x.e2e_s for x in lats], "e2e"),
        **interactivity_stats(tpots),
    }


def summarize_point(
    records: Sequence[RequestRecord], window: PointWindow, declared: Declared
) -> SummaryRow:
    """The summary row of one point from its measured records (warmup/primer excluded)."""
    measured = [r for r in records if r.phase == "measure" and r.point_id == window.point_id]
    ok = [r for r in measured if r.ok]
    lats = [request_latency(r) for r in ok]
    window_s = (window.end_ns - window.start_ns) / NS
    good = sum(1 for x in lats if _meets_slo(x, declared))
    has_slo = any(
        v is not None for v in (declared.slo_ttft_s, declared.slo_tpot_s, declared.slo_e2e_s)
    )
    cached = [r for r in ok if r.cached_tokens is not None]
    cached_in = sum(r.input_tokens for r in cached)
    reasons = invalid_reasons(len(ok), len(measured), window.diagnostic, _error_counts(measured))
    return SummaryRow(
        point_id=window.point_id,
        mode=window.mode,
        level=window.level,
        conc=int(window.level) if window.mode != "rate" else None,
        request_rate=window.level if window.mode == "rate" else None,
        n_sent=len(measured),
        n_ok=len(ok),
        n_failed=len(measured) - len(ok),
        failure_rate=(len(measured) - len(ok)) / len(measured) if measured else 1.0,
        valid=not reasons,
        invalid_reason="; ".join(reasons) or None,
        window_s=window_s,
        errors=_error_counts(measured),
        **_latency_columns(lats),
        **_throughputs(ok, window_s, declared),
        goodput_req_per_s=good / window_s if has_slo and window_s > 0 else None,
        input_mismatch=sum(
            1 for r in ok if r.token_source == "usage" and r.input_tokens != r.expected_input_tokens
        ),
        cache_hit_rate=sum(r.cached_tokens or 0 for r in cached) / cached_in if cached_in else None,
        token_sources=tuple(sorted({r.token_source for r in ok})),
    )


def _error_counts(records: Sequence[RequestRecord]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in records:
        if r.error is not None:
            counts[r.error.value] = counts.get(r.error.value, 0) + 1
    return counts


def summarize(
    records: Sequence[RequestRecord],
    windows: Sequence[PointWindow],
    declared: Declared,
    labels: Mapping[str, Any],
) -> list[SummaryRow]:
    """One row per window, each carrying the run's labels (system, model, precision...)."""
    by_point: dict[str, list[RequestRecord]] = {}
    for r in records:
        by_point.setdefault(r.point_id, []).append(r)
    return [
        summarize_point(by_point.get(w.point_id, []), w, declared).with_labels(labels)
        for w in windows
    ]
