"""A run's lifecycle as a user meets it: `scoville run` in a child process against the reference
server on loopback, stopped with real signals (SIGINT, SIGTERM, SIGKILL), resumed, summarised
after a kill, a failed probe, and a full disk (a small tmpfs, where this test may mount one)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import start_reference, valid_but_for_load


@pytest.fixture(scope="module")
def slow_url() -> Iterator[str]:
    """20 ms per token: a 20-token request is in flight for ~0.4 s, so a signal finds some."""
    proc, url = start_reference(5.0, 20.0)
    yield url
    proc.terminate()
    proc.wait(timeout=10)


def _start(url: str, out: Path, *extra: str) -> subprocess.Popen[str]:
    args = [
        "run",
        "--target",
        url,
        "--concurrency",
        "1,2",
        "--isl",
        "16",
        "--osl",
        "20",
        "--set",
        "load.requests_per_point=10",
        "--out",
        str(out),
        *extra,
    ]
    return subprocess.Popen(
        [sys.executable, "-m", "scoville.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _run_dir(out: Path) -> Path:
    (run,) = [p for p in out.iterdir() if p.is_dir()]
    return run


def _wait_for_point(out: Path, point: str, timeout_s: float = 60.0) -> Path:
    """Wait until a measured record of `point` is on disk, return the run directory."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        runs = [p for p in out.iterdir() if p.is_dir()] if out.exists() else []
        rec = runs[0] / "records.jsonl" if runs else None
        needle = f'"point_id":"{point}","phase":"measure"'
        if rec is not None and rec.exists() and needle in rec.read_text():
            return runs[0]
        time.sleep(0.05)
    raise AssertionError(f"no record of {point} within {timeout_s} s")


def _lines(run: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines()]


def _stop(url: str, out: Path, sig: signal.Signals) -> tuple[subprocess.Popen[str], str, str]:
    proc = _start(url, out)
    _wait_for_point(out, "c2")
    time.sleep(0.3)
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=60)
    return proc, stdout, stderr


def test_sigint_records_in_flight_requests_and_summarises_the_partial_point(
    slow_url: str, tmp_path: Path
) -> None:
    proc, stdout, stderr = _stop(slow_url, tmp_path, signal.SIGINT)
    assert proc.returncode == 130, stderr
    run = _run_dir(tmp_path)
    assert f"run directory: {run}" in stdout.replace("\n", "")
    assert "Traceback" not in stderr + stdout
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "stopped by SIGINT" and manifest["ended_utc"]
    lines = _lines(run)  # every line is complete JSON
    records = [x for x in lines if x["type"] == "record"]
    cancelled = [r for r in records if r["error"] == "cancelled"]
    assert cancelled and all(r["point_id"] == "c2" for r in cancelled)
    summary = json.loads((run / "summary.json").read_text())
    c1, c2 = summary["points"]
    assert valid_but_for_load(c1), c1["invalid_reasons"]
    assert c1["n_ok"] == c1["n_sent"] == 10
    assert not c2["valid"] and c2["invalid_reasons"][0].startswith("partial:")
    measured_c2 = [r for r in records if r["point_id"] == "c2" and r["phase"] == "measure"]
    assert c2["n_sent"] == len(measured_c2) == c2["n_ok"] + c2["n_failed"]
    assert c2["errors"].get("cancelled", 0) >= 1
    assert not any(r.startswith("failures") for r in c2["invalid_reasons"])  # cancelled aside


def test_sigterm_then_resume_completes_the_sweep_with_the_same_prompts(
    slow_url: str, tmp_path: Path
) -> None:
    proc, _, stderr = _stop(slow_url, tmp_path, signal.SIGTERM)
    assert proc.returncode == 143, stderr
    run = _run_dir(tmp_path)
    before = json.loads((run / "manifest.json").read_text())
    spec_hash = json.loads((run / "spec.json").read_text())["content_hash"]
    c1_ids = {
        (r["request_id"], r["start_ns"])
        for r in _lines(run)
        if r.get("point_id") == "c1" and r["type"] == "record"
    }
    res = subprocess.run(
        [sys.executable, "-m", "scoville.cli", "resume", str(run)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode in (0, 3), res.stderr  # 3: a point it distrusts, checked below
    points = json.loads((run / "summary.json").read_text())["points"]
    assert [p["point_id"] for p in points] == ["c1", "c2"]
    assert all(valid_but_for_load(p) for p in points), [p["invalid_reasons"] for p in points]
    # 3: a point the client's load rule distrusts; every other reason fails above.
    assert res.returncode == (0 if all(p["valid"] for p in points) else 3), res.stderr
    after = json.loads((run / "manifest.json").read_text())
    assert after["status"] == "complete" and after["prompt_salt"] == before["prompt_salt"]
    assert after["resumed_from"] == ["c1"]
    assert json.loads((run / "summary.json").read_text())["spec_hash"] == spec_hash
    lines = _lines(run)
    kept_c1 = {
        (r["request_id"], r["start_ns"])
        for r in lines
        if r.get("point_id") == "c1" and r["type"] == "record"
    }
    assert kept_c1 == c1_ids  # c1 was not measured again
    records = [x for x in lines if x["type"] == "record"]
    assert len(records) == (10 + 2) + (10 + 4)  # measured + warmup per point, none cancelled
    assert not any(r["error"] == "cancelled" for r in records)
    assert list(run.glob("records.before-resume-*.jsonl"))  # the stopped records are kept


def test_report_summarises_a_killed_run_and_reports_a_torn_last_line(
    slow_url: str, tmp_path: Path
) -> None:
    proc, _, _ = _stop(slow_url, tmp_path, signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL
    run = _run_dir(tmp_path)
    assert json.loads((run / "manifest.json").read_text())["status"] == "running"
    with (run / "records.jsonl").open("a") as fh:
        fh.write('{"type":"record","request_id":"c2-9","point_')  # as a kill mid-write leaves
    n_lines = len((run / "records.jsonl").read_text().splitlines())
    res = subprocess.run(
        [sys.executable, "-m", "scoville.cli", "report", str(run)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    summary = json.loads((run / "summary.json").read_text())
    assert f"records.jsonl line {n_lines} is torn" in " ".join(summary["notes"])
    points = {p["point_id"]: p for p in summary["points"]}
    assert valid_but_for_load(points["c1"]) and not points["c2"]["valid"]
    assert points["c2"]["invalid_reasons"][0].startswith("partial:")
    assert (run / "report.html").is_file()
    # a folder of runs holding a killed one is summarised too
    folder = tmp_path.parent / f"{tmp_path.name}-folder"
    shutil.copytree(run, folder / run.name)
    (folder / run.name / "summary.json").unlink()
    res = subprocess.run(
        [sys.executable, "-m", "scoville.cli", "report", str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    assert (folder / run.name / "summary.json").is_file()


def test_a_failed_probe_leaves_no_run_directory(tmp_path: Path) -> None:
    proc, url = start_reference(1.0, 1.0, fault="500")
    try:
        res = subprocess.run(
            [sys.executable, "-m", "scoville.cli", "run", "--target", url, "--out", str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert res.returncode == 2, res.stderr
    assert "probe" in res.stderr and "Traceback" not in res.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 96 KiB tmpfs (needs root and mount); skipped where it cannot be made."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=96k", "tmpfs", str(mnt)],
        capture_output=True,
        text=True,
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({made.stderr.strip()})")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_a_full_disk_stops_cleanly_and_says_what_is_on_disk(
    fast_url: str, small_disk: Path
) -> None:
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "scoville.cli",
            "run",
            "--target",
            fast_url,
            "--concurrency",
            "4",
            "--isl",
            "16",
            "--osl",
            "64",
            "--set",
            "load.requests_per_point=400",
            "--out",
            str(small_disk),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "COLUMNS": "400"},
    )
    assert res.returncode == 4, res.stdout[-2000:] + res.stderr[-2000:]
    assert "Traceback" not in res.stderr + res.stdout
    run = _run_dir(small_disk)
    assert "No space left on device" in res.stderr
    assert f"On disk in {run}" in res.stderr and "complete lines" in res.stderr
    text = (run / "records.jsonl").read_text()
    complete = text.splitlines()[: text.count("\n")]
    assert complete and all(json.loads(x) for x in complete)  # complete lines parse


def test_a_run_still_being_measured_is_not_resumed(slow_url: str, tmp_path: Path) -> None:
    proc = _start(slow_url, tmp_path)
    try:
        run = _wait_for_point(tmp_path, "c1")
        res = subprocess.run(
            [sys.executable, "-m", "scoville.cli", "resume", str(run)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert res.returncode == 2, res.stderr
        assert f"still being measured by process {proc.pid}" in " ".join(res.stderr.split())
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
