"""Dataset length profiles and open-loop calibration rows (MLPerf's Offline, Server and
Interactive scenarios): lengths drawn as the quantile table says, Poisson rows whose
throughput follows the offered load until the deployment saturates."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from scoville.twin.calibration import (
    DATASET,
    OPEN_LOOP,
    CalPoint,
    check_workload,
    point_options,
    regimes,
    simulate_point,
)
from scoville.twin.lengths import LengthProfile, Lengths, load_lengths, seed_of
from scoville.twin.openloop import (
    OPEN_LOOP_CAP,
    OPEN_LOOP_REQUESTS,
    SERVED_FLOOR,
    WARMUP_SHARE,
    request_cap,
)
from scoville.workload.arrivals import arrival_offsets_ns

URL = "twin:H100/Llama-3.1-8B?tp=1&precision=fp8&kv=fp8"

TABLE = Lengths(quantiles=((0.0, 10), (0.5, 100), (0.9, 400), (1.0, 2000)), source="made up")
PROFILE = LengthProfile(
    dataset="made up", samples=1000, tokenizer="none", input=TABLE,
    output=Lengths(quantiles=((0.0, 1), (1.0, 128)), source="made up"),
)  # fmt: skip


def _row(**kw: object) -> CalPoint:
    base: dict[str, object] = {
        "id": "made-up-row",
        "url": URL,
        "isl_tokens": 1024,
        "osl_tokens": 128,
        "published": {"tput_per_gpu": 1.0},
        "split": "dev",
        "source": "made up",
    }
    return CalPoint.model_validate({**base, **kw})


def test_draws_follow_the_quantile_table() -> None:
    isl = np.array([a for a, _ in PROFILE.draw(4000, seed=7)])
    for q, tokens in TABLE.quantiles[1:-1]:
        assert np.mean(isl <= tokens) == pytest.approx(q, abs=0.01)
    assert isl.min() >= 10 and isl.max() <= 2000
    # the heavy tail (10 % of the mass between 400 and 2000) carries the mean above the median
    assert TABLE.mean() == pytest.approx(isl.mean(), rel=0.01)
    assert TABLE.mean() > 2 * 100


def test_outputs_drawn_at_a_runs_own_mean_keep_the_tables_shape() -> None:
    """A run whose model answered shorter than the reference: its outputs are the table's,
    each scaled by the ratio of the means, so the mean is the run's and every quantile moves
    by the same ratio (the inputs are untouched)."""
    out = PROFILE.output
    plain = PROFILE.draw(4000, seed=7)
    short = PROFILE.draw(4000, seed=7, output_mean=0.8 * out.mean())
    assert [a for a, _ in short] == [a for a, _ in plain]
    osl = np.array([b for _, b in short])
    assert osl.mean() == pytest.approx(0.8 * out.mean(), rel=0.01)
    assert np.median(osl) == pytest.approx(0.8 * np.median([b for _, b in plain]), rel=0.02)
    assert osl.max() == round(0.8 * 128) and osl.min() >= 1


def test_draws_repeat_for_a_seed_and_differ_between_seeds() -> None:
    assert PROFILE.draw(50, seed=1) == PROFILE.draw(50, seed=1)
    assert PROFILE.draw(50, seed=1) != PROFILE.draw(50, seed=2)


@pytest.mark.parametrize(
    "quantiles",
    [
        ((0.1, 5), (1.0, 9)),
        ((0.0, 5), (0.5, 4), (1.0, 9)),
        ((0.0, 5), (0.5, 6), (0.5, 7), (1.0, 9)),
    ],
)
def test_a_quantile_table_must_run_from_0_to_1_and_never_fall(quantiles: object) -> None:
    with pytest.raises(ValidationError):
        Lengths(quantiles=quantiles, source="x")


def test_shipped_profiles_parse_and_state_their_sources() -> None:
    for name, prof in load_lengths().profiles.items():
        assert prof.input.source and prof.output.source, name
        isl, osl = prof.mean_lengths()
        assert osl >= 1 and isl >= 1


def test_an_open_loop_row_needs_its_request_count_and_no_concurrency() -> None:
    with pytest.raises(ValueError, match="open-loop"):
        check_workload(_row(request_rate=2.0))
    with pytest.raises(ValueError, match="open-loop"):
        check_workload(_row(request_rate=2.0, requests=100, concurrency=4))
    check_workload(_row(request_rate=2.0, requests=100))


def test_a_profile_row_states_the_profile_mean_input_and_its_own_mean_output() -> None:
    names = sorted(load_lengths().profiles)
    if not names:
        pytest.skip("no shipped length profile")
    isl, osl = load_lengths().profiles[names[0]].mean_lengths()
    with pytest.raises(ValueError, match="mean input"):
        check_workload(_row(lengths=names[0], requests=100, isl_tokens=isl + 7, osl_tokens=osl))
    check_workload(_row(lengths=names[0], requests=100, isl_tokens=isl, osl_tokens=osl))
    # the run's model answered a tenth shorter than the reference: its own mean is the row's
    check_workload(_row(lengths=names[0], requests=100, isl_tokens=isl, osl_tokens=osl * 9 // 10))


def test_open_loop_throughput_follows_the_offered_load_then_saturates() -> None:
    """At a light Poisson load the deployment serves what arrives; far past its capacity it
    serves its own rate: at least what an all-at-once run of the same deployment averages
    (which also holds its ramp-up and its drain) and not much more."""
    light = _row(request_rate=2.0, requests=400)
    got = simulate_point(light)
    offered = 2.0 * (1024 + 128)  # tokens a second on one GPU
    assert got["tput_per_gpu"] == pytest.approx(offered, rel=0.15)
    # light load: a prompt waits for nothing, so TTFT is a single prefill, far below a second
    assert got["ttft_ms"] < 200

    # about 1.6x what the deployment serves, over some forty seconds of arrivals
    heavy = simulate_point(_row(request_rate=80.0, requests=3000))
    offline = simulate_point(_row(requests=3000))
    assert heavy["tput_per_gpu"] < 0.8 * 80.0 * (1024 + 128)
    assert 0.95 * offline["tput_per_gpu"] < heavy["tput_per_gpu"] < 1.3 * offline["tput_per_gpu"]
    assert heavy["ttft_ms"] > 10 * got["ttft_ms"]  # the queue grows
    # the twin says which of the two it keeps up with
    assert got["served_share"] > SERVED_FLOOR
    assert heavy["served_share"] < 0.8


def test_an_open_loop_window_runs_as_long_as_the_run_as_far_as_it_affords() -> None:
    """A Server run of 884,736 requests is simulated on 250,000 of them (its TPOT settles
    after a quarter of an hour of arrivals, not in the first minute); one of long outputs on
    fewer, by its output tokens, but never fewer than 20,000; a run shorter than that whole;
    quick fitting on 3,000; an all-at-once run by its seats."""
    server = _row(request_rate=364.0, requests=884_736, osl_tokens=274)
    assert request_cap(server, 2048, quick=False) == OPEN_LOOP_REQUESTS == 250_000
    assert request_cap(server, 2048, quick=True) == 3_000
    long_out = server.model_copy(update={"osl_tokens": 3_657})
    assert request_cap(long_out, 2048, quick=False) == 100_000_000 // 3_657
    longer = server.model_copy(update={"osl_tokens": 20_000})
    assert request_cap(longer, 2048, quick=False) == OPEN_LOOP_CAP == 20_000
    offline = _row(requests=50_000)
    assert request_cap(offline, 512, quick=False) == 8 * 512


def test_open_loop_rows_carry_their_regimes() -> None:
    row = _row(request_rate=2.0, requests=100)
    tags = regimes(row, point_options(row).config())
    assert OPEN_LOOP in tags and DATASET not in tags


def test_open_loop_throughput_leaves_out_the_window_drain() -> None:
    """Outputs of very different lengths: the longest end long after the last arrival and the
    shortest soon after the first. A ten-minute run barely feels that spread, a simulated window
    of a few hundred arrivals would: the rate is read while requests arrive, and equals what
    arrived in that window."""
    row = _row(request_rate=2.0, requests=150, isl_tokens=128, osl_tokens=3000, range_ratio=0.05)
    got = simulate_point(row)
    assert got["tpot_ms"] * 3000 > 10_000  # the longest requests outlive twenty arrivals
    offsets = arrival_offsets_ns(150, 2.0, 1.0, seed_of(row.id))
    warm = int(150 * WARMUP_SHARE)
    arrived = (150 - 1 - warm) / ((offsets[-1] - offsets[warm]) / 1e9)  # requests a second
    mean_tokens = (1.0 + 0.05) / 2 * (128 + 3000)
    assert got["tput_per_gpu"] == pytest.approx(arrived * mean_tokens, rel=0.05)


def test_an_all_at_once_dataset_run_reads_its_full_batch_not_its_ramp() -> None:
    """An Offline run of a few batches' worth reads about the rate a run of many reads (here
    within 10 %: outputs of one length keep the waves in step, the hardest case): the full
    batch turning over, not the first batch's prompts nor the drain."""
    isl, osl = load_lengths().profiles["mlperf-llama3.1-8b"].mean_lengths()
    url = URL + "&max_num_seqs=32"
    rates = []
    for n in (160, 640):
        row = _row(
            url=url, lengths="mlperf-llama3.1-8b", requests=n, isl_tokens=isl, osl_tokens=osl
        )
        rates.append(simulate_point(row)["tput_per_gpu"])
    assert rates[0] == pytest.approx(rates[1], rel=0.10)
    whole = simulate_point(_row(url=url, requests=160, isl_tokens=isl, osl_tokens=osl))
    assert rates[0] > 1.05 * whole["tput_per_gpu"]  # a run this short is much ramp and drain


def test_validate_names_the_open_loop_rows_the_twin_does_not_keep_up_with(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`validate` carries an open-loop row's served share; the regime table's notes name the
    rows below SERVED_FLOOR with their share, and only those."""
    from rich.console import Console

    import scoville.commands.twin_calibration as cmd
    from scoville.twin.calibration import Comparison, validate

    (light,) = {c.served_share for c in validate([_row(request_rate=2.0, requests=400)])}
    assert light is not None and light > SERVED_FLOOR
    rows = [
        Comparison("behind", "dev", "tpot_ms", 10.0, 30.0, ("x",), None, 0.62),
        Comparison("keeps-up", "dev", "tpot_ms", 10.0, 9.0, ("x",), None, 0.99),
        Comparison("closed", "dev", "tpot_ms", 10.0, 9.0, ("x",)),
    ]
    monkeypatch.setattr(cmd, "console", Console(record=True, width=400))
    cmd._print_regimes(rows, "dev")
    text = cmd.console.export_text()
    line = next(t for t in text.splitlines() if "of the offered load" in t)
    assert "1 open-loop row(s) of dev (behind 0.62)" in line
    assert "keeps-up" not in text and "closed 0" not in text


def test_the_fit_reads_an_open_loop_rows_throughput_not_its_fill_up_latencies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A quick window ends before a run near capacity settles: `twin fit` weighs an open-loop
    row's throughput and leaves its TPOT and TTFT out; a closed-loop row counts all three."""
    import math

    import scoville.twin.fit as fit_mod
    from scoville.twin.profiles import load_profiles

    # throughput 2x the published, TPOT and TTFT exact
    pred = {"tput_per_gpu": 200.0, "tpot_ms": 10.0, "ttft_ms": 100.0}
    monkeypatch.setattr(fit_mod, "simulate_point", lambda *a, **k: pred)
    published = {"tput_per_gpu": 100.0, "tpot_ms": 10.0, "ttft_ms": 100.0}
    open_row = _row(request_rate=2.0, requests=100, published=published)
    assert fit_mod.loss([open_row], load_profiles()) == pytest.approx(math.log(2))
    closed = _row(concurrency=4, published=published)
    # the exact TPOT and TTFT weigh 1 and 0.5 of the 2.5 in all
    assert fit_mod.loss([closed], load_profiles()) == pytest.approx(math.log(2) / 2.5)


def test_a_rack_scale_all_at_once_run_is_read_on_as_many_replicas_as_it_affords(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An Offline run over identical replicas reads the same throughput a GPU on a few of them:
    each gets the same share of the requests, so the tokens budget keeps the memory of a
    rack-scale run (millions of requests) in bounds without moving its reading."""
    import scoville.twin.openloop as ol
    from scoville.twin.cluster import seat_limit

    isl, osl = load_lengths().profiles["mlperf-llama3.1-8b"].mean_lengths()
    row = _row(
        url=URL + "&max_num_seqs=16&replicas=8",
        lengths="mlperf-llama3.1-8b",
        requests=1024,
        isl_tokens=isl,
        osl_tokens=osl,
    )
    whole = simulate_point(row)["tput_per_gpu"]
    budget = 1024 * osl // 4  # a quarter of the run's output tokens: two of its eight replicas
    monkeypatch.setattr(ol, "OFFLINE_TOKENS", budget)
    cfg = point_options(row).config()
    kept, n = ol.replicas_within(cfg, 1024, osl)
    assert (kept.replicas, n, seat_limit(kept)) == (2, 256, seat_limit(cfg) // 4)
    assert simulate_point(row)["tput_per_gpu"] == pytest.approx(whole, rel=0.03)
