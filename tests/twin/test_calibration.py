"""Calibration table integrity, validate output, and the implied-physics `explain`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clirun import scoville
from scoville.commands.twin import app
from scoville.twin.calibration import CalPoint, load_points, simulate_point, validate
from scoville.twin.catalogue import load_catalogue
from scoville.twin.profiles import load_profiles
from scoville.twin.target import parse_twin_url
from scoville.twin.verdict import explain


def test_every_calibration_point_has_a_source_and_a_parsable_url() -> None:
    points = load_points()
    assert any(p.split == "dev" for p in points) and any(p.split == "test" for p in points)
    for p in points:
        assert p.source
        parse_twin_url(p.url)
        assert p.split == "dev" or not p.fitted  # only dev points may ever be fitted


def test_validate_compares_each_published_metric() -> None:
    (p,) = [p for p in load_points() if p.id == "h100-gptoss-tp8-8k1k-c4"]
    rows = validate([p], requests_per_point=8)
    assert {r.metric for r in rows} == {"tput_per_gpu", "tpot_ms"}
    for r in rows:
        assert r.error == pytest.approx((r.predicted - r.published) / r.published)


def test_explain_implied_bandwidth_by_hand() -> None:
    cat = load_catalogue()
    (tp1, tp2) = explain(
        cat.get_model("gpt-oss-120b"), 1000.0, 1000, cat.get_hardware("H200"), tps=(1, 2)
    )
    # per token at batch 1, 1000 tokens of context (B): attention + router BF16 1,937,571,840;
    # 4 experts x 36 layers x 24,883,200 x 0.53125 = 1,903,564,800; LM head 1,158,266,880;
    # KV read 36,864 x 1000 + 36,864 x 128 = 41,582,592; KV write 73,728; activations
    # 8,792,064 (see test_costmodel) -> 5,049,851,904 B. At 1 ms per token that is
    # 5.05 TB/s: more than one H200's 4.8 TB/s peak.
    assert tp1.hbm_tb_s == pytest.approx(5.049851904)
    assert tp1.hbm_fraction is not None and tp1.hbm_fraction > 1.0
    assert tp2.hbm_tb_s == pytest.approx(5.049851904 / 2, rel=0.01)
    assert tp1.twin_tpot_s is not None and tp1.twin_tpot_s > 1e-3


def test_explain_and_validate_commands_print_tables() -> None:
    r = CliRunner().invoke(
        app, ["twin", "explain", "--intvty", "1459", "--hardware", "Jalapeno-B0"]
    )
    assert r.exit_code == 0, r.output
    assert "TPOT 0.685 ms" in r.output


def test_the_split_is_frozen_and_seed_rows_are_never_held_out() -> None:
    from scoville.twin.calibration import load_book

    book = load_book()
    assert book.frozen.date.startswith("2026-")
    seed = [p for p in book.points if "Seed claim" in p.source]
    assert seed and all(p.split == "seed" for p in seed)
    tests = [p for p in book.points if p.split == "test"]
    hw = {parse_twin_url(p.url).hardware.name for p in tests}
    models = {parse_twin_url(p.url).model.name for p in tests}
    assert {"H100", "H200", "B200", "GB200", "MI300X", "MI355X"} <= hw
    assert len(models) >= 3


def test_rows_added_after_the_freeze_are_labelled_late_and_never_fitted() -> None:
    from scoville.twin.calibration import load_book

    book = load_book()
    late = [p for p in book.points if p.split == "late"]
    assert late and book.frozen.late
    for p in late:
        assert p.added is not None and p.added > book.frozen.date and not p.fitted
    assert "GB300" in {parse_twin_url(p.url).hardware.name for p in late}
    assert all(
        p.added is None
        for p in book.points
        if p.split
        not in (
            "late",
            "blind",
            "blind2",
            "blind3",
            "blind4",
            "blind5",
            "blind6",
            "blind7",
            "blind8",
            "blind9",
            "blind10",
            "blind11",
            "blind12",
            "blind13",
            "blind14",
            "blind15",
            "blind16",
            "blind17",
            "blind18",
            "blind19",
            "blind20",
            "blind21",
            "blind22",
            "blind25",
            "blind26",
            "blind27",
            "blind28",
            "blind29",
            "blind30",
            "blind31",
            "blind32",
            "blind33",
            "blind34",
            "blind35",
            "blind36",
            "blind37",
            "blind38",
            "blind39",
            "blind40",
            "blind41",
            "blind42",
            "blind43",
            "blind45",
            "blind46",
            "blind47",
            "blind48",
            "blind49",
            "blind50",
            "blind51",
        )
        and not p.was
    )


def test_blind_rows_seen_once_moved_to_dev_keep_their_date_and_share_nothing() -> None:
    from scoville.twin.calibration import load_book

    book = load_book()
    seen = [p for p in book.points if p.was and p.was.startswith("blind ")]
    assert len(seen) == 32 and book.frozen.blind.startswith("frozen 2026-12-01T10:22Z")
    assert "moved to dev" in book.frozen.blind
    for p in seen:
        assert p.split == "dev" and p.added == "2026-12-01T10:22Z" and p.added > book.frozen.date
    # blind2 and blind3 followed after their one look and a second audit of their settings
    for name, n in (("blind2", 68), ("blind3", 37)):
        moved = [p for p in book.points if p.was and p.was.startswith(name + " ")]
        assert len(moved) == n and "moved to dev" in getattr(book.frozen, name)
        assert all(p.split == "dev" and p.added and p.added < "2026-12-01T12:58Z" for p in moved)
        assert all("validated once, 2026-12-01T12:58Z" in (p.was or "") for p in moved)
    others = [p for p in book.points if not p.was and p.split in ("dev", "test", "seed", "late")]
    # no such row repeats a point of the splits before it (same system, model, lengths,
    # concurrency; the later blind splits hold other runs of some of these configurations)
    key = lambda p: (p.url.split("?")[0], p.isl_tokens, p.osl_tokens, p.concurrency)  # noqa: E731
    assert not {key(p) for p in seen} & {key(p) for p in others}
    models = {parse_twin_url(p.url).model.name for p in seen}
    assert models == {"Qwen3.5-397B-A17B", "GLM-5", "Kimi-K2.5"}


def test_a_moved_row_without_its_added_date_is_refused() -> None:
    from scoville.twin.calibration import CalBook, check_book, load_book

    data = load_book().model_dump(by_alias=True)
    row = next(p for p in data["points"] if p["was"])
    row["added"] = None
    with pytest.raises(ValueError, match="`was`"):
        check_book(CalBook.model_validate(data))


def test_validate_refuses_an_unknown_split_and_names_blind() -> None:
    r = scoville("twin", "validate", "--split", "hidden")
    assert r.returncode == 2, r.stderr
    out = " ".join((r.stdout + r.stderr).split())  # the message is wrapped to the terminal
    assert (
        "--split must be test, dev, seed, late, blind, blind2, blind3, blind4, blind5, blind6, "
        "blind7, blind8, blind9, blind10, blind11, blind12, blind13, blind14, blind15, blind16, "
        "blind17, blind18, blind19, blind20, blind21, blind22, blind25, blind26, blind27, "
        "blind28, blind29, blind30, blind31, blind32, blind33, blind34, blind35, blind36, "
        "blind37, blind38, blind39, blind40, blind41, blind42, blind43, blind45, blind46, "
        "blind47, blind48, blind49, blind50, blind51 or all." in out
    )


def test_errors_by_regime_take_medians_and_signed_bias() -> None:
    from scoville.twin.accuracy import by_regime
    from scoville.twin.calibration import Comparison

    rows = [
        Comparison("a", "test", "tpot_ms", 10.0, 11.0, ("x",)),  # +10 %
        Comparison("b", "test", "tpot_ms", 10.0, 8.0, ("x",)),  # -20 %
        Comparison("c", "test", "tpot_ms", 10.0, 10.5, ("y",)),  # +5 %
        Comparison("d", "dev", "tpot_ms", 10.0, 20.0, ("x",)),  # another split: ignored
    ]
    got = {(r.regime, r.metric): r for r in by_regime(rows, "test", ("tpot_ms",))}
    assert got[("all", "tpot_ms")].n == 3
    assert got[("all", "tpot_ms")].median_abs_error == pytest.approx(0.10)
    assert got[("all", "tpot_ms")].bias == pytest.approx(0.05)
    assert got[("x", "tpot_ms")].median_abs_error == pytest.approx(0.15)
    assert got[("x", "tpot_ms")].bias == pytest.approx(-0.05)


def test_explain_ends_with_a_verdict_and_names_the_deciding_overheads() -> None:
    r = CliRunner().invoke(
        app, ["twin", "explain", "--intvty", "1459", "--hardware", "Jalapeno-B0"]
    )
    assert r.exit_code == 0, r.output
    last = " ".join(r.output.split()).split("verdict: ")[-1]
    assert last.startswith("needs")
    assert "per-step overhead" in r.output and "collective latency" in r.output
    ok = CliRunner().invoke(app, ["twin", "explain", "--intvty", "50", "--hardware", "H200"])
    assert ok.exit_code == 0, ok.output
    assert "verdict: plausible" in " ".join(ok.output.split())


def test_later_blind_splits_are_frozen_before_their_rows_and_never_fitted() -> None:
    from scoville.twin.calibration import load_book

    book = load_book()
    ids = [p.id for p in book.points]
    assert len(ids) == len(set(ids))
    splits = (
        ("blind2", 60),
        ("blind3", 30),
        ("blind4", 50),
        ("blind5", 7),
        ("blind6", 169),
        ("blind7", 86),
        ("blind8", 57),
        ("blind9", 47),
        ("blind10", 48),
        ("blind11", 20),
        ("blind12", 16),
        ("blind13", 5),
        ("blind14", 2),
        ("blind15", 29),
        ("blind16", 60),
        ("blind17", 58),
        ("blind18", 33),
        ("blind19", 107),
        ("blind20", 35),
        ("blind21", 70),
        ("blind22", 6),
        ("blind25", 12),
        ("blind26", 26),
        ("blind27", 60),
        ("blind28", 60),
        ("blind29", 35),
        ("blind30", 60),
        ("blind31", 24),
        ("blind32", 60),
        ("blind33", 40),
        ("blind34", 58),
        ("blind35", 48),
        ("blind36", 30),
        ("blind37", 30),
        ("blind38", 24),
        ("blind39", 33),
        ("blind40", 32),
        ("blind41", 4),
        ("blind42", 36),
        ("blind43", 33),
        ("blind45", 4),
        ("blind46", 52),
        ("blind47", 60),
        ("blind48", 49),
        ("blind49", 48),
        ("blind50", 44),
        ("blind51", 44),
    )
    for name, n_min in splits:
        rows = [p for p in book.points if p.split == name or (p.was or "").startswith(name + " ")]
        text = getattr(book.frozen, name)
        frozen_at = text.split()[1].rstrip(":")  # "frozen 2026-12-01T11:46Z: ..."
        assert len(rows) >= n_min
        assert text.startswith(
            (
                "frozen 2026-12-01T",
                "frozen 2026-12-02T",
                "frozen 2026-12-03T",
                "frozen 2026-12-04T",
                "frozen 2026-12-06T",
                "frozen 2026-12-07T",
            )
        )
        assert "never runs the twin" in text or "WITHOUT running the twin" in text
        assert "Seen:" in text or name in book.held_splits()
        for p in rows:
            assert p.added is not None and p.added >= frozen_at and not p.fitted
            assert p.split == name or p.split == "dev"  # seen, then moved to dev


def _with_unseen_blind6(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped book as it was before blind6's one look (its freeze text without `Seen:`)."""
    import scoville.twin.calibration as cal

    book = cal.load_book()
    text = book.frozen.blind6.split(" Seen: ")[0]
    held = book.model_copy(update={"frozen": book.frozen.model_copy(update={"blind6": text})})
    monkeypatch.setattr(cal, "load_book", lambda: held)


def test_every_later_blind_split_has_had_its_one_look() -> None:
    from scoville.twin.calibration import load_book

    book = load_book()
    # blind10 (frozen 2026-12-02T01:30Z) judged the sparse-attention path's refit and chose a
    # partial revert; blind11 (frozen 02:57Z) judged that choice; blind12 (frozen
    # 2026-12-03T08:55Z) and blind13 (frozen 09:08Z) judged the front-end-per-stack and
    # speculative-verification change, each with one look after its freeze; blind14 (frozen
    # 2026-12-03T09:59Z) and blind15 (frozen 2026-12-04T04:31Z) judged the acceptance scales,
    # each with one look at 05:10Z; blind16 (frozen 2026-12-04T06:01Z) judged the book shipped
    # after that look (the scales taken out again), with one look at 19:30Z; blind17 (frozen
    # 2026-12-04T19:51Z) judged SGLang's 16-bit MLA decode path and the attention rate, with
    # one look at 22:27Z; blind18 (frozen 2026-12-04T22:46Z) judged the TEP all-reduces, Dynamo's
    # own TensorRT-LLM step time and the acceptance scale, with one look at 2026-12-06T02:30Z;
    # blind19 (frozen 2026-12-06T03:44Z, the June 2026 capture of the history file) judged the
    # expert-parallel path's own per-MoE-layer cost, with one look at 04:16Z; blind20 (frozen
    # 04:40Z) did not run SGLang's 16-bit MLA path on CDNA3, with one look at 06:15Z; blind21
    # (frozen 2026-12-06T06:11Z, the same capture's runs no row names) judged it and the FP8 path,
    # with one look at 06:26Z; blind22 (frozen 06:23Z, the May 2026 capture and both
    # benchmarks.json snapshots: the runs no row names) and blind25 (frozen 08:00Z, the
    # InferenceX blog posts no row cited) judged the software's date together, with one look at
    # 09:11Z; blind26 (frozen 09:38Z, PR threads' published baselines that earlier helpers named)
    # judged the software trend refitted with fine steps, with one look at 11:10Z; blind27
    # (frozen 10:26Z, the June 2026 capture's rows for groups its named runs lack) judged the
    # hardware factors refitted with fine steps, with one look at 12:01Z; blind28 (frozen 11:24Z,
    # the same capture's 8k/1k and 1k/8k rows) judged the routed experts' popularity, with one
    # look at 14:07Z; blind31 (frozen 15:26Z, regathered and frozen 15:36Z, the same capture's
    # speculative-decoding rows that neither blind29 nor blind30 took) judged the acceptance over
    # a forced-length output, with one look at 16:21Z; blind30 (frozen 14:25Z, the same
    # capture's 2025-12 to 2026-03 rows that blind29 did not offer) judged trtllm-serve's fixed
    # time moved from every layer to the expert-parallel MoE layers, with one look at 18:36Z;
    # blind29 (frozen 14:13Z, the same capture's 2026 Q2 rows whose run groups no row names) had
    # its one look at 20:51Z on the book as it was, with no change to judge; blind32 (frozen
    # 17:35Z, the same capture's rows of any date and shape whose run groups no row names, 1k/1k
    # first) judged the GB200 Dynamo-TRT rows' FP8 KV cache and the refit it kept, with one look at
    # 23:21Z; blind33 (frozen 22:47Z, the same capture's rows whose run groups no row names after
    # blind32, 1k/8k first) judged the MLA decode path as one kernel and the refit it kept, with
    # one look at 2026-12-07T01:43Z; blind34 (frozen 2026-12-07T06:00Z, TensorRT-LLM's own offline
    # throughput tables) had its one look at 06:01Z on the book as it was, with no change to
    # judge; blind35 (frozen 06:12Z, the older tables of the same vendor) had its one look at
    # 08:20Z on the book as it was (its Llama FP8 rows' KV dtype amended before), with no change
    # to judge; blind36 (frozen 2026-12-07T08:31Z, the v0.17 tables of the same vendor, TensorRT
    # engines) judged TensorRT-LLM's own decode-attention factor, with one look at 11:13Z, and
    # found it worse (reverted); blind37 (frozen 2026-12-07T11:33Z, TensorRT-LLM's release-1.2
    # perf-overview tables) judged the same factor refitted with blind36 in dev, with one look
    # at 12:06Z, and found it worse too (reverted); blind38 (frozen 2026-12-07T13:19Z,
    # TensorRT-LLM's 8a9c66ce and latest perf-overview pages' cells no row held) judged
    # TensorRT-LLM's FP8 context attention, with one look at 13:23Z, and found it better (kept);
    # blind39 (frozen 2026-12-07T13:27Z, the release-1.2 perf-overview cells blind37 did not
    # take) had its one look at 13:37Z on the book as it was, with no change to judge; blind40
    # (frozen 2026-12-07T13:45Z, the release-1.2 perf-overview cells neither blind37 nor blind39
    # took) had its one look at 14:10Z on the book as it was, its rows' engine limits amended
    # before it; blind41 (frozen 2026-12-07T14:15Z, AMD's ROCm vLLM throughput tables: Llama 3.1
    # 70B offline on MI300X) had its one look at 14:18Z on the book as it was; blind42 (frozen
    # 2026-12-07T15:43Z, AMD's ROCm vLLM latency tables and the 405B throughput cells on MI300X)
    # judged synchronous scheduling, with one look at 15:55Z, and found it better (kept), and is in
    # dev; blind43 (frozen 2026-12-07T16:04Z, the same AMD ROCm vLLM tables of the older releases
    # with vLLM 0.8.0 or later) judged vLLM's collectives on CDNA3, with one look at 16:12Z, and
    # found it better (kept); blind45 (frozen 2026-12-07T17:07Z, trtllm-bench results of
    # TensorRT-LLM's DeepSeek-R1 best-practice doc and its DeepSeek-V3.2 tech blog) judged the
    # bench stack, with one look at 17:10Z, and found it better (kept); blind46 (frozen
    # 2026-12-07T18:15Z, MLPerf Inference v5.1 closed LLM results: Offline, Server and Interactive
    # runs) had its one look at 18:17Z on the book as it was; blind47 (frozen 2026-12-07T18:36Z,
    # the MLPerf Inference v5.1 candidates blind46 did not take: every llama3.1-405b one, every
    # 9th of the rest) judged a pipeline's micro-batches, with one look at 18:39Z, and found it
    # better (kept); blind48 (frozen 2026-12-07T20:47Z, the MLPerf v5.1 candidates blind46 and
    # blind47 did not take, every 3rd) judged the open-loop window as long as the run, with one
    # look at 21:02Z, and found it better (kept); blind49 (frozen 2026-12-07T21:26Z, the MLPerf
    # v5.1 candidates blind46, blind47 and blind48 did not take, every 2nd) judged three changes
    # with one look at 23:17Z: vLLM V0's multi-step scheduling (not kept, reverted), MI325X's
    # sustained matmul rate and the measured matmul ceiling (both kept); blind50 (frozen
    # 2026-12-07T23:16Z, MLPerf Inference v6.0 closed LLM results, every 3rd) had its one look at
    # 23:44Z on the book as it was. blind51 (frozen 2026-12-07T23:25Z, the v6.0 candidates
    # blind50 did not take, every 2nd) is held for the next change
    assert book.held_splits() == ("blind51",)
    looks = (
        ("blind12", "2026-12-03T08:55Z", "2026-12-03T09:29Z"),
        ("blind13", "2026-12-03T09:08Z", "2026-12-03T09:29Z"),
        ("blind14", "2026-12-03T09:59Z", "2026-12-04T05:10Z"),
        ("blind15", "2026-12-04T04:31Z", "2026-12-04T05:10Z"),
        ("blind16", "2026-12-04T06:01Z", "2026-12-04T19:30Z"),
        ("blind17", "2026-12-04T19:51Z", "2026-12-04T22:27Z"),
        ("blind18", "2026-12-04T22:46Z", "2026-12-06T02:30Z"),
        ("blind19", "2026-12-06T03:44Z", "2026-12-06T04:16Z"),
        ("blind20", "2026-12-06T04:40Z", "2026-12-06T06:15Z"),
        ("blind21", "2026-12-06T06:11Z", "2026-12-06T06:26Z"),
        ("blind22", "2026-12-06T06:23Z", "2026-12-06T09:11Z"),
        ("blind25", "2026-12-06T08:00Z", "2026-12-06T09:11Z"),
        ("blind26", "2026-12-06T09:38Z", "2026-12-06T11:10Z"),
        ("blind27", "2026-12-06T10:26Z", "2026-12-06T12:01Z"),
        ("blind28", "2026-12-06T11:24Z", "2026-12-06T14:07Z"),
        ("blind31", "2026-12-06T15:36Z", "2026-12-06T16:21Z"),
        ("blind30", "2026-12-06T14:25Z", "2026-12-06T18:36Z"),
        ("blind29", "2026-12-06T14:13Z", "2026-12-06T20:51Z"),
        ("blind32", "2026-12-06T17:35Z", "2026-12-06T23:21Z"),
        ("blind33", "2026-12-06T22:47Z", "2026-12-07T01:43Z"),
        ("blind34", "2026-12-07T06:00Z", "2026-12-07T06:01Z"),
        ("blind35", "2026-12-07T06:12Z", "2026-12-07T08:20Z"),
        ("blind36", "2026-12-07T08:31Z", "2026-12-07T11:13Z"),
        ("blind37", "2026-12-07T11:33Z", "2026-12-07T12:06Z"),
        ("blind38", "2026-12-07T13:19Z", "2026-12-07T13:23Z"),
        ("blind39", "2026-12-07T13:27Z", "2026-12-07T13:37Z"),
        ("blind40", "2026-12-07T13:45Z", "2026-12-07T14:10Z"),
        ("blind41", "2026-12-07T14:15Z", "2026-12-07T14:18Z"),
        ("blind42", "2026-12-07T15:43Z", "2026-12-07T15:55Z"),
        ("blind43", "2026-12-07T16:04Z", "2026-12-07T16:12Z"),
        ("blind45", "2026-12-07T17:07Z", "2026-12-07T17:10Z"),
        ("blind46", "2026-12-07T18:15Z", "2026-12-07T18:17Z"),
        ("blind47", "2026-12-07T18:36Z", "2026-12-07T18:39Z"),
        ("blind48", "2026-12-07T20:47Z", "2026-12-07T21:02Z"),
        ("blind49", "2026-12-07T21:26Z", "2026-12-07T23:17Z"),
        ("blind50", "2026-12-07T23:16Z", "2026-12-07T23:44Z"),
    )
    for name, frozen_at, seen_at in looks:
        text = getattr(book.frozen, name)
        assert text.count("Seen:") == 1 and text.index(f"frozen {frozen_at}") < text.index("Seen:")
        assert f"at {seen_at}" in text[text.index("Seen:") :] and frozen_at < seen_at
    assert "blind11 judges it" in book.frozen.blind10
    assert book.frozen.blind10.index("Seen:") < book.frozen.blind10.index("blind11 judges it")
    # blind5 was frozen (14:34Z) before the changes it judged and looked at once after them
    text = book.frozen.blind5
    assert "held for the next model change" in text and text.count("Seen:") == 1
    assert text.index("frozen 2026-12-01T14:34Z") < text.index("Seen:")


def test_validate_all_leaves_out_a_split_held_for_the_next_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _with_unseen_blind6(monkeypatch)
    # only blind6 ids carry "vllm" for H200 GLM-5, so nothing is simulated here
    r = CliRunner().invoke(
        app, ["twin", "validate", "--split", "all", "--only", "h200-glm5-fp8-vllm"]
    )
    assert r.exit_code == 0, r.output
    out = " ".join(r.output.split())
    assert "left out of all: the blind6 split is held for the next model change" in out
    assert "│ h200-glm5-fp8-vllm" not in r.output
    one = "h200-glm5-fp8-vllm-tp8-isl1024-osl128-c8"
    named = CliRunner().invoke(app, ["twin", "validate", "--split", "blind6", "--only", one])
    assert named.exit_code == 0 and one in named.output


def test_a_fitted_profile_book_keeps_each_row_s_own_deployment_settings() -> None:
    # `twin fit` re-derives rows under a candidate profile book; the row's own settings
    # (here a 32,768-token prefill chunk and a receive interval) must survive, so the shipped
    # book reproduces exactly what `twin validate` predicts for the row
    row = next(p for p in load_points() if p.id == "b200-qwen35-bf16-sglang-tp8-1k1k-c64")
    assert "max_batched_tokens=32768" in row.url and "recv_interval=30" in row.url
    plain = simulate_point(row, quick=True)
    refit = simulate_point(row, quick=True, book=load_profiles())
    assert refit == plain


def test_fit_only_refuses_a_pattern_that_names_no_parameter() -> None:
    r = CliRunner().invoke(app, ["twin", "fit", "--only", "no-such-knob"])
    assert r.exit_code == 2, r.output
    assert "No free parameter's name contains 'no-such-knob'" in r.output
    assert "frameworks.sglang.sparse_layer_overhead_s" in r.output


def test_validate_in_several_processes_gives_the_same_comparisons() -> None:
    rows = [p for p in load_points() if p.split == "dev" and p.concurrency and p.concurrency <= 4]
    assert len(rows) >= 2
    one = validate(rows[:2], quick=True, jobs=1)
    two = validate(rows[:2], quick=True, jobs=2)
    assert one == two and {c.point_id for c in one} == {p.id for p in rows[:2]}


def test_fit_refuses_fewer_than_one_job() -> None:
    r = CliRunner().invoke(app, ["twin", "fit", "--jobs", "0"])
    assert r.exit_code == 2, r.output
    assert "--jobs" in r.output


def test_fit_only_takes_several_comma_separated_patterns_in_the_fits_order() -> None:
    from scoville.twin.free_params import FREE_PARAMS, select_params

    both = [p.name for p in select_params("stacks., spec_seq")]
    assert both[:2] == ["stacks.dynamo.frontend_s", "stacks.mori.frontend_s"]
    assert set(both) == {
        *(
            f"stacks.{s}.{k}"
            for s in ("dynamo", "mori")
            for k in ("frontend_s", "frontend_s_per_token")
        ),
        "stacks.dynamo.engine_step_overhead_s.trt",
        "stacks.bench.engine_step_overhead_s.trt",
        *(f"frameworks.{fw}.spec_seq_overhead_s" for fw in ("vllm", "sglang", "trt", "atom")),
    }
    assert [p.name for p in select_params(None)] == [p.name for p in FREE_PARAMS]
    assert select_params(" , ") == list(FREE_PARAMS) and select_params("nothing,else") == []


def test_a_split_whose_rows_moved_to_dev_says_so() -> None:
    r = CliRunner().invoke(app, ["twin", "validate", "--split", "blind9"])
    assert r.exit_code == 0, r.output
    assert "the blind9 split holds no rows now: its 47 rows were seen and moved to dev" in " ".join(
        r.output.split()
    )


def _stall_row(mean_ttft_ms: float | None, median_ttft_ms: float = 400.0) -> CalPoint:
    from scoville.twin.calibration import Published

    # TPOT 20 ms, OSL 1024 drawn in [0.8, 1] x 1024: a request's time is mean TTFT + 18.4 s
    return CalPoint(
        id="s",
        url="twin:B200/DeepSeek-R1?tp=8&ep=8&precision=fp4&framework=sglang",
        isl_tokens=8192,
        osl_tokens=1024,
        range_ratio=0.8,
        concurrency=8,
        published=Published(
            tput_per_gpu=100.0, tpot_ms=20.0, ttft_ms=median_ttft_ms, mean_ttft_ms=mean_ttft_ms
        ),
        split="test",
        source="s",
    )


def test_a_stalled_start_needs_both_a_skewed_and_a_costly_mean_ttft() -> None:
    from scoville.twin.calibration import stall_share, stalled_start

    assert not stalled_start(_stall_row(None))  # no mean in the source: never flagged
    # 10x the median and 26 % of the request: (6,400 - 400) / (6,400 + 18,432)
    assert stall_share(_stall_row(6400.0)) == pytest.approx(6000 / 24832)
    assert stalled_start(_stall_row(6400.0))
    # the row's own output lengths: exactly 1,024 tokens (range ratio 1), 20,480 ms of decode
    whole = _stall_row(6400.0).model_copy(update={"range_ratio": 1.0})
    assert stall_share(whole) == pytest.approx(6000 / 26880)
    # 4.75x the median: a slow start for all, not a stall of some, however costly (40 %)
    slow = _stall_row(19000.0, median_ttft_ms=4000.0)
    assert stall_share(slow) > 0.15 and not stalled_start(slow)
    # a 5x skew that costs little of a long request: 20 ms TPOT x 0.9 x 16k outputs
    long = _stall_row(2000.0).model_copy(update={"osl_tokens": 16384})
    assert stall_share(long) < 0.15 and not stalled_start(long)


def test_a_stalled_start_s_throughput_has_its_own_regime_and_leaves_the_fit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import math

    import scoville.twin.fit as fit_mod
    from scoville.twin.accuracy import by_regime
    from scoville.twin.calibration import STALLED, STEADY, Comparison, regimes

    stalled, steady = _stall_row(6400.0), _stall_row(500.0)
    cfg = parse_twin_url(stalled.url)
    assert STALLED in regimes(stalled, cfg) and STALLED not in regimes(steady, cfg)
    rows = [
        Comparison("a", "test", "tput_per_gpu", 100.0, 200.0, regimes(stalled, cfg)),  # +100 %
        Comparison("a", "test", "tpot_ms", 10.0, 9.0, regimes(stalled, cfg)),  # -10 %
        Comparison("b", "test", "tput_per_gpu", 100.0, 104.0, regimes(steady, cfg)),  # +4 %
        Comparison("b", "test", "tpot_ms", 10.0, 11.0, regimes(steady, cfg)),  # +10 %
    ]
    got = {(r.regime, r.metric): r for r in by_regime(rows, "test", ("tput_per_gpu", "tpot_ms"))}
    assert got[("all", "tput_per_gpu")].n == 2  # the headline still holds every row
    assert got[(STEADY, "tput_per_gpu")].n == 1
    assert got[(STEADY, "tput_per_gpu")].bias == pytest.approx(0.04)
    assert got[(STEADY, "tpot_ms")].n == 2  # a stall does not excuse the medians
    assert got[(STALLED, "tput_per_gpu")].bias == pytest.approx(1.0)
    # a split without stalled starts has no such line
    assert STEADY not in {r.regime for r in by_regime(rows[2:], "test")}

    # the fit leaves the stalled throughput out and keeps its TPOT and TTFT
    pred = {"tput_per_gpu": 200.0, "tpot_ms": 20.0, "ttft_ms": 400.0}
    monkeypatch.setattr(fit_mod, "simulate_point", lambda *a, **k: pred)
    assert fit_mod.loss([stalled.model_copy(update={"split": "dev"})], load_profiles()) == 0.0
    plain = steady.model_copy(update={"split": "dev"})
    assert fit_mod.loss([plain], load_profiles()) == pytest.approx(math.log(2) / 2.5)


def test_the_shipped_stalled_starts_are_the_b200_sglang_runs_the_twin_notes_name() -> None:
    from scoville.twin.calibration import stalled_start

    flagged = sorted(p.id for p in load_points() if stalled_start(p))
    assert flagged == [
        "b200-dsr1-fp4-sglang-tp8-ep8-1k1k-c128-bx10",
        "b200-dsr1-fp4-sglang-tp8-ep8-8k1k-c16-bx12",
        "b200-dsr1-fp4-sglang-tp8-ep8-8k1k-c4-bx12",
        "b200-dsr1-fp4-sglang-tp8-ep8-8k1k-c8-bx12",
        "b200-dsr1-fp8-sglang-tp8-8k1k-c16-bx9",
        "b200-dsr1-fp8-sglang-tp8-8k1k-c32-bx9",
    ]
    # every mean TTFT in the book is the one its source's throughput check quotes
    import re

    for p in load_points():
        quoted = re.findall(r"mean TTFT ([\d.]+) s", p.source)
        if p.published.mean_ttft_ms is None:
            assert not quoted, p.id
        else:
            assert p.published.mean_ttft_ms == pytest.approx(float(quoted[0]) * 1e3), p.id


def test_validate_says_which_rows_are_stalled_starts_and_why() -> None:
    r = CliRunner().invoke(
        app,
        [
            "twin", "validate", "--split", "dev", "--quick", "--requests-per-point", "16",
            "--only", "b200-dsr1-fp4-sglang-tp8-ep8-8k1k-c4-bx12",
        ],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "1 row(s) of dev (b200-dsr1-fp4-sglang-tp8-ep8-8k1k-c4-bx12) whose mean TTFT" in text
    assert "start-up stall" in text
    # the row's throughput is about twice its published figure: the targets line names it
    assert "targets on dev (median |error| <= 10%" in text
    assert "not met: all 1 rows' tput_per_gpu median |error|" in text


def test_validate_writes_its_rows_and_regimes_as_json(tmp_path: Path) -> None:
    from scoville.errors import StorageError
    from scoville.twin.calibration import STALLED, load_book

    row = "b200-dsr1-fp4-sglang-tp8-ep8-8k1k-c4-bx12"
    args = ["twin", "validate", "--split", "dev", "--quick", "--requests-per-point", "16"]
    out = tmp_path / "validate.json"
    r = CliRunner().invoke(app, [*args, "--only", row, "--json", str(out)])
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    (point,) = [p for p in load_book().points if p.id == row]
    rows = {x["metric"]: x for x in doc["rows"]}
    assert set(rows) == {"tput_per_gpu", "tpot_ms", "ttft_ms"} and doc["split"] == "dev"
    tput = rows["tput_per_gpu"]
    assert tput["published"] == point.published.tput_per_gpu and tput["url"] == point.url
    assert STALLED in tput["regimes"] and tput["run_date"] == point.run_date
    # the terminal's table and verdict, as data: the twin's prediction for the row, and the
    # targets this one row misses (its throughput is about twice the published figure)
    predicted = simulate_point(point, quick=True, requests=16)
    assert {m: x["predicted"] for m, x in rows.items()} == {m: predicted[m] for m in rows}
    dev = doc["splits"]["dev"]
    assert dev["targets_met"] is False and any("tput_per_gpu" in m for m in dev["missed"])
    assert {"regime": "all", "metric": "tpot_ms", "n": 1} in [
        {k: x[k] for k in ("regime", "metric", "n")} for x in dev["regimes"]
    ]
    bad = CliRunner().invoke(app, [*args, "--only", row, "--json", str(tmp_path / "no" / "x")])
    assert isinstance(bad.exception, StorageError) and "Writing" in str(bad.exception)


def test_the_targets_line_names_each_target_a_split_misses() -> None:
    from scoville.twin.accuracy import RegimeError, missed_targets

    def reg(regime: str, metric: str, n: int, err: float, bias: float) -> RegimeError:
        return RegimeError(regime, metric, n, err, bias)

    met = [
        reg("all", "tput_per_gpu", 60, 0.093, -0.032),
        reg("all", "tpot_ms", 60, 0.100, 0.035),
        reg("all", "ttft_ms", 60, 0.6, 0.5),  # TTFT is no target
        reg("hardware CDNA3", "tpot_ms", 12, 0.20, 0.13),  # 20 % itself is not above 20 %
    ]
    assert missed_targets(met) == []
    missed = missed_targets(
        [
            reg("all", "tput_per_gpu", 60, 0.102, -0.046),
            reg("all", "tpot_ms", 60, 0.09, 0.057),
            reg("hardware CDNA4", "tpot_ms", 4, 0.425, 0.201),
            reg("hardware CDNA4", "ttft_ms", 4, 0.65, 0.65),
        ]
    )
    assert missed == [
        "all 60 rows' tput_per_gpu median |error| 10.2%",
        "all 60 rows' tpot_ms bias +5.7%",
        "hardware CDNA4 (4 rows) tpot_ms 42.5%",
    ]
    # a split that publishes throughput alone is not judged on TPOT, so it does not meet both
    only_tput = [reg("all", "tput_per_gpu", 33, 0.088, -0.017)]
    assert missed_targets(only_tput) == ["no tpot_ms rows: not judged"]


def test_a_rows_run_date_gives_it_a_quarter_regime_and_must_be_a_date() -> None:
    from pydantic import ValidationError

    from scoville.twin.calibration import CalPoint, Published, regimes, run_quarter
    from scoville.twin.target import parse_twin_url

    url = "twin:H200/DeepSeek-R1?tp=8&framework=sglang"
    pub = Published(tput_per_gpu=1.0, tpot_ms=1.0)
    row = CalPoint(id="x", url=url, isl_tokens=1024, osl_tokens=1024, concurrency=4,
                   published=pub, split="dev", source="s")  # fmt: skip
    cfg = parse_twin_url(url)
    assert "run date not stated" in regimes(row, cfg)
    for day, quarter in (("2025-12-31", "run 2025 Q4"), ("2026-01-01", "run 2026 Q1"),
                         ("2026-05-18", "run 2026 Q2"), ("2026-09-30", "run 2026 Q3")):  # fmt: skip
        dated = row.model_copy(update={"run_date": day})
        assert run_quarter(dated) == quarter and quarter in regimes(dated, cfg)
    with pytest.raises(ValidationError):
        CalPoint.model_validate({**row.model_dump(), "run_date": "2026-5-18"})


def test_a_stated_run_date_is_not_after_the_row_was_added() -> None:
    from scoville.twin.calibration import load_points

    dated = [p for p in load_points() if p.run_date is not None]
    for p in dated:
        assert p.run_date <= (p.added or "2026-12-01")[:10], p.id


def test_fine_steps_refine_a_value_the_coarse_grid_cannot_reach(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import scoville.twin.fit as fit_mod
    from scoville.twin.calibration import Published
    from scoville.twin.free_params import FREE_PARAMS

    prm = next(p for p in FREE_PARAMS if p.name == "collective_latency_scale")
    start = 1.0  # inside the bounds, so that no trial here is clipped
    book = prm.set(load_profiles(), start)
    # a fake twin whose throughput follows the parameter: the dev optimum is 1.1x the start
    monkeypatch.setattr(
        fit_mod,
        "simulate_point",
        lambda _p, quick, book: {
            "tput_per_gpu": 100.0 * prm.get(book) / start,
            "tpot_ms": 10.0,
            "ttft_ms": 100.0,
        },
    )
    row = next(p for p in load_points() if p.split == "dev")
    row = row.model_copy(update={"published": Published(tput_per_gpu=110.0, tpot_ms=10.0)})
    for steps, passes, lo, hi in (
        (fit_mod.STEPS, 2, 1.17, 1.19),  # stops at the first coarse step, 7 % off
        (fit_mod.FINE_STEPS, 2, 1.095, 1.105),  # x1.05 twice: within 1 %
    ):
        got, before, after = fit_mod.fit([row], book, params=[prm], passes=passes, steps=steps)
        assert lo <= prm.get(got) / start <= hi
        assert after < before


def test_a_cost_at_its_floor_is_also_tried_across_its_range(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import scoville.twin.fit as fit_mod
    from scoville.twin.calibration import Published
    from scoville.twin.free_params import FREE_PARAMS

    prm = next(p for p in FREE_PARAMS if p.name == "frameworks.trt.ep_moe_layer_overhead_s")
    book = prm.set(load_profiles(), prm.lo)
    # a fake twin whose throughput grows with the cost; the dev optimum is 15 us, 150x the floor
    monkeypatch.setattr(
        fit_mod,
        "simulate_point",
        lambda _p, quick, book: {"tput_per_gpu": 100.0 * (1.0 + prm.get(book) / 1e-5)},
    )
    row = next(
        p
        for p in load_points()
        if p.split == "dev" and "framework=trt" in p.url and "ep=8" in p.url
    )
    row = row.model_copy(update={"published": Published(tput_per_gpu=250.0)})
    got, before, after = fit_mod.fit([row], book, params=[prm], passes=1)
    assert 1.4e-5 <= prm.get(got) <= 1.6e-5 and after < before
    # without the spread points, x2 a pass leaves it where it was, three orders short
    monkeypatch.setattr(fit_mod, "ESCAPE_POINTS", 0)
    got, _, _ = fit_mod.fit([row], book, params=[prm], passes=1)
    assert prm.get(got) <= 2 * prm.lo
    # at the floor, the steps below it all clip to the floor itself: none is tried
    assert list(fit_mod.trial_values(prm, lambda: prm.lo, fit_mod.STEPS)) == [
        prm.lo * s for s in (1.18, 1.4, 2.0)
    ]


def test_gb200_dynamo_trt_rows_of_december_2025_hold_their_sweep_scripts_fp8_kv_cache() -> None:
    """The sweep scripts those runs cloned (ai-dynamo/dynamo release/0.5.1-rc0.20251105,
    performance_sweeps/scripts/gen_yaml.py) write an FP8 KV cache for both pools: every such row
    says so in its URL, none keeps the twin's BF16 default, and the erratum is recorded."""
    from scoville.twin.calibration import load_book
    from scoville.twin.options import TwinOptions

    book = load_book()
    rows = [
        p
        for p in book.points
        if "framework=dynamo-trt" in p.url
        and p.url.startswith("twin:GB200/DeepSeek-R1")
        and (p.run_date or "").startswith("2025-12")
    ]
    assert len(rows) >= 97
    assert all(TwinOptions.parse_url(p.url).kv == "fp8" for p in rows)
    assert not any("KV-cache dtype not found" in " ".join(p.source.split()) for p in rows)
    assert any(e.startswith("2026-12-06T22:43Z: the 97 GB200") for e in book.frozen.errata)


def test_the_medians_ratio_is_the_check_each_fixture_row_s_source_states() -> None:
    """Whoever wrote a fixture row checked its published throughput against its own medians
    and wrote the ratio in the source ("published/check = 0.974"); the twin's ratio, with the
    deployment's accelerator count from its URL, is that figure for every such row."""
    import re

    from scoville.twin.calibration import load_points, medians_ratio, point_options

    checked = 0
    for p in load_points():
        text = " ".join(p.source.split())
        stated = re.search(r"published/check = ([0-9.]+) \(medians: the file has no means\)", text)
        if stated:
            ratio = medians_ratio(p, point_options(p).config().n_accelerators)
            assert ratio == pytest.approx(float(stated.group(1)), abs=0.003), p.id
            checked += 1
    assert checked >= 700


def test_validate_names_rows_whose_throughput_is_below_their_own_medians(tmp_path: Path) -> None:
    row, steady = (
        "b200-dsr1-fp4-sglang-tp8-ep8-1k1k-c32-run1211-bx27",
        "h200-dsr1-fp8-trt-tp8-ep8-1k1k-c4-run1211-bx32",
    )
    args = ["twin", "validate", "--split", "dev", "--quick", "--requests-per-point", "16"]
    out = tmp_path / "v.json"
    r = CliRunner().invoke(app, [*args, "--only", row, "--json", str(out)])
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "published throughput below 85% of what the row's own median TTFT and TPOT" in text
    assert f"1 row(s) of dev ({row} 0.62)" in text  # its source's check: 0.619
    ratios = {x["medians_ratio"] for x in json.loads(out.read_text())["rows"]}
    assert len(ratios) == 1 and ratios.pop() == pytest.approx(0.619, abs=0.003)
    r = CliRunner().invoke(app, [*args, "--only", steady])
    assert r.exit_code == 0 and "published throughput below" not in r.output


def test_an_offline_row_sends_all_its_requests_at_once() -> None:
    """A row with `requests` is an offline run (trtllm-bench's throughput mode): every request
    is sent at the start, whatever request count validate or fit asks for."""
    row = {
        "id": "offline",
        "url": "twin:H100/Llama-3.1-8B?framework=trt&max_num_seqs=16",
        "isl_tokens": 512,
        "osl_tokens": 64,
        "published": {"tput_per_gpu": 1.0},
        "split": "dev",
        "source": "a test row",
    }
    offline = CalPoint.model_validate({**row, "requests": 48})
    closed = CalPoint.model_validate({**row, "concurrency": 16})
    at_once = simulate_point(offline)
    assert simulate_point(offline, quick=True, requests=7) == at_once
    # 48 requests on 16 seats: the median request waits for the first wave to finish, while a
    # closed loop of 16 never queues
    assert at_once["ttft_ms"] > 5 * simulate_point(closed)["ttft_ms"]
    # and its errors are tabled as offline, not under a concurrency band
    from scoville.twin.calibration import point_options, regimes

    tags = regimes(offline, point_options(offline).config())
    assert "offline (every request at once)" in tags
    assert not any("concurrency" in t for t in tags)


def test_validate_shows_every_figure_in_an_80_column_log() -> None:
    # piped output (a CI log, a file) is 80 columns wide: a long point id folds, the published,
    # predicted and error figures stay whole on the row
    from scoville.twin.calibration import load_book

    row = "mlperf60-nvidia-b300-sxm-270gbx8-trt-llama3.1-405b-server-bx50"
    (point,) = [p for p in load_book().points if p.id == row]
    args = ["twin", "validate", "--split", "dev", "--quick", "--requests-per-point", "16"]
    r = CliRunner().invoke(app, [*args, "--only", row], env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.output
    table = r.output[: r.output.index("error by regime")]
    assert max(len(line) for line in table.splitlines()) <= 80
    assert f"{point.published.tput_per_gpu:,.2f}" in table
    assert f"{point.published.tpot_ms:,.2f}" in table
    assert table.count("%") >= 3  # each metric's signed error
