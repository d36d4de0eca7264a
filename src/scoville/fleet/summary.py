"""A soak's run directory -> its summary (`soak.json`) and page (`soak.html`).

Joins `records.jsonl` (the client's facts) with `replicas.jsonl` (who served each request) by
request id, checks the accounting (sent = ok + failed + cancelled, one record per request),
and applies `analysis/fleet.py`: timeline, recovery per fault, replica health, drift, budget.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from scoville.analysis.fleet import (
    ReplicaHealth,
    Sample,
    Window,
    baseline,
    budget_burned,
    recovery,
    replica_health,
    timeline,
    trend,
)
from scoville.bundle.files import write_json
from scoville.errors import DataError
from scoville.fleet.spec import SoakSpec
from scoville.records.model import ErrorKind, RequestRecord
from scoville.records.sink import read_records
from scoville.report.fleet import soak_page


def _jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rows.append(json.loads(line))
        except ValueError:
            continue  # a torn last line after a crash; never parsed as data
    return rows


def _samples(records: list[RequestRecord], served: dict[str, int], t0_ns: int) -> list[Sample]:
    return [
        Sample(
            (r.end_ns - t0_ns) / 1e9,
            (r.end_ns - r.start_ns) / 1e6,
            r.ok,
            served.get(r.request_id, -1),
            r.output_tokens if r.ok else 0,
        )
        for r in records
        if r.error != ErrorKind.CANCELLED
    ]


def _accounting(
    records: list[RequestRecord], routed: list[dict[str, Any]], sent: int
) -> dict[str, Any]:
    ok = sum(r.ok for r in records)
    cancelled = sum(r.error == ErrorKind.CANCELLED for r in records)
    failed = len(records) - ok - cancelled
    by_error: dict[str, int] = {}
    for r in records:
        if r.error is not None:
            by_error[r.error.value] = by_error.get(r.error.value, 0) + 1
    ids = [r.request_id for r in records]
    return {
        "sent": sent,
        "ok": ok,
        "failed": failed,
        "cancelled": cancelled,
        "records": len(records),
        "unique_ids": len(set(ids)),
        "adds_up": sent == ok + failed + cancelled == len(set(ids)),
        "by_error": by_error,
        "router_retried": sum(int(x.get("attempts", 1)) - 1 for x in routed),
        "router_outcomes": _count(str(x.get("outcome")) for x in routed),
    }


def _count(items: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for x in items:
        out[x] = out.get(x, 0) + 1
    return out


def _lost(samples: list[Sample], from_s: float, to_s: float | None) -> int:
    """Failed requests that ended in [from_s, to_s) (to the end when `to_s` is None)."""
    end = to_s if to_s is not None else float("inf")
    return sum(1 for x in samples if not x.ok and from_s <= x.end_s < end)


def _faults(
    spec: SoakSpec, events: list[dict[str, Any]], windows: list[Window], samples: list[Sample]
) -> list[dict[str, Any]]:
    """Recovery of each fault in the schedule, from its logged start (and its end, if any)."""
    rules = spec.rules
    out = []
    for i, fault in enumerate(spec.faults):
        mine = [e for e in events if e.get("fault") == i]
        start = next((e["t_s"] for e in mine if e["action"] == "start"), None)
        clear = next((e["t_s"] for e in mine if e["action"] in ("end", "ready")), None)
        row: dict[str, Any] = {"fault": i, **fault.model_dump(mode="json"), "started_s": start}
        row["cleared_s"] = clear
        base = (
            baseline(windows, start, rules.warmup_s, rules.baseline_s)
            if start is not None
            else None
        )
        if start is None or base is None:
            row |= {"recovery_s": None, "recovered_at_s": None}
            row["note"] = "no baseline: no window between warmup_s and the fault"
            out.append(row)
            continue
        rec = recovery(windows, start, base, rules.band, rules.error_budget, rules.hold_windows)
        row |= {"baseline": asdict(base), **asdict(rec)}
        row["lost_until_recovered"] = _lost(samples, start, rec.recovered_at_s)
        if rec.recovery_s == 0.0 and rec.out_of_band_windows == 0:
            row["note"] = "no window left the band: the fault's effect was within it"
        if rec.recovered_at_s is not None and clear is not None:
            row["recovery_after_clear_s"] = max(0.0, rec.recovered_at_s - clear)
        out.append(row)
    return out


def summarize_soak(run_dir: Path) -> dict[str, Any]:
    """Read a soak's run directory, write `soak.json` and `soak.html`, return the summary."""
    spec_path = run_dir / "soak_spec.json"
    if not spec_path.is_file():
        raise DataError(f"{run_dir} holds no soak (no soak_spec.json).")
    spec = SoakSpec.model_validate(json.loads(spec_path.read_text(encoding="utf-8")))
    records, windows_rec = read_records(run_dir / "records.jsonl")
    routed = _jsonl(run_dir / "replicas.jsonl")
    events = _jsonl(run_dir / "faults.jsonl")
    t0_ns = next((e["t_ns"] for e in events if e.get("kind") == "soak"), None)
    if t0_ns is None or not windows_rec:
        raise DataError(f"{run_dir} holds no finished soak (no start event or no window).")
    served = {str(x["request_id"]): int(x["replica"]) for x in routed}
    samples = _samples(records, served, t0_ns)
    duration_s = (windows_rec[-1].end_ns - t0_ns) / 1e9
    windows = timeline(samples, spec.rules.window_s, min(duration_s, spec.duration_s))
    acct = _accounting(records, routed, windows_rec[-1].sent)
    health = _health(samples, spec)
    mids = [(w.start_s + w.end_s) / 2 for w in windows]
    summary = {
        "schema": "scoville.soak/1",
        "spec": spec.model_dump(mode="json"),
        "duration_s": duration_s,
        "accounting": acct,
        "error_budget_burned": budget_burned(acct["failed"], acct["sent"], spec.rules.error_budget),
        "faults": _faults(spec, events, windows, samples),
        "events": events,
        "replicas": [asdict(h) for h in health],
        "degraded": [h.replica for h in health if h.degraded],
        "drift": _drift(windows, mids),
        "windows": [asdict(w) for w in windows],
    }
    write_json(run_dir / "soak.json", summary)
    (run_dir / "soak.html").write_text(soak_page(summary), encoding="utf-8")
    return summary


def _drift(windows: list[Window], mids: list[float]) -> dict[str, Any]:
    tput = trend(mids, [w.throughput_rps for w in windows])
    pts = [(m, w.p99_ms) for m, w in zip(mids, windows, strict=True) if w.p99_ms is not None]
    p99 = trend([m for m, _ in pts], [v for _, v in pts])
    return {
        "throughput_rps": asdict(tput) if tput else None,
        "p99_ms": asdict(p99) if p99 else None,
    }


def _health(samples: list[Sample], spec: SoakSpec) -> list[ReplicaHealth]:
    lat: dict[int, list[float]] = {}
    failed: dict[int, int] = {}
    for s in samples:
        if s.ok:
            lat.setdefault(s.replica, []).append(s.latency_ms)
        else:
            failed[s.replica] = failed.get(s.replica, 0) + 1
    return replica_health(lat, failed, spec.rules.alpha, spec.rules.min_effect)
