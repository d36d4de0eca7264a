"""Exports of summary rows: InferenceX result rows (seconds, their field names) and CSV.

InferenceX rows let existing InferenceX tooling read scoville runs. Our `intvty` percentiles are
tail-aligned (pX = 1/pX(tpot)); the median is the same under either convention.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

_STAT_KEYS = ("mean", "median", "p90", "p99", "p999")
# our metric -> InferenceX metric suffix
_LATENCIES = {"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2e": "e2el", "intvty": "intvty"}


def inferencex_row(row: dict[str, Any], isl: int, osl: int) -> dict[str, Any]:
    """One InferenceX-style result row from a scoville summary row."""
    out: dict[str, Any] = {
        "hw": row.get("system"), "model": row.get("model"), "framework": row.get("framework"),
        "precision": row.get("precision"), "spec_decoding": row.get("spec_decode"),
        "disagg": row.get("disagg"), "conc": row.get("conc"), "isl": isl, "osl": osl,
        "request_rate": row.get("request_rate"),
        "tput_per_gpu": row.get("tput_per_gpu"),
        "output_tput_per_gpu": row.get("output_tput_per_gpu"),
        "input_tput_per_gpu": row.get("input_tput_per_gpu"),
    }
    for ours, theirs in _LATENCIES.items():
        for stat in _STAT_KEYS:
            key = f"{stat}_{ours}"
            if key in row:
                their_stat = "p99.9" if stat == "p999" else stat
                out[f"{their_stat}_{theirs}"] = row[key]
    out["tput_per_kw"] = row.get("tput_per_kw")
    out["power_boundary"] = row.get("power_boundary")
    out["failure_rate"] = row.get("failure_rate")
    out["valid"] = row.get("valid")
    return out


def to_inferencex(summary: dict[str, Any], isl: int, osl: int) -> list[dict[str, Any]]:
    return [inferencex_row(r, isl, osl) for r in summary.get("points", [])]


def to_csv(rows: Sequence[dict[str, Any]]) -> str:
    """Flat rows as CSV (nested values such as error counts are written as their repr)."""
    if not rows:
        return ""
    keys: list[str] = []
    for r in rows:
        keys.extend(k for k in r if k not in keys)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=keys, extrasaction="ignore")
    writer.writeheader()
    for r in rows:
        writer.writerow({k: v if not isinstance(v, (dict, list)) else repr(v)
                         for k, v in r.items()})
    return buf.getvalue()
