"""Column-at-a-time summaries: hand-checked quantiles, agreement with numpy per group, ROWs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoville.analysis.columnar import RequestColumns, grouped_quantiles, point_rows
from scoville.analysis.frontier import frontier_of


def test_grouped_quantiles_by_hand() -> None:
    g = np.array([0, 0, 0, 0, 2, 2], dtype=np.int64)
    v = np.array([4.0, 1.0, 3.0, 2.0, 5.0, np.nan])
    q = grouped_quantiles(g, v, [0.5, 0.9], n_groups=3)
    assert q[0].tolist() == pytest.approx([2.5, 3.7])  # pos 1.5 and 2.7 in [1, 2, 3, 4]
    assert np.isnan(q[1]).all()  # empty group
    assert q[2].tolist() == [5.0, 5.0]  # NaN ignored


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 4), st.floats(-1e6, 1e6)), min_size=1, max_size=60),
    st.floats(0.0, 1.0),
)
def test_grouped_quantiles_match_numpy_per_group(data: list[tuple[int, float]], q: float) -> None:
    g = np.array([d[0] for d in data], dtype=np.int64)
    v = np.array([d[1] for d in data])
    got = grouped_quantiles(g, v, [q], n_groups=5)[:, 0]
    for k in range(5):
        vals = v[g == k]
        if vals.size == 0:
            assert np.isnan(got[k])
        else:
            assert got[k] == pytest.approx(np.percentile(vals, q * 100), rel=1e-9, abs=1e-6)


def test_point_rows_and_frontier() -> None:
    # Point c1: 2 requests, 100 in / 11 out, e2e 1.5 s, ttft 0.5 s -> TPOT 0.1 s, 10 tok/s/user.
    # Point c8: 4 requests, 100 in / 11 out, e2e 2.5 s, ttft 0.5 s -> TPOT 0.2 s, 5 tok/s/user.
    idx = np.array([0, 0, 1, 1, 1, 1], dtype=np.int64)
    ones = np.ones(6)
    rows = point_rows(
        ["c1", "c8"],
        [1.0, 2.0],
        RequestColumns(
            idx,
            100 * ones,
            11 * ones,
            np.array([1.5, 1.5, 2.5, 2.5, 2.5, 2.5]),
            0.5 * ones,
        ),
        n_accelerators=2,
        labels={"system": "A"},
    )
    c1, c8 = rows
    assert c1["tput_per_gpu"] == pytest.approx(2 * 111 / 2)  # 222 tokens / 1 s / 2 acc
    assert c8["tput_per_gpu"] == pytest.approx(4 * 111 / 4)
    assert c1["median_intvty"] == pytest.approx(10.0) and c8["median_tpot"] == pytest.approx(0.2)
    assert c1["system"] == "A" and c1["n_ok"] == 2
    f = frontier_of(rows)
    assert [p.point_id for p in f.points] == ["c1"]  # c8 is slower and no busier per acc


def test_point_rows_validity_counts_failures_like_the_metrics() -> None:
    # c1: 2 ok + 0 failed -> valid; c8: 2 ok + 1 failed (1/3 > 5 %) -> invalid; c9: none ok.
    idx = np.array([0, 0, 1, 1], dtype=np.int64)
    ones = np.ones(4)
    rows = point_rows(
        ["c1", "c8", "c9"],
        [1.0, 1.0, 1.0],
        RequestColumns(
            idx,
            100 * ones,
            11 * ones,
            1.5 * ones,
            0.5 * ones,
        ),
        n_failed=[0, 1, 0],
    )
    assert [r["valid"] for r in rows] == [True, False, False]
