"""Summary-row annotation: energy + client columns, worker merging, envelope flags."""

from __future__ import annotations

import pytest

import scoville.client.scale.workers as workers
import scoville.client.selftest.calibrate as calibrate
import scoville.telemetry.annotate as annotate
from scoville.client.selftest.integrity import ClientSeries
from scoville.records.model import PointWindow, RequestRecord
from scoville.telemetry.series import DeviceInfo, DeviceSeries, PowerReading, PowerSeries
from scoville.telemetry.session import TelemetryResult

S = 1_000_000_000


def rec(i: int, start_s: float, end_s: float, worker: str = "0") -> RequestRecord:
    start, end = int(start_s * S), int(end_s * S)
    chunks = tuple(start + k * (end - start) // 10 for k in range(1, 11))
    return RequestRecord(
        f"r{i}", "c2", "measure", start, end, chunks, (1,) * 10, 10, 10, worker=worker
    )


def quiet_client(cpu_end_s: float = 1.0) -> ClientSeries:
    return ClientSeries(0.02, [1 * S, 2 * S], [100_000, 200_000], [0, 20 * S], [0.0, cpu_end_s])


def test_client_inflight_golden() -> None:
    records = [rec(0, 1, 3), rec(1, 2, 5), rec(2, 4, 6)]
    t = [int(x * S) for x in (0.5, 1.0, 2.5, 3.0, 4.5, 5.5, 7)]
    assert annotate.client_inflight(records, t) == [0, 1, 2, 1, 2, 1, 0]


def test_annotate_rows_adds_columns_and_flags_beyond_envelope() -> None:
    ds = DeviceSeries(DeviceInfo("gpu0", "nvml", "accelerator-board"))
    for k in range(21):
        ds.append(k * S, PowerReading("gpu0", power_w=250.0))
    result = TelemetryResult(PowerSeries([ds]), None, quiet_client(), {})
    window = PointWindow("c2", 1 * S, 11 * S, "concurrency", 2, sent=4)
    records = [rec(i, 1 + 2 * i, 3 + 2 * i) for i in range(4)]  # 40 chunks in 10 s
    rows = [{"point_id": "c2", "valid": True}]
    env = calibrate.Envelope(1, 3.0, "client", 0.5, 0.01, 0.02, calibrate.Criteria())
    (out,) = annotate.annotate_rows(rows, result, [window], records, 1, envelope=env)
    assert rows == [{"point_id": "c2", "valid": True}]  # input untouched
    assert out["energy_j"] == pytest.approx(2500.0)
    assert out["energy_per_output_token_j"] == pytest.approx(62.5)  # 2500 J / 40 tokens
    assert out["client_chunks_per_s"] == pytest.approx(4.0)
    assert out["client_flags"] == ["beyond_client_envelope"]
    assert out["valid_client"] is False
    (ok,) = annotate.annotate_rows(rows, result, [window], records, 1)
    assert ok["client_flags"] == [] and ok["valid_client"] is True


def test_one_saturated_worker_taints_the_point() -> None:
    window = PointWindow("c2", 1 * S, 11 * S, "concurrency", 2, sent=4)
    records = [rec(0, 1, 3, "0"), rec(1, 2, 5, "1")]
    busy = quiet_client(cpu_end_s=19.0)  # 0.95 of a core
    results = [
        workers.WorkerResult("0", "h", window, quiet_client(), 0),
        workers.WorkerResult("1", "h", window, busy, 0),
    ]
    f = annotate.worker_client_fields(window, records, results)
    assert f["client_cpu_share"] == pytest.approx(0.95)
    assert f["client_flags"] == ["client_cpu_saturated"]
    assert f["client_saturated"] is True and f["client_workers"] == 2


def test_timeline_golden() -> None:
    from scoville.telemetry.scraper import ServerMetricsSeries

    srv = ServerMetricsSeries("x")
    srv.append(1 * S, {"running_requests": 1.0, "generation_tokens_total": 100.0})
    srv.append(2 * S, {"running_requests": 2.0, "generation_tokens_total": 160.0})
    srv.append(4 * S, {"running_requests": 0.0, "generation_tokens_total": 200.0})
    records = [rec(0, 0.5, 3), rec(1, 1.5, 3.5)]
    tl = annotate.timeline(srv, records)
    assert tl["t_s"] == [0.0, 1.0, 3.0]
    assert tl["running_requests"] == [1.0, 2.0, 0.0]
    assert tl["generation_tok_per_s"] == [None, 60.0, 20.0]
    assert tl["client_inflight"] == [1, 2, 0]
