"""An invalid point as a user meets it: `scoville run` against the reference server with a
validity minimum the sweep cannot meet exits 3, and the reason reaches the terminal table,
summary.json, report.html and both exports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import but_load


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scoville.cli", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "COLUMNS": "300"},
    )


def test_an_invalid_point_exits_3_and_says_why_everywhere(fast_url: str, tmp_path: Path) -> None:
    res = _cli(
        "run", "--target", fast_url, "--concurrency", "1,2", "--isl", "16", "--osl", "4",
        "--set", "load.requests_per_point=6", "--set", "validity.min_measured_requests=8",
        "--out", str(tmp_path),
    )  # fmt: skip
    assert res.returncode == 3, res.stderr
    reason = "few requests: 6 measured, under validity.min_measured_requests = 8"
    assert "NO (few requests)" in res.stdout  # the table's tag
    assert f"point c1 invalid: {reason}" in res.stdout
    (run,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    points = json.loads((run / "summary.json").read_text())["points"]
    # a busy CI machine may add the client's own loop-lag line, rightly: not what is checked here
    assert [but_load(p["invalid_reasons"]) for p in points] == [[reason], [reason]]
    assert reason in (run / "report.html").read_text()
    rows = json.loads(_cli("export", str(run)).stdout)
    assert [(r["valid"], but_load(r["invalid_reasons"])) for r in rows] == [(False, [reason])] * 2
    csv_text = _cli("export", str(run), "--format", "csv").stdout
    assert "invalid_reasons" in csv_text.splitlines()[0] and reason in csv_text
