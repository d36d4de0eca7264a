"""History over runs of different workload shapes: one series per like-for-like shape, each
with its own change points, and the runs a shape filter leaves out named with the reason."""

from __future__ import annotations

from scoville.analysis.comparable import conditions_of_rows, shape_label, unlike_runs
from scoville.analysis.history import RunRows, ShapeFilter, histories


def _run(i: int, osl: int, tput: float, precision: str = "fp8") -> RunRows:
    row = {
        "point_id": "c8",
        "median_intvty": 50.0,
        "tput_per_gpu": tput,
        "valid": True,
        "model": "m",
        "system": "s",
        "isl": 1024,
        "osl": osl,
        "range_ratio": 1.0,
        "precision": precision,
    }
    return RunRows(f"r{i}", f"2026-11-{i + 1:02d}", [row])


# Nightly runs alternating OSL 256 (about 1000 tok/s) and OSL 64 (about 3000 tok/s): mixed in
# one series the level jumps every night; the OSL 256 runs drop to 800 from run 10 on.
NIGHTS = [
    _run(i, 256 if i % 2 == 0 else 64, (1000.0 if i < 10 else 800.0) if i % 2 == 0 else 3000.0)
    for i in range(20)
]


def test_each_shape_is_its_own_series_with_its_own_change_points() -> None:
    series, left = histories(NIGHTS, "tput_per_gpu", point_id="c8")
    assert left == []
    assert [s.shape for s in series] == [
        "ISL 1024 / OSL 256, range ratio 1, fp8",
        "ISL 1024 / OSL 64, range ratio 1, fp8",
    ]
    long_, short = series
    assert [h.run_id for h in long_.points] == [f"r{i}" for i in range(0, 20, 2)]
    assert [h.run_id for h in long_.points if h.change] == ["r10"]  # the real drop, only
    assert not any(h.change for h in short.points)  # a flat 3000: no shift
    assert short.apart == ("osl_tokens differs: 64 vs 256",)


def test_a_filter_keeps_one_shape_and_names_what_it_left_out() -> None:
    series, left = histories(
        NIGHTS, "tput_per_gpu", point_id="c8", shape=ShapeFilter(osl_tokens=64)
    )
    assert [s.shape for s in series] == ["ISL 1024 / OSL 64, range ratio 1, fp8"]
    assert len(series[0].points) == 10
    assert [lo.run_id for lo in left] == [f"r{i}" for i in range(0, 20, 2)]
    assert left[0].reasons == ("OSL 256, not 64",)
    none, gone = histories(NIGHTS, "tput_per_gpu", point_id="c8", shape=ShapeFilter(isl_tokens=8))
    assert none == [] and len(gone) == 20 and gone[0].reasons == ("ISL 1024, not 8",)


def test_precision_is_compared_by_class() -> None:
    runs = [_run(0, 64, 1.0, "FP8"), _run(1, 64, 1.0, "fp8-e4m3"), _run(2, 64, 1.0, "MXFP4")]
    series, _ = histories(runs, "tput_per_gpu", point_id="c8")
    assert [len(s.points) for s in series] == [2, 1]
    assert "precision class differs (fp4 vs fp8)" in series[1].apart[0]
    kept, left = histories(runs, "tput_per_gpu", point_id="c8", shape=ShapeFilter(precision="fp4"))
    assert [h.run_id for h in kept[0].points] == ["r2"]
    assert [lo.reasons for lo in left] == [
        ("precision FP8, not fp4",),
        ("precision fp8-e4m3, not fp4",),
    ]


def test_a_condition_neither_run_states_does_not_split_them() -> None:
    bare = [{"point_id": "c1", "tput_per_gpu": 1.0, "valid": True}]
    assert unlike_runs(bare, bare) == []
    assert unlike_runs(_run(0, 64, 1.0).rows, bare) == [
        "model is not stated for the baseline",
        "isl_tokens is not stated for the baseline",
        "osl_tokens is not stated for the baseline",
    ]
    assert shape_label(conditions_of_rows(bare)) == "ISL ? / OSL ?, range ratio ?, precision ?"
