"""The one call that puts telemetry into a run's summary rows.

After the sweep, the pipeline hands over the summary rows, the `TelemetryResult`, the windows
and records (and, when points ran on several workers, their results; when a calibration exists,
its envelope). Each row gains the energy, client-integrity and server columns, and a point whose
client was saturated or pushed beyond its envelope gets `valid_client = False` and a one-line
`client_reason` (the pipeline then marks the point itself invalid).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from scoville.client.scale.workers import WorkerResult
from scoville.client.selftest.calibrate import Envelope, envelope_flags, point_chunk_rate_per_s
from scoville.client.selftest.integrity import Thresholds, client_fields, client_reason
from scoville.records.model import PointWindow, RequestRecord
from scoville.telemetry.scraper import ServerMetricsSeries
from scoville.telemetry.session import TelemetryResult


def worker_client_fields(
    window: PointWindow,
    records: Sequence[RequestRecord],
    results: Sequence[WorkerResult],
    thresholds: Thresholds | None = None,
) -> dict[str, Any]:
    """Client fields of a point driven by several workers: the worst worker's lag and CPU, the
    union of their flags (one saturated worker is enough to taint the point)."""
    per = [
        client_fields(
            res.window,
            [r for r in records if r.worker == res.worker],
            res.client,
            thresholds or Thresholds(),
        )
        for res in results
    ]
    out: dict[str, Any] = {}
    for key in per[0] if per else ():
        vals = [p[key] for p in per if isinstance(p.get(key), int | float)]
        if key.endswith(("_ms", "_share")):
            out[key] = max(vals) if vals else None
    flags = sorted({f for p in per for f in p.get("client_flags", [])})
    out["client_flags"] = flags
    out["client_saturated"] = bool(flags)
    out["client_workers"] = len(results)
    return out


def client_inflight(records: Sequence[RequestRecord], t_ns: Sequence[int]) -> list[int]:
    """The client's view of concurrency at each instant of `t_ns` (e.g. the scrape times):
    requests sent and not yet ended. Plot it against the server's running + waiting."""
    starts = np.sort(np.asarray([r.start_ns for r in records], dtype=np.int64))
    ends = np.sort(np.asarray([r.end_ns for r in records], dtype=np.int64))
    t = np.asarray(t_ns, dtype=np.int64)
    began = np.searchsorted(starts, t, side="right")
    ended = np.searchsorted(ends, t, side="right")
    return [int(x) for x in began - ended]


def telemetry_columns(
    result: TelemetryResult,
    windows: Sequence[PointWindow],
    records: Sequence[RequestRecord],
    n_accelerators: int = 1,
    workers: Mapping[str, Sequence[WorkerResult]] | None = None,
    envelope: Envelope | None = None,
) -> dict[str, dict[str, Any]]:
    """point_id -> the columns telemetry adds to its row (energy, client, server, flags).
    `workers` maps a point_id to its worker results when it ran on several client processes."""
    fields = result.point_fields(windows, records, n_accelerators)
    out: dict[str, dict[str, Any]] = {}
    for win in windows:
        pid = win.point_id
        cols = dict(fields.get(pid, {}))
        if workers and pid in workers:
            cols.update(worker_client_fields(win, records, workers[pid]))
        flags = list(cols.get("client_flags") or [])
        if envelope is not None:
            rate = point_chunk_rate_per_s(records, win)
            n_proc = max(1, len(workers[pid])) if workers and pid in workers else 1
            cols["client_chunks_per_s"] = rate
            cols["client_envelope"] = (
                f"{envelope.max_streams} streams, {envelope.max_chunks_per_s:,.0f} chunks/s"
            )
            flags += envelope_flags(
                win.level / n_proc if win.mode != "rate" else 0, rate / n_proc, envelope
            )
        cols["client_flags"] = flags
        cols["valid_client"] = not flags
        cols["client_reason"] = client_reason(cols)
        out[pid] = cols
    return out


def annotate_rows(
    rows: Sequence[Mapping[str, Any]],
    result: TelemetryResult,
    windows: Sequence[PointWindow],
    records: Sequence[RequestRecord],
    n_accelerators: int = 1,
    workers: Mapping[str, Sequence[WorkerResult]] | None = None,
    envelope: Envelope | None = None,
) -> list[dict[str, Any]]:
    """Flat rows with `telemetry_columns` merged in (input rows are not modified)."""
    cols = telemetry_columns(result, windows, records, n_accelerators, workers, envelope)
    out = []
    for row in rows:
        flags = list(row.get("client_flags") or [])
        extra = cols.get(
            str(row.get("point_id")), {"client_flags": flags, "valid_client": not flags}
        )
        out.append({**row, **extra})
    return out


def timeline(server: ServerMetricsSeries, records: Sequence[RequestRecord]) -> dict[str, Any]:
    """Plot-ready series at the scrape times (seconds from the first scrape): the server's
    running / waiting requests and KV usage, its generation rate (from the counter), and the
    client's in-flight requests. A gap between client in-flight and running + waiting means
    requests queued somewhere the server does not count (a proxy, the network, the client)."""
    t = list(server.t_ns)
    if not t:
        return {"t_s": []}
    out: dict[str, Any] = {"t_s": [(x - t[0]) / 1e9 for x in t]}
    for name in ("running_requests", "waiting_requests", "kv_cache_usage_ratio"):
        if name in server.values:
            out[name] = list(server.values[name])
    gen = server.values.get("generation_tokens_total")
    if gen is not None:
        rates: list[float | None] = [None]
        for i in range(1, len(t)):
            a, b, dt_ns = gen[i - 1], gen[i], t[i] - t[i - 1]
            if a is None or b is None or dt_ns <= 0:
                rates.append(None)
            else:
                rates.append((b - a) / (dt_ns / 1e9))
        out["generation_tok_per_s"] = rates
    out["client_inflight"] = client_inflight(records, t)
    return out
