"""Run-to-run noise from replicate baselines: a shift an identical rerun also shows is not a
regression; a change well beyond the reruns' spread still is."""

from __future__ import annotations

from tests.analysis.test_regression import RULE, simulated_run

from scoville.analysis.regression import check
from scoville.analysis.run_noise import ONE_BASELINE, with_run_noise

BASE = simulated_run("a", seed=1)


def _tput(report) -> list[str]:  # type: ignore[no-untyped-def]
    return [ln.verdict for ln in report.lines if ln.metric == "tput_per_gpu"]


def test_a_loaded_machine_alone_is_not_a_regression_once_reruns_show_it() -> None:
    # The candidate is the same server whose windows ran 20 % long (a busy machine): the request
    # bootstrap alone calls that a regression. Two identical reruns of the baseline ran 18 % long
    # and 15 % short: their changes at the first level (-15.6 %, +16.5 %) give s = 16.1 %, and
    # t(0.975, 2) = 4.30 puts the bound at 69 %, so the candidate's -17 % is within what reruns
    # do (the level no rerun reached pools the four tput changes of the others).
    cand = simulated_run("c", seed=2, window=0.20)
    single = check(cand, BASE, RULE)
    assert set(_tput(single)) == {"regression"}
    reruns = [simulated_run("r1", seed=3, window=0.18), simulated_run("r2", seed=4, window=-0.15)]
    report = with_run_noise(single, [check(r, BASE, RULE) for r in reruns])
    assert set(_tput(report)) == {"no change"} and not report.regressed
    line = next(ln for ln in report.lines if ln.metric == "tput_per_gpu")
    assert "(here, 2 change(s)): bound" in line.note


def test_a_change_far_beyond_the_reruns_spread_stays_a_regression() -> None:
    # Reruns within +-2 %: s ~ 2 %, bound ~ 9 %; a server 3x slower (-67 %) is still flagged.
    cand = simulated_run("c", seed=2, window=2.0)
    reruns = [simulated_run("r1", seed=3, window=0.02), simulated_run("r2", seed=4, window=-0.02)]
    report = with_run_noise(check(cand, BASE, RULE), [check(r, BASE, RULE) for r in reruns])
    assert set(_tput(report)) == {"regression"} and report.regressed


def test_one_baseline_says_what_its_interval_does_not_cover() -> None:
    report = with_run_noise(check(simulated_run("b", seed=2), BASE, RULE), [])
    assert ONE_BASELINE in report.notes
