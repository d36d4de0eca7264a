"""A point on the decode-interactivity frontier but dominated end to end stays off agentic
frontiers."""

from __future__ import annotations

from scoville.analysis.e2e_gate import e2e_gate_marks, gate_agentic
from scoville.analysis.frontier import frontier_of


def test_a_point_slow_end_to_end_is_gated_out() -> None:
    rows = [
        # c8 decodes fast (high intvty) but queues: its E2E-normalised rate is the worst.
        {"point_id": "c1", "tput_per_gpu": 100.0, "median_intvty": 90.0, "p90_intvty_e2e": 80.0},
        {"point_id": "c8", "tput_per_gpu": 300.0, "median_intvty": 60.0, "p90_intvty_e2e": 20.0},
        {"point_id": "c4", "tput_per_gpu": 400.0, "median_intvty": 50.0, "p90_intvty_e2e": 40.0},
    ]
    assert [p.point_id for p in frontier_of(rows).points] == ["c4", "c8", "c1"]
    assert [r["point_id"] for r in gate_agentic(rows)] == ["c1", "c4"]


def test_invalid_points_never_pass() -> None:
    rows = [{"point_id": "c1", "tput_per_gpu": 1.0, "p90_intvty_e2e": 1.0, "valid": False}]
    assert gate_agentic(rows) == []


def test_marks_follow_the_rows_and_their_y_metric() -> None:
    rows = [
        {"point_id": "l1", "out": 300.0, "p90_intvty_e2e": 80.0},
        {"point_id": "l2", "out": 500.0, "p90_intvty_e2e": 20.0},  # beaten by l4 on both
        {"point_id": "l4", "out": 600.0, "p90_intvty_e2e": 40.0},
    ]
    assert e2e_gate_marks(rows, "out") == [True, False, True]
