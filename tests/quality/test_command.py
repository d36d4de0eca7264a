"""`scoville quality` as a user meets it: real processes, the reference SSE server on loopback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


def scoville(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scoville.cli", *args], capture_output=True, text=True, timeout=180
    )


def _said(res: subprocess.CompletedProcess[str]) -> str:
    return " ".join(res.stderr.split())  # the console wraps long lines


def _quality(ref: str, cand: str, out: Path, *extra: str) -> dict[str, Any]:
    res = scoville("quality", "--reference", ref, "--candidate", cand, "--out", str(out), *extra)
    assert res.returncode == 0, res.stdout + res.stderr
    doc: dict[str, Any] = json.loads((out / "quality.json").read_text())
    return doc


def _counts_add_up(doc: dict[str, Any]) -> None:
    for side in ("reference", "candidate"):
        c = doc["counts"][side]
        assert c["ok"] + c["failed"] == c["sent"] == len(doc["items"])
        assert c["right"] + c["wrong"] + c["failed_items"] == c["items"]


def test_same_server_without_logprobs(fast_url: str, tmp_path: Path) -> None:
    doc = _quality(fast_url, fast_url, tmp_path, "--items", "3", "--batch-concurrency", "3")
    _counts_add_up(doc)
    assert len(doc["items"]) == 15 and doc["counts"]["reference"]["items"] == 12  # free: unjudged
    assert doc["logprob_divergence"]["not_available"].startswith("not available from this server")
    agree = doc["token_agreement"]
    assert agree["prefix_share"]["estimate"] == 1.0 and agree["items"] == 15
    assert doc["batch_invariance"]["whole_match"]["estimate"] == 1.0
    row = doc["items"][0]
    assert {"id", "prompt", "reference", "candidate", "divergence_position", "logprob"} <= set(row)
    assert row["reference"]["text"] == row["candidate"]["text"]


def test_failed_requests_are_counted_not_dropped(
    fast_url: str, cutting_url: str, tmp_path: Path
) -> None:
    doc = _quality(fast_url, cutting_url, tmp_path, "--tasks", "free,arith", "--items", "4")
    _counts_add_up(doc)
    cand = doc["counts"]["candidate"]
    assert cand["failed"] == cand["sent"] == 8 and cand["failed_items"] == 4
    assert doc["accuracy"]["verdict"] == "not enough evidence"
    assert "failed" in doc["accuracy"]["reason"]
    assert all(r["candidate"]["failed"].startswith("stream_cut") for r in doc["items"])


def test_bad_input_exits_2_with_one_paragraph(tmp_path: Path) -> None:
    twin = scoville("quality", "--reference", "twin:H200/gpt-oss-120b", "--candidate", "embedded")
    assert twin.returncode == 2 and "The twin has no tokens to judge" in _said(twin)
    bad = tmp_path / "g.jsonl"
    bad.write_text('{"question": "1+1?"}\n')
    res = scoville(
        "quality", "--reference", "embedded", "--candidate", "embedded", "--tasks", f"gsm8k={bad}"
    )
    assert res.returncode == 2 and "line 1: field 'answer' is missing" in res.stderr
    assert "Traceback" not in res.stderr


def test_run_refuses_a_quality_target_it_could_not_check(tmp_path: Path) -> None:
    res = scoville("run", "--set", "quality.task=gsm8k", "--out", str(tmp_path))
    assert res.returncode == 2  # no threshold and no reference: no bar to qualify against
    assert "scoville quality" in _said(res) and "quality.task=gsm8k" in _said(res)
    twin = ("--target", "twin:H200/gpt-oss-120b", "--set", "quality.threshold=0.5")
    res = scoville("run", *twin, "--set", "quality.task=arith", "--out", str(tmp_path))
    assert res.returncode == 2 and "The twin has no tokens to judge" in _said(res)
    assert "Traceback" not in res.stderr and not any(tmp_path.iterdir())


def _run_with_quality(url: str, out: Path, *sets: str) -> Path:
    """`scoville run` with a quality pass; the reference server answers 'tok tok ...', so
    every item is judged and wrong: not qualified, whatever the bar."""
    args = ["run", "--target", url, "--concurrency", "1", "--requests-per-point", "3"]
    args += ["--isl", "16", "--osl", "4", "--out", str(out), "--set", "quality.task=arith,copy"]
    args += ["--set", "quality.items_per_task=3", "--set", "quality.concurrency=2"]
    for s in sets:
        args += ["--set", s]
    res = scoville(*args)
    # 5: every point valid, not qualified; 3: a point distrusted for its timing on a loaded
    # machine (it wins over 5); the quality pass still ran.
    assert res.returncode in (5, 3), res.stdout + res.stderr
    assert "quality: not qualified" in " ".join(res.stdout.split())
    (run_dir,) = out.iterdir()
    return run_dir


def test_run_with_a_quality_pass_writes_status_everywhere(fast_url: str, tmp_path: Path) -> None:
    run_dir = _run_with_quality(fast_url, tmp_path, "quality.threshold=0.5")
    doc = json.loads((run_dir / "quality.json").read_text())
    c = doc["counts"]["target"]
    assert c["ok"] + c["failed"] == c["sent"] == len(doc["items"]) == 6
    assert c["right"] + c["wrong"] + c["failed_items"] == c["items"] == 6 and c["right"] == 0
    assert doc["status"] == "not qualified" and doc["equivalence"] is None
    assert doc["pass_rate"] == {
        "estimate": 0.0,
        "lo": 0.0,
        "hi": pytest.approx(0.3903, abs=1e-3),
        "level": 0.95,
        "n": 6,
    }  # fmt: skip  (Wilson, 0 of 6)
    (point,) = json.loads((run_dir / "summary.json").read_text())["points"]
    assert point["quality_status"] == "not qualified" and point["quality_pass_rate"] == 0.0
    assert not any("quality" in r for r in point["invalid_reasons"])  # not a validity rule
    html = (run_dir / "report.html").read_text()
    assert "Quality of" in html and "not qualified" in html and "0.0 % [0.0, 39.0] of 6" in html
    csv = scoville("export", str(run_dir), "--format", "csv")
    assert "quality_status" in csv.stdout and "not qualified" in csv.stdout
    (ix,) = json.loads(scoville("export", str(run_dir), "--format", "inferencex").stdout)
    assert ix["quality_status"] == "not qualified" and ix["quality_pass_rate"] == 0.0


def test_run_against_a_reference_target(fast_url: str, tmp_path: Path) -> None:
    run_dir = _run_with_quality(fast_url, tmp_path, f"quality.reference={fast_url}")
    doc = json.loads((run_dir / "quality.json").read_text())
    assert doc["counts"]["reference"]["sent"] == doc["counts"]["target"]["sent"] == 6
    eq = doc["equivalence"]
    assert eq["token_agreement"]["prefix_share"]["estimate"] == 1.0  # the same server
    assert doc["reference_pass_rate"]["estimate"] == 0.0
    assert doc["status"] == "not qualified" and "the reference answered no" in doc["reason"]
    row = doc["items"][0]
    assert {"id", "reference", "candidate", "divergence_position", "logprob"} <= set(row)
