"""Frontier construction, reading at x (no extrapolation) and area, on hand-built ROWs."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoville.analysis.frontier import (
    FrontierPoint,
    area_under,
    frontier_of,
    frontier_payload,
    frontiers,
    pareto,
    read_at,
)


def row(pid: str, intvty: float, tput: float, **kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "point_id": pid,
        "valid": True,
        "median_intvty": intvty,
        "tput_per_gpu": tput,
        "median_e2e": 1024 / intvty if intvty else None,
        "system": "A",
        "model": "m",
        "framework": "f",
        "precision": "fp8",
        "spec_decode": "none",
        "disagg": False,
    }
    base.update(kw)
    return base


ROWS = [
    row("c1", 300, 2000),
    row("c2", 200, 3000),
    row("c4", 100, 4000),
    row("bad", 250, 900),  # dominated by c1 (less interactive and less throughput)
    row("c8", 50, 3500),  # dominated by c4
    row("inv", 400, 9000, valid=False),  # would dominate everything, but invalid
]


def test_frontier_drops_dominated_and_invalid_points() -> None:
    f = frontier_of(ROWS)
    assert [p.point_id for p in f.points] == ["c4", "c2", "c1"]
    assert f.xs == (100, 200, 300)
    assert f.best_x() == 300
    assert f.best_y() == 4000
    assert [p.point_id for p in frontier_of(ROWS, include_invalid=True).points] == ["inv"]


def test_read_at_measured_interpolated_unreachable_below() -> None:
    f = frontier_of(ROWS)  # points lie on y = 5000 - 10 x: Steffen reproduces the line
    assert read_at(f, 200).status == "measured"
    r = read_at(f, 150)
    assert r.status == "interpolated"
    assert r.value == pytest.approx(3500.0)
    up = read_at(f, 301)
    assert up.status == "unreachable" and up.value is None
    below = read_at(f, 80)
    assert below.status == "below_range" and below.value is None and below.bound == 4000


def test_e2e_frontier_lower_latency_is_better() -> None:
    rows = [
        row("a", 0, 1000, median_e2e=1.0),
        row("b", 0, 3000, median_e2e=2.0),
        row("c", 0, 2000, median_e2e=3.0),
    ]
    f = frontier_of(rows, x_metric="median_e2e", x_better="lower")
    assert [p.point_id for p in f.points] == ["a", "b"]
    assert f.best_x() == 1.0
    assert read_at(f, 0.5).status == "unreachable"  # faster than ever measured
    r = read_at(f, 2.5)
    assert r.status == "below_range" and r.bound == 3000
    assert read_at(f, 1.5).value == pytest.approx(2000.0)


def test_area_over_a_stated_range() -> None:
    f = frontier_of(ROWS)
    a = area_under(f, 100, 300)  # trapezoid under the line 5000 - 10x
    assert a.covered and a.value == pytest.approx((4000 + 2000) / 2 * 200)
    assert area_under(f, 150, 250).value == pytest.approx((3500 + 2500) / 2 * 100)
    out = area_under(f, 50, 250)
    assert not out.covered and out.value is None


def test_groups_split_by_configuration() -> None:
    rows = [*ROWS, row("s1", 100, 5000, spec_decode="mtp"), row("b1", 100, 10, system="B")]
    fs = frontiers(rows)
    assert len(fs) == 3
    labels = sorted(k.label() for k in fs)
    assert labels == ["A (f, fp8)", "A (f, fp8, spec=mtp)", "B (f, fp8)"]


pts = st.lists(st.tuples(st.integers(0, 50), st.integers(0, 50)), min_size=1, max_size=40)


@settings(max_examples=200, deadline=None)
@given(pts, st.sampled_from(["higher", "lower"]))
def test_pareto_is_non_dominated_and_covers_every_point(
    raw: list[tuple[int, int]], x_better: str
) -> None:
    sign = 1 if x_better == "higher" else -1
    cands = [FrontierPoint(float(x), float(y), str(i)) for i, (x, y) in enumerate(raw)]
    front = pareto(cands, x_better)  # type: ignore[arg-type]

    def dominates(a: FrontierPoint, b: FrontierPoint) -> bool:
        ge = sign * a.x >= sign * b.x and a.y >= b.y
        return ge and (sign * a.x > sign * b.x or a.y > b.y)

    for p in front:
        assert not any(dominates(q, p) for q in cands)
    for c in cands:
        assert any(dominates(p, c) or (p.x == c.x and p.y == c.y) for p in front)
    assert list(front) == sorted(front, key=lambda p: p.x)
    assert len({p.x for p in front}) == len(front)


def test_frontier_payload_is_plain_data_inside_the_range() -> None:
    import json

    (payload,) = frontier_payload(ROWS, curve_samples=5)
    json.dumps(payload)  # JSON-ready
    assert payload["label"] == "A (f, fp8)"
    assert len(payload["points"]) == 5  # the invalid point is left out
    assert [p["point_id"] for p in payload["frontier"]] == ["c4", "c2", "c1"]
    xs = [p["x"] for p in payload["curve"]]
    assert xs[0] == 100 and xs[-1] == 300 and len(xs) == 5
    assert payload["curve"][1]["y"] == pytest.approx(5000 - 10 * 150)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.floats(1, 1000), st.floats(1, 1e5)), min_size=2, max_size=15),
    st.floats(0, 1),
)
def test_readings_stay_between_neighbouring_frontier_points(
    raw: list[tuple[float, float]], t: float
) -> None:
    rows = [row(str(i), x, y) for i, (x, y) in enumerate(raw)]
    f = frontier_of(rows)
    x = f.xs[0] + t * (f.xs[-1] - f.xs[0])
    r = read_at(f, x)
    assert r.value is not None
    i = max(k for k, p in enumerate(f.points) if p.x <= x)
    j = min(i + 1, len(f.points) - 1)
    lo, hi = sorted((f.points[i].y, f.points[j].y))
    assert lo - 1e-6 * hi <= r.value <= hi + 1e-6 * hi
