"""Point ROWs out as AIPerf profile exports (profile_export_aiperf.json), the inverse of
`importers.rows_from_aiperf`, so results move between the tools both ways.

AIPerf writes one export per load level; we write one per point. Latencies go out in ms.
AIPerf's `inter_token_latency` is our per-request TPOT. Its per-user throughput percentiles are
ascending percentiles of 1/ITL, not our tail-aligned ones, so only the average (our
`mean_intvty`) and the median (equal under both conventions) are written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scoville.analysis.rows import Row, num

_LATENCIES = {
    "time_to_first_token": "ttft",
    "request_latency": "e2e",
    "inter_token_latency": "tpot",
}
_STATS = {"avg": "mean", "p50": "median", "p90": "p90", "p99": "p99"}


def _metric(unit: str, **stats: float | None) -> dict[str, Any] | None:
    got = {k: v for k, v in stats.items() if v is not None}
    return {"unit": unit, **got} if got else None


def _point(row: Row) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    for theirs, stem in _LATENCIES.items():
        stats = {k: num(row, f"{ours}_{stem}") for k, ours in _STATS.items()}
        doc[theirs] = _metric("ms", **{k: v * 1e3 for k, v in stats.items() if v is not None})
    doc["output_token_throughput_per_user"] = _metric(
        "tokens/sec/user", avg=num(row, "mean_intvty"), p50=num(row, "median_intvty")
    )
    window = num(row, "window_s")
    for theirs, ours, unit in (
        ("request_throughput", "req_per_s", "requests/sec"),
        ("output_token_throughput", "output_tok_per_s", "tokens/sec"),
        ("total_token_throughput", "total_tok_per_s", "tokens/sec"),
        ("benchmark_duration", "window_s", "sec"),
        ("request_count", "n_ok", "requests"),
        ("input_sequence_length", "isl", "tokens"),
        ("output_sequence_length", "osl", "tokens"),
    ):
        doc[theirs] = _metric(unit, avg=num(row, ours))
    for theirs, rate in (("total_isl", "input_tok_per_s"), ("total_osl", "output_tok_per_s")):
        r = num(row, rate)
        doc[theirs] = _metric("tokens", avg=r * window if r is not None and window else None)
    return {k: v for k, v in doc.items() if v is not None}


def _telemetry(row: Row) -> dict[str, Any] | None:
    w, n = num(row, "power_w_per_accelerator"), int(num(row, "n_accelerators") or 1)
    if w is None or row.get("power_boundary") != "board-measured":
        return None
    gpus = {
        f"gpu_{i}": {"gpu_index": i, "metrics": {"gpu_power_usage": {"unit": "W", "avg": w}}}
        for i in range(n)
    }
    return {"endpoints": {"scoville": {"gpus": gpus}}}


def rows_to_aiperf(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """One AIPerf profile export per point (invalid points are marked `was_cancelled`)."""
    out: list[dict[str, Any]] = []
    for row in rows:
        doc = _point(row)
        errors = row.get("errors") if isinstance(row.get("errors"), dict) else {}
        doc["error_summary"] = [
            {"error_details": {"type": kind}, "count": count}
            for kind, count in sorted((errors or {}).items())
        ]
        doc["was_cancelled"] = row.get("valid") is False
        loadgen: dict[str, Any] = {}
        if row.get("conc") is not None:
            loadgen["concurrency"] = int(num(row, "conc") or 0)
        if row.get("request_rate") is not None:
            loadgen["request_rate"] = num(row, "request_rate")
        doc["input_config"] = {
            "endpoint": {"model_names": [str(row.get("model", "unknown"))], "streaming": True},
            "loadgen": loadgen,
        }
        tel = _telemetry(row)
        if tel is not None:
            doc["telemetry_data"] = tel
        out.append(doc)
    return out
