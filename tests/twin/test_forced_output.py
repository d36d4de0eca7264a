"""Speculative decoding on forced-length outputs: a benchmark that ignores EOS makes the model
go on past its answer, the continuation repeats itself and its drafts are all accepted
(`SpecDecode.steps_per_token`). Golden numbers are worked by hand in the comments."""

from __future__ import annotations

import math

import pytest
from typer.testing import CliRunner

from scoville.client.plan import length_requests
from scoville.commands.twin import app
from scoville.errors import TargetError
from scoville.twin.fast import run_point
from scoville.twin.frontier import frontier_rows
from scoville.twin.layout import DEFAULT_ACCEPTANCE
from scoville.twin.layout import SpecDecode as Spec
from scoville.twin.target import parse_twin_url

from .owners import fit_reads

# the scale that makes three drafts give L = 2 tokens a step: 1 / (0.80 + 0.62 + 0.51)
HALF = 1.0 / sum(DEFAULT_ACCEPTANCE[:3])


def test_steps_per_token_worked_by_hand() -> None:
    # L = 2, A = 1 + 3 = 4, N = T = 1000: (T + N ln((4 - 2 e^-1) / 2)) / (4 T)
    # = (1 + ln 1.632121) / 4 = (1 + 0.489880) / 4 = 0.372470
    spec = Spec(3, acceptance_scale=HALF, loop_after_tokens=1000.0)
    assert spec.tokens_per_step() == pytest.approx(2.0)
    assert spec.steps_per_token(1000) == pytest.approx(0.372470, abs=1e-6)
    # a short output barely repeats (1 / L); a very long one repeats nearly throughout (1 / A)
    assert spec.steps_per_token(1) == pytest.approx(0.5, abs=1e-3)
    assert spec.steps_per_token(10**7) == pytest.approx(0.25, abs=1e-3)
    # off (N = 0), a declared length or no drafts: the same at every length
    assert Spec(3, acceptance_scale=HALF).steps_per_token(8192) == pytest.approx(0.5)
    assert Spec(3, 2.0, loop_after_tokens=1000.0).steps_per_token(8192) == 0.5
    assert Spec(0, loop_after_tokens=1000.0).steps_per_token(8192) == 1.0


def test_the_mean_over_an_output_agrees_with_a_sum_over_its_tokens() -> None:
    # the closed form against the plain sum of 1 / L(n) over the tokens n = 0.5 .. T - 0.5
    spec = Spec(2, acceptance_scale=0.7, loop_after_tokens=3000.0)
    top, flat = 3.0, spec.tokens_per_step()
    for t in (1024, 8192):
        steps = sum(1 / (top - (top - flat) * math.exp(-(n + 0.5) / 3000)) for n in range(t))
        assert spec.steps_per_token(t) == pytest.approx(steps / t, rel=1e-6)


def _tpot_ms(url: str, osl: int, conc: int = 1) -> float:
    res = run_point(
        parse_twin_url(url), length_requests(2 * conc, 1024, osl), "c", concurrency=conc
    )
    return frontier_rows([res])[0].median_tpot_s * 1e3


URL = "twin:B200/DeepSeek-R1?precision=fp4&tp=8&ep=8&framework=sglang&mtp=3"


def test_one_sequence_s_tpot_follows_its_outputs_mean_acceptance() -> None:
    """At one sequence every decode step is the sequence's own, so its TPOT scales with its
    verify steps per token: (steps_per_token(T) with N = 2000) / (1 / L) exactly, whatever
    the step costs."""
    off = _tpot_ms(URL + "&loop_after=0", 8192)
    on = _tpot_ms(URL + "&loop_after=2000", 8192)
    spec = parse_twin_url(URL + "&loop_after=2000").parallel.spec
    expected = spec.steps_per_token(8192) * spec.tokens_per_step()
    assert on / off == pytest.approx(expected, rel=2e-3)
    assert expected < 0.8  # the repetition is worth more than a fifth of the time here


def test_long_outputs_gain_more_than_short_ones_and_plain_decoding_none() -> None:
    short = _tpot_ms(URL + "&loop_after=2000", 1024, 4) / _tpot_ms(URL + "&loop_after=0", 1024, 4)
    long = _tpot_ms(URL + "&loop_after=2000", 8192, 4) / _tpot_ms(URL + "&loop_after=0", 8192, 4)
    assert long < short < 1.0
    plain = URL.replace("&mtp=3", "")
    assert _tpot_ms(plain + "&loop_after=2000", 1024) == _tpot_ms(plain, 1024)


def test_a_negative_loop_length_is_refused_with_its_option_named() -> None:
    with pytest.raises(TargetError, match="loop_after"):
        parse_twin_url(URL + "&loop_after=-1")


def test_the_fit_reads_the_loop_length_on_default_curve_speculative_rows_only() -> None:
    assert fit_reads("loop_after_tokens", URL)
    assert not fit_reads("loop_after_tokens", URL + "&mtp_al=2.5")
    assert not fit_reads("loop_after_tokens", URL.replace("&mtp=3", ""))


def test_the_acceptance_a_prediction_rests_on_is_said() -> None:
    # L = 2, N = 1000: over 1,024 tokens 1 / 0.370901 = 2.70 tokens a step, over 8,192 3.69
    # (the closed form by hand: (T + N ln((4 - 2 e^(-T/N)) / 2)) / (4 T))
    text = Spec(3, acceptance_scale=HALF, loop_after_tokens=1000.0).describe()
    assert text.startswith("3 draft(s) on the default curve: 2.00 tokens per verify step")
    assert "repeats itself after 1,000 output tokens" in text
    assert "2.70 tokens per step over a 1,024-token output, 3.69 over 8,192" in text
    assert Spec(3, acceptance_scale=HALF).describe().endswith("never repeat (loop_after=0)")
    assert Spec(3, 2.5).describe() == "2.50 tokens per verify step of 3 draft(s), declared (mtp_al)"
    assert Spec(0).describe() == ""
    args = ["simulate", "--hardware", "B200", "--model", "DeepSeek-R1", "--tp", "8", "--ep", "8"]
    args += ["--precision", "fp4", "--framework", "sglang", "--isl", "256", "--osl", "16"]
    args += ["--concurrency", "1", "--no-bundle"]
    out = CliRunner().invoke(app, [*args, "--mtp", "3"], env={"COLUMNS": "300"})
    assert out.exit_code == 0, out.output
    assert "acceptance 3 draft(s) on the default curve" in out.output
    plain = CliRunner().invoke(app, args, env={"COLUMNS": "300"})
    assert plain.exit_code == 0 and "acceptance" not in plain.output
