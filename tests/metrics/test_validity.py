"""The validity rules of a point, with hand-worked counts: each broken rule gives one reason
line opening with its tag; cancelled requests are not failures; a partial point is never
valid; AgentX's liveness rule on agentic points."""

from __future__ import annotations

from scoville.metrics.agentic import agentic_point
from scoville.metrics.compute import Declared, invalid_reasons, stream_liveness, summarize_point
from scoville.records.model import ErrorKind, PointWindow, RequestRecord
from scoville.spec.model import PointValidity

MS = 1_000_000
RULES = PointValidity()


def _rec(i: int, error: ErrorKind | None = None, last_chunk_ms: int = 90) -> RequestRecord:
    chunks = () if error else (10 * MS, last_chunk_ms * MS)
    return RequestRecord(
        f"r{i}",
        "c4",
        "measure",
        0,
        100 * MS,
        chunks,
        (1,) * len(chunks),
        10,
        len(chunks),
        error=error,
    )


def test_a_clean_point_has_no_reason() -> None:
    w = PointWindow("c4", 0, 2000 * MS, "concurrency", 4, 20)
    assert invalid_reasons(20, 20, w, RULES) == ()


def test_failures_over_5_percent_name_the_share_and_the_limit() -> None:
    w = PointWindow("c4", 0, 2000 * MS, "concurrency", 4, 20)
    assert invalid_reasons(19, 20, w, RULES) == ()  # 1 of 20 = 5.0 %: at the limit
    (reason,) = invalid_reasons(18, 20, w, RULES)  # 2 of 20 = 10 %
    assert reason == "failures: 10.0% of measured requests failed (limit 5.0%)"


def test_cancelled_requests_are_not_failures_but_a_partial_point_is_invalid() -> None:
    w = PointWindow("c4", 0, 2000 * MS, "concurrency", 4, 20, partial=True)
    reasons = invalid_reasons(15, 20, w, RULES, n_cancelled=5)
    assert reasons == ("partial: the run stopped after 20 measured requests were sent",)


def test_minimum_window_and_request_count_are_configurable() -> None:
    rules = PointValidity(min_window_s=600, min_measured_requests=24)
    w = PointWindow("c4", 0, 2000 * MS, "concurrency", 4, 20)
    assert invalid_reasons(20, 20, w, rules) == (
        "short window: 2 s, under validity.min_window_s = 600 s",
        "few requests: 20 measured, under validity.min_measured_requests = 24",
    )


def test_the_summary_row_carries_the_reasons() -> None:
    records = [_rec(i) for i in range(8)] + [
        _rec(8, ErrorKind.HTTP_5XX),
        _rec(9, ErrorKind.CANCELLED),
    ]
    w = PointWindow("c4", 0, 100 * MS, "concurrency", 4, 10)
    row = summarize_point(records, w, Declared()).to_dict()
    assert row["n_sent"] == 10 and row["n_failed"] == 2 and not row["valid"]
    # 1 failed of 10 (the cancelled one aside) = 10 % > 5 %
    assert row["invalid_reasons"] == ["failures: 10.0% of measured requests failed (limit 5.0%)"]
    assert row["errors"] == {"http_5xx": 1, "cancelled": 1}


def test_stream_liveness_is_the_last_frame_over_the_window() -> None:
    w = PointWindow("lanes2", 0, 1000 * MS, "lanes", 2, 2)
    assert stream_liveness([_rec(0, last_chunk_ms=900)], w) == 0.9
    assert stream_liveness([_rec(0, last_chunk_ms=1200)], w) == 1.0
    assert stream_liveness([_rec(0, ErrorKind.TIMEOUT)], w) is None


def test_an_agentic_point_whose_stream_stalls_is_invalid() -> None:
    recs = [
        RequestRecord("a", "lanes2", "measure", 0, 900 * MS, (100 * MS, 900 * MS), (1, 1), 10, 2),
        RequestRecord("b", "lanes2", "measure", 0, 960 * MS, (100 * MS, 960 * MS), (1, 1), 10, 2),
    ]
    w = PointWindow("lanes2", 0, 1000 * MS, "lanes", 2, 2)
    assert agentic_point(recs, w)["valid"]  # seen through 96 % of the window
    row = agentic_point(recs[:1], PointWindow("lanes2", 0, 1000 * MS, "lanes", 2, 1))
    assert not row["valid"]
    assert row["invalid_reasons"] == [
        "stalled: streamed content was seen only through 90.0% of the window "
        "(AgentX liveness rule: 95%)"
    ]
