"""`scoville store add|query|runs`, `history` and `check` through the CLI, on three twin runs:
the slower run is flagged (exit 4), the identical rerun passes (exit 0)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from typer.testing import CliRunner

from scoville.cli import app

runner = CliRunner()


def _store(tmp_path: Path, runs: list[Path]) -> list[str]:
    store = ["--store", str(tmp_path / "store")]
    r = runner.invoke(app, ["store", "add", *map(str, runs), *store])
    assert r.exit_code == 0, r.output
    assert r.output.count("added ") == len(runs)
    return store


def test_history_shows_the_slower_run(tmp_path: Path, twin_runs: dict[str, Path]) -> None:
    store = _store(tmp_path, [twin_runs["base"], twin_runs["rerun"], twin_runs["slow"]])
    r = runner.invoke(
        app,
        [
            "history",
            "--model",
            "gpt-oss-120b",
            "--system",
            "h200",
            "--metric",
            "tput_per_gpu",
            "--at-interactivity",
            "230",
            "--chart",
            str(tmp_path / "h.svg"),
            *store,
        ],
        env={"COLUMNS": "200"},
    )
    assert r.exit_code == 0, r.output
    rows = [ln for ln in r.output.splitlines() if "interpolated" in ln]
    assert len(rows) == 3
    assert rows[0].split("│")[3] == rows[1].split("│")[3]  # identical reruns
    assert rows[0].split("│")[3] != rows[2].split("│")[3]
    assert (tmp_path / "h.svg").read_text(encoding="utf-8").startswith("<svg")


def test_check_flags_the_slower_run(tmp_path: Path, twin_runs: dict[str, Path]) -> None:
    store = _store(tmp_path, [twin_runs["base"]])
    md, xml = tmp_path / "summary.md", tmp_path / "junit.xml"
    r = runner.invoke(
        app,
        [
            "check",
            str(twin_runs["slow"]),
            "--baseline",
            "SELECT run_id FROM runs",
            "--markdown",
            str(md),
            "--junit",
            str(xml),
            *store,
        ],
    )
    assert r.exit_code == 4, r.output
    assert "REGRESSION" in r.output
    assert "❌ regression" in md.read_text(encoding="utf-8")
    suite = ET.fromstring(xml.read_text(encoding="utf-8"))
    assert int(suite.get("failures", "0")) >= 1
    assert suite.find("testcase/failure") is not None


def test_check_passes_an_identical_rerun(tmp_path: Path, twin_runs: dict[str, Path]) -> None:
    store = _store(tmp_path, [twin_runs["base"]])
    base_id = twin_runs["base"].name
    r = runner.invoke(app, ["check", str(twin_runs["rerun"]), "--baseline", base_id, *store])
    assert r.exit_code == 0, r.output
    assert "PASS" in r.output


def test_check_writes_to_the_github_step_summary(
    tmp_path: Path, twin_runs: dict[str, Path]
) -> None:
    summary = tmp_path / "step_summary.md"
    r = runner.invoke(
        app,
        [
            "check",
            str(twin_runs["rerun"]),
            "--baseline",
            str(twin_runs["base"]),
            "--store",
            str(tmp_path / "empty"),
        ],
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert r.exit_code == 0, r.output
    assert summary.read_text(encoding="utf-8").startswith("### scoville check")


def test_unknown_baseline_is_a_user_error(tmp_path: Path, twin_runs: dict[str, Path]) -> None:
    r = runner.invoke(
        app,
        [
            "check",
            str(twin_runs["rerun"]),
            "--baseline",
            "nightly-42",
            "--store",
            str(tmp_path / "empty"),
        ],
    )
    assert r.exit_code != 0
    assert "not a path, not a run id" in str(r.exception)


def test_store_query_prints_csv(tmp_path: Path, twin_runs: dict[str, Path]) -> None:
    store = _store(tmp_path, [twin_runs["base"]])
    r = runner.invoke(
        app,
        ["store", "query", "SELECT point_id FROM points ORDER BY conc", "--csv", *store],
    )
    assert r.exit_code == 0, r.output
    assert r.output.split() == ["point_id", "c1", "c4", "c16"]


def test_history_of_an_unknown_metric_says_so(tmp_path: Path, twin_runs: dict[str, Path]) -> None:
    store = _store(tmp_path, [twin_runs["base"]])
    r = runner.invoke(
        app,
        [
            "history",
            "--model",
            "gpt-oss-120b",
            "--system",
            "H200",
            "--metric",
            "tput_per_cat",
            "--at-interactivity",
            "250",
            *store,
        ],
    )
    assert r.exit_code != 0 and "has a value of 'tput_per_cat'" in str(r.exception)


def test_knee_and_point_history_through_the_cli(tmp_path: Path, twin_runs: dict[str, Path]) -> None:
    r = runner.invoke(app, ["knee", str(twin_runs["base"])], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert "not reached" in r.output  # 1, 4, 16 on 8 H200s: still scaling
    store = _store(tmp_path, [twin_runs["base"], twin_runs["slow"]])
    r = runner.invoke(
        app,
        ["history", "--model", "gpt-oss-120b", "--system", "H200", "--point", "c16", *store],
        env={"COLUMNS": "200"},
    )
    assert r.exit_code == 0, r.output
    assert r.output.count("measured") == 2


def test_check_against_the_latest_run_of_the_same_configuration(
    tmp_path: Path, twin_runs: dict[str, Path]
) -> None:
    store = _store(tmp_path, [twin_runs["base"], twin_runs["rerun"], twin_runs["slow"]])
    r = runner.invoke(app, ["check", twin_runs["slow"].name, "--baseline", "latest", *store])
    assert r.exit_code == 4, r.output  # the slow run itself is never its own baseline
    assert f"vs baseline {twin_runs['rerun'].name}" in r.output.replace("\n", "")
