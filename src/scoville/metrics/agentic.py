"""Agentic metrics: pure functions over the records of one lanes point.

What users of agents feel: TTFT of cache-hit vs cache-miss turns, interactivity in both the
AgentX (1/p90 ITL) and InferenceX (1/median TPOT) definitions, end-to-end interactivity that
includes queueing, per-session rollups, and the measured prefix-cache hit rate against what an
unlimited cache would have served. Times in seconds, rates in tokens/s; measured requests only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from itertools import chain
from typing import Any

import numpy as np
import numpy.typing as npt

from scoville.metrics.compute import stream_liveness
from scoville.records.model import ErrorKind, PointWindow, RequestRecord

HIT_SHARE = 0.5  # a turn is a cache hit when at least half its input was (to be) served cached
SERIES_BINS = 10

# Row fields that only agentic points have (added to the foundation's summary rows as they are).
AGENTIC_ONLY = (
    "lanes",
    "overflow_share",
    "n_primers",
    "diagnostic",
    "intvty_agentx",
    "intvty_inferencex",
    "median_e2e_intvty",
    "n_cache_hit",
    "n_cache_miss",
    "median_ttft_hit",
    "p90_ttft_hit",
    "median_ttft_miss",
    "p90_ttft_miss",
    "cache_hit_rate_measured",
    "cache_hit_rate_theoretical",
    "cache_series",
    "n_plays",
    "median_session_makespan",
    "p90_session_makespan",
    "mean_turns_per_play",
    "request_time_share",
    "output_tput_per_accelerator",
    "goodput_ttft_req_per_s",
)

AGENTIC_METRICS: dict[str, tuple[str, str, str]] = {
    # name: (unit, better, formula)
    "intvty_agentx": ("tok/s", "higher", "1 / p90 of inter-token latencies (AgentX)"),
    "intvty_inferencex": ("tok/s", "higher", "1 / median TPOT (InferenceX)"),
    "median_e2e_intvty": ("tok/s", "higher", "median of output_tokens / (end - scheduled)"),
    "median_ttft_hit": ("s", "lower", "median TTFT of cache-hit turns"),
    "median_ttft_miss": ("s", "lower", "median TTFT of cache-miss turns"),
    "cache_hit_rate_measured": ("1", "higher", "sum cached_tokens / sum input_tokens"),
    "cache_hit_rate_theoretical": ("1", "higher", "sum expected_cached / sum input (unlimited)"),
    "median_session_makespan": ("s", "lower", "median over plays of last end - first start"),
    "output_tput_per_accelerator": ("tok/s", "higher", "output tokens / window / accelerators"),
    "goodput_ttft_req_per_s": ("req/s", "higher", "requests with TTFT <= SLO / window"),
}


Values = Sequence[float] | npt.NDArray[np.float64]


def _pct(xs: Values, q: float) -> float | None:
    return float(np.percentile(np.asarray(xs, dtype=float), q)) if len(xs) else None


def _stats(prefix: str, xs: Values) -> dict[str, float | None]:
    return {
        f"median_{prefix}": _pct(xs, 50),
        f"p90_{prefix}": _pct(xs, 90),
        f"p99_{prefix}": _pct(xs, 99),
    }


def ttft_s(r: RequestRecord) -> float:
    return (r.chunk_ns[0] - r.start_ns) / 1e9


def tpot_s(r: RequestRecord) -> float | None:
    """(last chunk - first chunk) / (output tokens - 1); None for a single-token output."""
    if r.output_tokens < 2 or len(r.chunk_ns) < 2:
        return None
    return (r.chunk_ns[-1] - r.chunk_ns[0]) / 1e9 / (r.output_tokens - 1)


def itls_s(r: RequestRecord) -> list[float]:
    """Gaps between frames, per token the later frame carried."""
    out = []
    for i in range(1, len(r.chunk_ns)):
        gap = (r.chunk_ns[i] - r.chunk_ns[i - 1]) / 1e9
        out.extend([gap / max(1, r.chunk_tokens[i])] * max(1, r.chunk_tokens[i]))
    return out


def all_itls_s(rs: Sequence[RequestRecord]) -> npt.NDArray[np.float64]:
    """`itls_s` of every record, concatenated (vectorised: an hour of agents is tens of
    millions of gaps)."""
    lens = [len(r.chunk_ns) for r in rs]
    if any(n != len(r.chunk_tokens) for n, r in zip(lens, rs, strict=True)):
        return np.asarray([x for r in rs for x in itls_s(r)], dtype=float)
    n = sum(lens)
    if n == 0:
        return np.zeros(0)
    ns = np.fromiter(chain.from_iterable(r.chunk_ns for r in rs), dtype=np.int64, count=n)
    tok = np.fromiter(chain.from_iterable(r.chunk_tokens for r in rs), dtype=np.int64, count=n)
    keep = np.ones(n - 1, dtype=bool)
    firsts = np.cumsum(lens)[:-1]  # each record's first frame: its gap to the previous record
    keep[firsts[firsts > 0] - 1] = False
    gaps_s = (np.diff(ns) / 1e9)[keep]
    per = np.maximum(tok[1:][keep], 1)
    return np.repeat(gaps_s / per, per)


def is_cache_hit(r: RequestRecord) -> bool:
    """Server-reported when the server reports cached tokens, else the workload's expectation."""
    n = max(1, r.input_tokens)
    if r.cached_tokens is not None:
        return r.cached_tokens >= HIT_SHARE * n
    return float(r.tags.get("expected_cached_tokens", 0)) >= HIT_SHARE * n


def measured(records: Sequence[RequestRecord], point_id: str) -> list[RequestRecord]:
    return [r for r in records if r.point_id == point_id and r.phase == "measure"]


def latency_metrics(ok: Sequence[RequestRecord]) -> dict[str, Any]:
    ttfts = [ttft_s(r) for r in ok]
    tpots = [t for r in ok if (t := tpot_s(r)) is not None]
    itls = all_itls_s(ok)
    e2es = [(r.end_ns - r.start_ns) / 1e9 for r in ok]
    e2e_intvty = [
        r.output_tokens / ((r.end_ns - (r.scheduled_ns or r.start_ns)) / 1e9)
        for r in ok
        if r.end_ns > (r.scheduled_ns or r.start_ns)
    ]
    p90_itl, med_tpot = _pct(itls, 90), _pct(tpots, 50)
    return {
        **_stats("ttft", ttfts),
        **_stats("tpot", tpots),
        **_stats("itl", itls),
        **_stats("e2e", e2es),
        "intvty_agentx": 1.0 / p90_itl if p90_itl else None,
        "intvty_inferencex": 1.0 / med_tpot if med_tpot else None,
        "median_e2e_intvty": _pct(e2e_intvty, 50),
    }


def cache_metrics(ok: Sequence[RequestRecord]) -> dict[str, Any]:
    hits = [ttft_s(r) for r in ok if is_cache_hit(r)]
    misses = [ttft_s(r) for r in ok if not is_cache_hit(r)]
    reported = [r for r in ok if r.cached_tokens is not None]
    inp = sum(r.expected_input_tokens for r in ok)
    return {
        "n_cache_hit": len(hits),
        "n_cache_miss": len(misses),
        "median_ttft_hit": _pct(hits, 50),
        "p90_ttft_hit": _pct(hits, 90),
        "median_ttft_miss": _pct(misses, 50),
        "p90_ttft_miss": _pct(misses, 90),
        "cache_hit_rate_measured": (
            sum(r.cached_tokens or 0 for r in reported) / sum(r.input_tokens for r in reported)
            if reported and sum(r.input_tokens for r in reported)
            else None
        ),
        "cache_hit_rate_theoretical": (
            sum(float(r.tags.get("expected_cached_tokens", 0)) for r in ok) / inp if inp else None
        ),
    }


def cache_series(ok: Sequence[RequestRecord], window: PointWindow) -> list[list[float | None]]:
    """[t_s from window start, measured hit rate, theoretical hit rate] per tenth of the window
    (by request start), for a time-series plot."""
    span = max(1, window.end_ns - window.start_ns)
    bins: list[list[RequestRecord]] = [[] for _ in range(SERIES_BINS)]
    for r in ok:
        k = min(SERIES_BINS - 1, max(0, (r.start_ns - window.start_ns) * SERIES_BINS // span))
        bins[k].append(r)
    rows: list[list[float | None]] = []
    for k, rs in enumerate(bins):
        inp = sum(r.input_tokens for r in rs)
        rep = [r for r in rs if r.cached_tokens is not None]
        rows.append(
            [
                (k + 0.5) * span / SERIES_BINS / 1e9,
                sum(r.cached_tokens or 0 for r in rep) / inp if rep and inp else None,
                sum(float(r.tags.get("expected_cached_tokens", 0)) for r in rs) / inp
                if inp
                else None,
            ]
        )
    return rows


def session_metrics(rs: Sequence[RequestRecord]) -> dict[str, Any]:
    """Per-play rollups: makespan (first start to last end), turns, time in the server vs
    recorded think time."""
    plays: dict[Any, list[RequestRecord]] = defaultdict(list)
    for r in rs:
        plays[r.tags.get("play")].append(r)
    spans = [(max(r.end_ns for r in p) - min(r.start_ns for r in p)) / 1e9 for p in plays.values()]
    waiting = sum((r.end_ns - r.start_ns) / 1e9 for r in rs)
    thinking = sum(float(r.tags.get("think_s", 0.0)) for r in rs)
    return {
        "n_plays": len(plays),
        "median_session_makespan": _pct(spans, 50),
        "p90_session_makespan": _pct(spans, 90),
        "mean_turns_per_play": len(rs) / len(plays) if plays else None,
        "request_time_share": waiting / (waiting + thinking) if waiting + thinking else None,
    }


def agentic_point(
    records: Sequence[RequestRecord],
    window: PointWindow,
    n_accelerators: int = 1,
    slo_ttft_s: float | None = None,
    min_stream_liveness: float = 0.95,
) -> dict[str, Any]:
    """All agentic metrics of one lanes point, as a flat row (plus `cache_series`).
    `invalid_reasons` holds the window's verdict notes (failures, context overflow over
    1 %, too short) and, when streamed content stops before `min_stream_liveness` of the
    window (AgentX's liveness rule), a `stalled` line."""
    rs = measured(records, window.point_id)
    ok = [r for r in rs if r.error is None and r.chunk_ns]
    dur_s = max(1e-9, (window.end_ns - window.start_ns) / 1e9)
    out_tok = sum(r.output_tokens for r in ok)
    row: dict[str, Any] = {
        "point_id": window.point_id,
        "mode": "lanes",
        "lanes": window.level,
        "n_sent": len(rs),
        "n_ok": len(ok),
        "n_failed": len(rs) - len(ok),
        "overflow_share": (
            sum(r.error == ErrorKind.CONTEXT_OVERFLOW for r in rs) / len(rs) if rs else 0.0
        ),
        "n_primers": sum(
            1 for r in records if r.point_id == window.point_id and r.phase == "primer"
        ),
        "window_s": dur_s,
        "valid": not window.diagnostic and not any(n.startswith("invalid") for n in window.notes),
        "invalid_reasons": [n for n in window.notes if n.startswith(("invalid", "diagnostic"))],
        "diagnostic": window.diagnostic,
        "output_tok_per_s": out_tok / dur_s,
        "output_tput_per_accelerator": out_tok / dur_s / max(1, n_accelerators),
        "req_per_s": len(ok) / dur_s,
    }
    row |= latency_metrics(ok) | cache_metrics(ok) | session_metrics(rs)
    row["goodput_ttft_req_per_s"] = (
        sum(1 for r in ok if ttft_s(r) <= slo_ttft_s) / dur_s if slo_ttft_s else None
    )
    row["cache_series"] = cache_series(ok, window)
    live = stream_liveness(rs, window)
    if live is not None and live < min_stream_liveness:
        row["valid"] = False
        row["invalid_reasons"].append(
            f"stalled: streamed content was seen only through {live:.1%} of the window "
            f"(AgentX liveness rule: {min_stream_liveness:.0%})"
        )
    return row


def throughput_vs_interactivity(rows: Sequence[dict[str, Any]]) -> list[tuple[float, float, float]]:
    """(lanes, p90-based interactivity, output throughput per accelerator), one per point,
    sorted by lanes: the curve the report draws."""
    pts = [
        (float(r["lanes"]), r["intvty_agentx"], r["output_tput_per_accelerator"])
        for r in rows
        if r.get("intvty_agentx") is not None
    ]
    return sorted(pts)
