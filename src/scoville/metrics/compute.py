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
from scoville.metrics.samples import percentile_columns, point_margin
from scoville.metrics.table import INVALID_FAILURE_RATE, PERCENTILES
from scoville.records.model import ErrorKind, PointWindow, RequestRecord
from scoville.spec.model import LoadSpec, PointValidity

NS = 1e9
_DEFAULT_VALIDITY = PointValidity()


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


def e2e_interactivity_stats(e2e_osl: Sequence[tuple[float, int]]) -> dict[str, float | None]:
    """E2E-normalised interactivity (see the table): pX = 1 / pX(E2E_i / OSL_i), tail-aligned
    like intvty; requests without output tokens are excluded."""
    per_token = [e2e / osl for e2e, osl in e2e_osl if osl > 0 and e2e > 0]
    if not per_token:
        return {f"{k}_intvty_e2e": None for k in ("mean", *PERCENTILES)}
    arr = np.asarray(per_token, dtype=np.float64)
    pct = np.percentile(arr, list(PERCENTILES.values()))
    out: dict[str, float | None] = {"mean_intvty_e2e": float(np.mean(1.0 / arr))}
    out.update({f"{k}_intvty_e2e": float(1.0 / v) for k, v in zip(PERCENTILES, pct, strict=True)})
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
    validity: PointValidity = _DEFAULT_VALIDITY
    stopping: LoadSpec | None = None  # its target margin and statistics (statistical stopping)


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


def point_valid(n_ok: int, n_sent: int, diagnostic: bool = False) -> bool:
    """A point is valid when some request succeeded, at most INVALID_FAILURE_RATE of the
    measured requests failed, and its window is not diagnostic (e.g. too short)."""
    failure_rate = (n_sent - n_ok) / n_sent if n_sent else 1.0
    return n_ok > 0 and failure_rate <= INVALID_FAILURE_RATE and not diagnostic


def stream_liveness(records: Sequence[RequestRecord], window: PointWindow) -> float | None:
    """How far into the measured window streamed content was still seen: (last output frame
    of a measured request - window start) / window length, capped at 1 (None: no frame, or
    an empty window). AgentX's liveness rule asks for at least 0.95."""
    last_ns = max(
        (r.chunk_ns[-1] for r in records if r.phase == "measure" and r.chunk_ns), default=None
    )
    length_ns = window.end_ns - window.start_ns
    if last_ns is None or length_ns <= 0:
        return None
    return min(1.0, max(0.0, (last_ns - window.start_ns) / length_ns))


def invalid_reasons(
    n_ok: int, n_sent: int, window: PointWindow, rules: PointValidity, n_cancelled: int = 0
) -> tuple[str, ...]:
    """Why a point is not valid, one line per broken rule (empty: valid), each starting with a
    short tag and a colon. Rules: the run finished the point (`partial`), some request
    succeeded (`no success`), at most `max_failure_rate` of the measured requests failed,
    cancelled ones aside (`failures`), the window is at least `min_window_s` (`short window`),
    at least `min_measured_requests` were measured (`few requests`), and the window is not
    diagnostic (`diagnostic`, with the window's notes). (A fixed-sequence window closes at the
    last measured completion, so AgentX's liveness rule, `stream_liveness`, is applied to
    agentic points, whose window is a fixed duration.)"""
    reasons: list[str] = []
    if window.partial:
        reasons.append(f"partial: the run stopped after {window.sent} measured requests were sent")
    n_failed = n_sent - n_ok - n_cancelled
    if n_ok == 0:
        reasons.append(f"no success: none of {n_sent} measured requests succeeded")
    elif n_failed / n_sent > rules.max_failure_rate:
        reasons.append(
            f"failures: {n_failed / n_sent:.1%} of measured requests failed "
            f"(limit {rules.max_failure_rate:.1%})"
        )
    window_s = (window.end_ns - window.start_ns) / NS
    if window_s < rules.min_window_s:
        reasons.append(
            f"short window: {window_s:.3g} s, under validity.min_window_s = "
            f"{rules.min_window_s:g} s"
        )
    if n_sent < rules.min_measured_requests:
        reasons.append(
            f"few requests: {n_sent} measured, under validity.min_measured_requests = "
            f"{rules.min_measured_requests}"
        )
    if window.diagnostic:
        reasons.append("diagnostic: " + ("; ".join(window.notes) or "the window is too short"))
    return tuple(reasons)


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


def _connection_columns(ok: Sequence[RequestRecord]) -> dict[str, Any]:
    """TTFT from the client's send (connection set-up included) and the set-up itself."""
    return {
        **stats([(r.chunk_ns[0] - r.send_ns) / NS for r in ok if r.send_ns], "ttft_from_send"),
        **stats([r.connect_ms / 1e3 for r in ok if r.connect_ms is not None], "connect"),
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
    n_cancelled = sum(1 for r in measured if r.error == ErrorKind.CANCELLED)
    reasons = invalid_reasons(len(ok), len(measured), window, declared.validity, n_cancelled)
    usage_flagged = sum(1 for r in ok if r.usage_issue)
    if usage_flagged:
        reasons = (
            *reasons,
            f"usage: {usage_flagged} request(s) had server usage counts that failed the checks "
            "(type, sign, max_tokens, frames, local count); records name each issue",
        )
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
        invalid_reasons=reasons,
        window_s=window_s,
        errors=_error_counts(measured),
        **_latency_columns(lats),
        **_connection_columns(ok),
        usage_flagged=usage_flagged,
        **_throughputs(ok, window_s, declared),
        goodput_req_per_s=good / window_s if has_slo and window_s > 0 else None,
        input_mismatch=sum(
            1 for r in ok if r.token_source == "usage" and r.input_tokens != r.expected_input_tokens
        ),
        cache_hit_rate=sum(r.cached_tokens or 0 for r in cached) / cached_in if cached_in else None,
        token_sources=tuple(sorted({r.token_source for r in ok})),
        **_e2e_interactivity(lats, ok),
        extra=_sample_columns(lats),
        **_margin_columns(lats, declared),
    )


def _e2e_interactivity(
    lats: Sequence[RequestLatency], ok: Sequence[RequestRecord]
) -> dict[str, Any]:
    """E2E-normalised interactivity of the point's successful requests."""
    return e2e_interactivity_stats(
        [(x.e2e_s, r.output_tokens) for x, r in zip(lats, ok, strict=True)]
    )


def _sample_columns(lats: Sequence[RequestLatency]) -> dict[str, object]:
    """Sample counts, 95 % percentile intervals and few-sample flags of TTFT, TPOT and E2E."""
    tpots = [x.tpot_s for x in lats if x.tpot_s is not None]
    return percentile_columns(
        {"ttft": [x.ttft_s for x in lats], "tpot": tpots, "e2e": [x.e2e_s for x in lats]}
    )


def _margin_columns(lats: Sequence[RequestLatency], declared: Declared) -> dict[str, Any]:
    """`stop_margin` and `margin_reached` when the spec sets a target margin."""
    if declared.stopping is None:
        return {}
    tpots = [x.tpot_s for x in lats if x.tpot_s is not None]
    values = {"ttft": [x.ttft_s for x in lats], "tpot": tpots, "e2e": [x.e2e_s for x in lats]}
    return point_margin(values, declared.stopping)


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
