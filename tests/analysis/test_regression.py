"""The regression test's decision at known effect sizes, on simulated requests (fixed seed).

Each simulated run has three closed-loop points. A candidate with `window` = w takes (1 + w)
times as long for the same requests (same TPOT, so the same interactivity): its throughput
at every interactivity falls by exactly 1 - 1 / (1 + w). `latency` = l scales every request's
TTFT and TPOT by (1 + l): TTFT p99 and E2E rise by l."""

from __future__ import annotations

import numpy as np
import pytest

from scoville.analysis.bootstrap import RequestArrays
from scoville.analysis.columnar import RequestColumns, point_rows
from scoville.analysis.regression import Rule, RunSample, check, decide

LEVELS = (1, 4, 16)
TPOT_S = {1: 0.004, 4: 0.005, 16: 0.008}  # per-token time per concurrency (s)
TTFT_S = {1: 0.010, 4: 0.020, 16: 0.050}


def simulated_run(
    run_id: str, seed: int, window: float = 0.0, latency: float = 0.0, n: int = 800
) -> RunSample:
    """n requests per point (ISL 1024, OSL 256), TPOT and TTFT with 5 % lognormal noise."""
    rng = np.random.default_rng(seed)
    points: dict[str, tuple[RequestArrays, float]] = {}
    cols: list[np.ndarray] = []
    for k, c in enumerate(LEVELS):
        tpot = TPOT_S[c] * (1 + latency) * rng.lognormal(0.0, 0.05, n)
        ttft = TTFT_S[c] * (1 + latency) * rng.lognormal(0.0, 0.05, n)
        e2e = ttft + 255 * tpot
        inp, out = np.full(n, 1024.0), np.full(n, 256.0)
        window_s = float(e2e.sum() / c) * (1 + window)
        points[f"c{c}"] = (RequestArrays(inp, out, e2e, ttft, tpot), window_s)
        cols.append(np.full(n, k))
    arrays = [points[f"c{c}"][0] for c in LEVELS]
    rows = point_rows(
        [f"c{c}" for c in LEVELS],
        [points[f"c{c}"][1] for c in LEVELS],
        RequestColumns(
            np.concatenate(cols).astype(np.int64),
            np.concatenate([a.input_tokens for a in arrays]),
            np.concatenate([a.output_tokens for a in arrays]),
            np.concatenate([a.e2e_s for a in arrays]),
            np.concatenate([a.ttft_s for a in arrays]),
        ),
        labels={"system": "SIM", "model": "m"},
    )
    return RunSample(run_id, rows, points)


RULE = Rule(min_effect=0.05, n_resamples=300, seed=7)


def verdicts(report_lines: list, metric: str) -> set[str]:  # type: ignore[type-arg]
    return {ln.verdict for ln in report_lines if ln.metric == metric}


BASE = simulated_run("a", seed=1)


def test_same_server_other_draw_passes() -> None:
    report = check(simulated_run("b", seed=2), BASE, RULE)
    assert not report.regressed
    assert {ln.verdict for ln in report.lines} == {"no change"}


def test_throughput_ten_percent_lower_at_equal_interactivity_is_a_regression() -> None:
    report = check(simulated_run("b", seed=2, window=0.10), BASE, RULE)
    tput = [ln for ln in report.lines if ln.metric == "tput_per_gpu"]
    assert [ln.verdict for ln in tput] == ["regression"] * 3
    # 1 - 1/1.1 = 9.1 % less at every interactivity, up to the draw's noise.
    assert all(-0.11 < (ln.change or 0) < -0.07 for ln in tput)
    assert all((ln.lo or 0) < (ln.change or 0) < (ln.hi or 0) < 0 for ln in tput)
    assert verdicts(report.lines, "median_e2e") == {"no change"}


def test_throughput_two_percent_lower_is_below_the_minimum_effect() -> None:
    report = check(simulated_run("b", seed=2, window=0.02), BASE, RULE)
    assert not report.regressed


def test_latency_ten_percent_higher_is_a_regression() -> None:
    report = check(simulated_run("b", seed=2, latency=0.10), BASE, RULE)
    assert report.regressed
    assert verdicts(report.lines, "p99_ttft") == {"regression"}  # 800 >= 368 samples
    assert verdicts(report.lines, "median_e2e") == {"regression"}


def test_faster_is_an_improvement_not_a_regression() -> None:
    report = check(simulated_run("b", seed=2, latency=-0.10), BASE, RULE)
    assert not report.regressed
    assert verdicts(report.lines, "median_e2e") == {"improvement"}


def test_p99_from_too_few_samples_is_not_decided() -> None:
    cand = simulated_run("b", seed=2, latency=0.3, n=100)
    lines = [ln for ln in check(cand, simulated_run("a", seed=1, n=100), RULE).lines]
    p99 = [ln for ln in lines if ln.metric == "p99_ttft"]
    assert {ln.verdict for ln in p99} == {"few samples"}
    assert "n=100 < 368" in p99[0].note


def test_without_records_the_effect_size_alone_decides() -> None:
    cand, base = simulated_run("b", seed=2, latency=0.10), BASE
    bare = check(RunSample("b", cand.rows, {}), RunSample("a", base.rows, {}), RULE)
    e2e = [ln for ln in bare.lines if ln.metric == "median_e2e"]
    assert e2e and all(ln.lo is None and ln.verdict == "regression" for ln in e2e)


@pytest.mark.parametrize(
    ("change", "lo", "hi", "worse", "expected"),
    [
        (-0.10, -0.12, -0.08, "lower", "regression"),  # throughput down 10 %, interval below 0
        (-0.10, -0.25, 0.02, "lower", "no change"),  # interval crosses zero: noise
        (-0.03, -0.04, -0.02, "lower", "no change"),  # significant but under 5 %
        (0.08, 0.06, 0.10, "higher", "regression"),  # latency up 8 %
        (-0.08, -0.10, -0.06, "higher", "improvement"),  # latency down 8 %
        (0.06, None, None, "higher", "regression"),  # no interval: effect size alone
        (0.04, None, None, "higher", "no change"),
    ],
)
def test_decision_rule(
    change: float, lo: float | None, hi: float | None, worse: str, expected: str
) -> None:
    assert decide(change, lo, hi, worse, 0.05) == expected  # type: ignore[arg-type]


def test_runs_of_different_configurations_are_noted() -> None:
    other = simulated_run("b", seed=2)
    relabelled = RunSample("b", [dict(r, system="OTHER") for r in other.rows], other.points)
    assert check(relabelled, BASE, RULE).notes == [
        "the runs differ in system: OTHER vs SIM (candidate vs baseline)"
    ]
    assert check(other, BASE, RULE).notes == []


def test_resampling_in_batches_draws_the_same_resamples(monkeypatch: pytest.MonkeyPatch) -> None:
    import scoville.analysis.bootstrap as bootstrap

    values = np.arange(10.0)

    def mean(a: np.ndarray) -> np.ndarray:
        return a.mean(axis=1)

    whole = bootstrap.resampled(values, mean, 7, np.random.default_rng(3))
    tpot = 0.01 * (1 + np.arange(10.0) % 4)
    arr = bootstrap.RequestArrays(values, values + 10, 2 * tpot, tpot, tpot)
    xy_whole = bootstrap.resampled_xy(arr, 0.5, 7, np.random.default_rng(3))
    monkeypatch.setattr(bootstrap, "_CELLS", 25)  # 2 resamples of 10 values per batch
    batched = bootstrap.resampled(values, mean, 7, np.random.default_rng(3))
    assert whole.shape == (7,) and np.array_equal(whole, batched)
    xy_batched = bootstrap.resampled_xy(arr, 0.5, 7, np.random.default_rng(3))
    assert all(np.array_equal(a, b) for a, b in zip(xy_whole, xy_batched, strict=True))


def _distrust(sample: RunSample, pid: str, reason: str) -> RunSample:
    rows = [
        {**r, "valid": False, "invalid_reasons": [reason]} if r["point_id"] == pid else r
        for r in sample.rows
    ]
    return RunSample(sample.run_id, rows, sample.points)


def test_a_level_only_invalid_candidate_points_reach_is_not_comparable() -> None:
    # The same server, but the candidate's c1 (the highest interactivity) was distrusted
    # (its client lagged): the candidate's valid frontier stops short of the baseline's best
    # interactivity. Unknown there, not worse: "not comparable", naming the point and why.
    cand = _distrust(simulated_run("b", seed=2), "c1", "client: loop lag p99 12 ms (> 10 ms)")
    report = check(cand, BASE, RULE)
    top = max(
        (ln for ln in report.lines if ln.metric == "tput_per_gpu"),
        key=lambda ln: float(ln.where.split()[1]),
    )
    assert top.verdict == "not comparable" and "c1 (client: loop lag" in top.note
    assert not report.regressed


def test_a_distrusted_point_shapes_no_resampled_frontier() -> None:
    # A baseline whose c4 is invalid with 10x the throughput would dominate c16 in every
    # resample if it entered them (measured before the fix: no resample defined at c16's
    # interactivity, and [-42, +5] % at c1's); the central frontier leaves it out, so must they.
    base = _distrust(BASE, "c4", "failures: 12 % failed")
    arrays, window_s = base.points["c4"]
    inflated = {**base.points, "c4": (arrays, window_s / 10)}
    lines = check(simulated_run("b", seed=2), RunSample("a", base.rows, inflated), RULE).lines
    tput = [ln for ln in lines if ln.metric == "tput_per_gpu"]
    assert len(tput) == 2 and {ln.verdict for ln in tput} == {"no change"}
    assert all(ln.lo is not None and ln.hi is not None and ln.hi - ln.lo < 0.15 for ln in tput)


def test_a_candidate_without_a_valid_point_is_undecided_not_passed() -> None:
    from scoville.report.gate import summary_line

    cand = simulated_run("b", seed=2)
    for pid in ("c1", "c4", "c16"):
        cand = _distrust(cand, pid, "client: loop lag p99 40 ms (> 10 ms)")
    report = check(cand, BASE, RULE)
    tput = [ln for ln in report.lines if ln.metric == "tput_per_gpu"]
    assert tput and {ln.verdict for ln in tput} == {"not comparable"}
    assert "no valid point" in tput[0].note and not report.regressed
    assert summary_line(report).startswith("UNDECIDED")


def _with_levels(sample: RunSample, keep: tuple[str, ...] = ("c1", "c4", "c16")) -> RunSample:
    rows = [
        {**r, "mode": "concurrency", "level": float(str(r["point_id"])[1:])}
        for r in sample.rows
        if r["point_id"] in keep
    ]
    points = {pid: v for pid, v in sample.points.items() if pid in keep}
    return RunSample(sample.run_id, rows, points)


def test_a_level_the_candidate_never_ran_is_not_comparable() -> None:
    # The candidate's sweep starts at concurrency 4: c1's interactivity is not its to reach.
    report = check(
        _with_levels(simulated_run("b", seed=2), ("c4", "c16")), _with_levels(BASE), RULE
    )
    top = max(
        (ln for ln in report.lines if ln.metric == "tput_per_gpu"),
        key=lambda ln: float(ln.where.split()[1]),
    )
    assert top.verdict == "not comparable" and "no concurrency as light as c1" in top.note
    assert not report.regressed
