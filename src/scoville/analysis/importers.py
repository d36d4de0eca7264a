"""Interoperability: InferenceX result rows and AIPerf profile exports in, InferenceX rows out.

Imported data become ordinary point ROWs (times in seconds, throughputs in tokens/s), so
published results enter the same frontiers, comparisons and audits as our own runs. Field
conventions that differ are converted or dropped, never silently mixed (see docs/ANALYSIS.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from scoville.analysis.power import per_kw_fields
from scoville.analysis.rows import Row, num
from scoville.errors import DataError

STATS = ("mean", "median", "p90", "p99", "p999")
# InferenceX (vLLM benchmark_serving) metric stems -> ROW stems.
_IX_STEMS = {"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2el": "e2e"}
_IX_STAT = {
    "mean": "mean",
    "median": "median",
    "p90": "p90",
    "p99": "p99",
    "p99.9": "p999",
    "std": "std",
}


def looks_like_inferencex(doc: Any) -> bool:
    first = doc[0] if isinstance(doc, list) and doc else doc
    if not isinstance(first, dict):
        return False
    flat = (
        {**first, **(first.get("metrics") or {})}
        if isinstance(first.get("metrics"), dict)
        else first
    )
    return "tput_per_gpu" in flat and ("hw" in flat or "hardware" in flat)


# scoville's quality columns, carried through its InferenceX rows in both directions.
QUALITY_FIELDS = (
    "quality_status",
    "quality_pass_rate",
    "quality_pass_rate_lo",
    "quality_pass_rate_hi",
)


def rows_from_inferencex(doc: Any, source: str = "") -> list[Row]:
    """ROWs from InferenceX agg rows (flat, as `utils/process_result.py` writes them) or
    dashboard rows (labels at top level, numbers under `metrics`). One ROW per row.

    Kept as published: `tput_per_gpu`, `output_tput_per_gpu`, `input_tput_per_gpu` (for
    disaggregated rows InferenceX divides output by decode GPUs and input by prefill GPUs).
    Times arrive in seconds. InferenceX's `pX_intvty` is 1 / pX(TPOT), the same tail-aligned
    convention as our metrics table, and is kept (or derived from `pX_tpot`); its `mean_intvty`
    is 1 / mean TPOT, not our mean(1/TPOT), and is dropped.
    """
    items = doc if isinstance(doc, list) else [doc]
    out: list[Row] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise DataError(f"{source}: InferenceX entry {i} is not an object.")
        out.append(_ix_row(item, f"{source}[{i}]"))
    return out


def _ix_row(item: Mapping[str, Any], where: str) -> dict[str, Any]:
    flat: dict[str, Any] = dict(item)
    if isinstance(item.get("metrics"), dict):
        flat.update(item["metrics"])
    tput = num(flat, "tput_per_gpu")
    if tput is None:
        raise DataError(f"{where}: field 'tput_per_gpu' is missing or not a number.")
    conc = int(num(flat, "conc") or 0)
    spec = flat.get("spec_decoding", flat.get("spec_method"))
    if spec is None:
        spec = "mtp" if flat.get("mtp") == "on" else "none"
    row: dict[str, Any] = {
        "point_id": f"c{conc}",
        "mode": "concurrency",
        "level": float(conc),
        "conc": conc,
        "isl": flat.get("isl"),
        "osl": flat.get("osl"),
        "valid": True,
        "system": str(flat.get("hw", flat.get("hardware", "unknown"))),
        "model": str(flat.get("model", flat.get("infmax_model_prefix", "unknown"))),
        "framework": str(flat.get("framework", "unknown")),
        "precision": str(flat.get("precision", "unknown")),
        "spec_decode": str(spec),
        "disagg": bool(flat.get("disagg", False)),
        "n_accelerators": _ix_gpus(flat),
        "source": where,
        "imported_from": "inferencex",
        "tput_per_gpu": tput,
    }
    out_t = num(flat, "output_tput_per_gpu")
    in_t = num(flat, "input_tput_per_gpu")
    if in_t is None and out_t is not None and not row["disagg"]:
        in_t = tput - out_t
    row["output_tput_per_gpu"], row["input_tput_per_gpu"] = out_t, in_t
    for key, value in flat.items():
        stat, _, stem = str(key).partition("_")
        if stem in _IX_STEMS and stat in _IX_STAT and num(flat, key) is not None:
            row[f"{_IX_STAT[stat]}_{_IX_STEMS[stem]}"] = float(value)
    for stat in ("median", "p90", "p99", "p999"):
        theirs = "p99.9" if stat == "p999" else stat
        intvty, tpot = num(flat, f"{theirs}_intvty"), num(flat, f"{theirs}_tpot")
        if intvty is None and tpot:
            intvty = 1.0 / tpot
        if intvty is not None:
            row[f"{stat}_intvty"] = intvty
    _ix_power(flat, row)
    row.update({k: flat[k] for k in QUALITY_FIELDS if flat.get(k) is not None})
    return row


def _ix_gpus(flat: Mapping[str, Any]) -> int | None:
    p, d = num(flat, "num_prefill_gpu"), num(flat, "num_decode_gpu")
    if flat.get("is_multinode") and p is not None and d is not None:
        return int(p + d)
    tp = num(flat, "tp")
    return int(tp) if tp is not None else None


def _board_power(row: dict[str, Any], w: float) -> None:
    """Per-kW fields of `row` at a measured board power of `w` watts per accelerator."""
    row.update(per_kw_fields(row, w, "board-measured"))


def _ix_power(flat: Mapping[str, Any], row: dict[str, Any]) -> None:
    w = num(flat, "avg_power_w")
    if w is None or w <= 0 or flat.get("power_valid") in (0, False):
        return
    _board_power(row, w)


def rows_to_inferencex(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """Our ROWs as InferenceX agg rows (times in seconds; intvty = 1 / the TPOT statistic, as
    InferenceX computes it). Per-kW fields are not part of their format; board-measured power
    goes to `avg_power_w`. Each row adds `valid`, `invalid_reasons` and the quality columns
    (ours)."""
    out: list[dict[str, Any]] = []
    for r in rows:
        n = r.get("n_accelerators")
        d: dict[str, Any] = {
            "hw": r.get("system"),
            "conc": r.get("conc"),
            "model": r.get("model"),
            "framework": r.get("framework"),
            "precision": r.get("precision"),
            "spec_decoding": r.get("spec_decode") or "none",
            "disagg": bool(r.get("disagg")),
            "isl": r.get("isl"),
            "osl": r.get("osl"),
            "is_multinode": False,
            "tp": n,
            "tput_per_gpu": r.get("tput_per_gpu"),
            "output_tput_per_gpu": r.get("output_tput_per_gpu"),
            "input_tput_per_gpu": r.get("input_tput_per_gpu"),
        }
        for ours, theirs in (("ttft", "ttft"), ("tpot", "tpot"), ("itl", "itl"), ("e2e", "e2el")):
            for stat in STATS:
                v = num(r, f"{stat}_{ours}")
                if v is not None:
                    d[f"{'p99.9' if stat == 'p999' else stat}_{theirs}"] = v
        for stat in STATS:
            tpot = num(r, f"{stat}_tpot")
            if tpot:
                d[f"{'p99.9' if stat == 'p999' else stat}_intvty"] = 1.0 / tpot
        if r.get("power_boundary") == "board-measured" and num(r, "power_w_per_accelerator"):
            d["avg_power_w"], d["power_valid"] = r.get("power_w_per_accelerator"), 1
        d["valid"] = r.get("valid")  # not InferenceX fields: why scoville distrusts a point
        d["invalid_reasons"] = list(r.get("invalid_reasons") or [])
        for key in QUALITY_FIELDS:  # ours too: the run's quality pass, read back on import
            d[key] = r.get(key)
        d["quality_status"] = d["quality_status"] or "not measured"
        out.append(d)
    return out


# ---- AIPerf -----------------------------------------------------------------------------

_AIPERF_TIMES = {
    "time_to_first_token": "ttft",
    "inter_token_latency": "tpot",  # AIPerf's ITL is per request (e2e - ttft) / (osl - 1)
    "request_latency": "e2e",
}
_AIPERF_STATS = {"avg": "mean", "p50": "median", "p90": "p90", "p99": "p99"}
_TO_S = {"ms": 1e-3, "s": 1.0, "sec": 1.0, "us": 1e-6, "ns": 1e-9}


def looks_like_aiperf(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("request_latency"), dict)
        and ("time_to_first_token" in doc or "request_throughput" in doc)
    )


def _stat(doc: Mapping[str, Any], metric: str, stat: str = "avg") -> float | None:
    m = doc.get(metric)
    return num(m, stat) if isinstance(m, dict) else None


def rows_from_aiperf(
    doc: Any, source: str = "", n_accelerators: int | None = None, **labels: Any
) -> list[Row]:
    """One ROW from an AIPerf profile_export_aiperf.json (aggregate statistics).

    Latencies are converted to seconds from each metric's `unit`. Interactivity percentiles are
    1 / the ITL (= TPOT) percentile (our tail-aligned convention; AIPerf's per-user throughput
    percentiles run the other way); the mean is `output_token_throughput_per_user` avg.
    Board power comes from `telemetry_data` (mean of the GPUs' `gpu_power_usage` avg), which
    also gives the accelerator count when `n_accelerators` is not passed.
    """
    if not looks_like_aiperf(doc):
        raise DataError(f"{source}: not an AIPerf profile export (no 'request_latency').")
    cfg = _section(doc, "input_config", source)
    names = _section(cfg, "input_config.endpoint", source).get("model_names") or ["unknown"]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise DataError(f"{source}: 'input_config.endpoint.model_names' must be a list of names.")
    loadgen = _section(cfg, "input_config.loadgen", source)
    conc = _positive(loadgen, "concurrency", source, int)
    rate = _positive(loadgen, "request_rate", source, float)
    gpus_w = _aiperf_gpu_power(doc, source)
    n_acc = n_accelerators or (len(gpus_w) if gpus_w else None) or 1
    window = _stat(doc, "benchmark_duration")
    row: dict[str, Any] = {
        "point_id": f"c{conc}" if conc else f"r{rate}",
        "mode": "concurrency" if conc else "rate",
        "level": float(conc or rate or 0),
        "conc": conc,
        "request_rate": rate,
        "isl": _stat(doc, "input_sequence_length"),
        "osl": _stat(doc, "output_sequence_length"),
        "window_s": window,
        "n_ok": _stat(doc, "request_count"),
        "req_per_s": _stat(doc, "request_throughput"),
        "valid": not doc.get("was_cancelled"),
        "n_accelerators": n_acc,
        "model": names[0],
        "source": source,
        "imported_from": "aiperf",
        "system": "unknown",
        "framework": "unknown",
        "precision": "unknown",
        "spec_decode": "unknown",
        "disagg": False,
    }
    row.update(labels)
    _aiperf_latencies(doc, row)
    _aiperf_throughput(doc, row, window, n_acc)
    if gpus_w:
        w = sum(gpus_w) / len(gpus_w)
        _board_power(row, w)
    return [row]


def _obj(value: Any, dotted: str, source: str) -> Mapping[str, Any]:
    """`value` when it is an object, {} when None, else a DataError naming the field."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DataError(
            f"{source}: AIPerf field '{dotted}' must be an object, got {type(value).__name__}."
        )
    return value


def _section(doc: Mapping[str, Any], dotted: str, source: str) -> Mapping[str, Any]:
    """The object under the last part of `dotted` in `doc` (see `_obj`)."""
    return _obj(doc.get(dotted.rsplit(".", 1)[-1]), dotted, source)


def _positive(
    loadgen: Mapping[str, Any], key: str, source: str, kind: type[int] | type[float]
) -> Any:
    """`input_config.loadgen.<key>` as a positive finite number of `kind`, or None."""
    v = loadgen.get(key)
    if v is None:
        return None
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0
    if not ok or (kind is int and not isinstance(v, int)):
        noun = "integer" if kind is int else "number"
        raise DataError(
            f"{source}: AIPerf field 'input_config.loadgen.{key}' must be a positive {noun}, "
            f"got {v!r}."
        )
    return v


def _aiperf_latencies(doc: Mapping[str, Any], row: dict[str, Any]) -> None:
    for metric, stem in _AIPERF_TIMES.items():
        m = doc.get(metric)
        if not isinstance(m, dict):
            continue
        unit = str(m.get("unit", "ms"))
        if unit not in _TO_S:
            raise DataError(
                f"{row.get('source') or 'AIPerf export'}: AIPerf field '{metric}.unit' is "
                f"{unit!r}, not a time unit ({', '.join(_TO_S)})."
            )
        for theirs, ours in _AIPERF_STATS.items():
            v = num(m, theirs)
            if v is not None:
                row[f"{ours}_{stem}"] = v * _TO_S[unit]
    # Interactivity, tail-aligned like our metrics table: pX = 1 / pX(TPOT); the mean is the
    # mean of per-request 1/ITL, which is AIPerf's per-user throughput average.
    for stat in ("median", "p90", "p99"):
        tpot = row.get(f"{stat}_tpot")
        if tpot:
            row[f"{stat}_intvty"] = 1.0 / tpot
    per_user = doc.get("output_token_throughput_per_user")
    if isinstance(per_user, dict) and num(per_user, "avg") is not None:
        row["mean_intvty"] = num(per_user, "avg")


def _aiperf_throughput(
    doc: Mapping[str, Any], row: dict[str, Any], window: float | None, n_acc: int
) -> None:
    out_t = _stat(doc, "output_token_throughput")
    total_isl = _stat(doc, "total_isl")
    in_t = total_isl / window if (total_isl is not None and window) else None
    total = _stat(doc, "total_token_throughput")
    if total is None and out_t is not None and in_t is not None:
        total = out_t + in_t
    row["output_tok_per_s"], row["input_tok_per_s"], row["total_tok_per_s"] = out_t, in_t, total
    for ours, v in (
        ("output_tput_per_gpu", out_t),
        ("input_tput_per_gpu", in_t),
        ("tput_per_gpu", total),
    ):
        row[ours] = v / n_acc if v is not None else None


def _aiperf_gpu_power(doc: Mapping[str, Any], source: str) -> list[float]:
    tel = _section(doc, "telemetry_data", source)
    watts: list[float] = []
    for name, ep in _section(tel, "telemetry_data.endpoints", source).items():
        where = f"telemetry_data.endpoints.{name}"
        for gpu_id, gpu in _section(_obj(ep, where, source), f"{where}.gpus", source).items():
            gpu_doc = _obj(gpu, f"{where}.gpus.{gpu_id}", source)
            metrics = _section(gpu_doc, f"{where}.gpus.{gpu_id}.metrics", source)
            v = _stat(metrics, "gpu_power_usage")
            if v is not None:
                watts.append(v)
    return watts
