"""The telemetry CLI commands, through typer's runner."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from scoville.commands.telemetry import app
from scoville.errors import UserError

runner = CliRunner()


def test_power_probe_runs_and_explains() -> None:
    result = runner.invoke(app, ["power", "probe", "--seconds", "0.2"])
    assert result.exit_code == 0, result.output
    assert "unavailable" in result.output or "power over" in result.output


def test_calibrate_rejects_bad_levels() -> None:
    result = runner.invoke(app, ["calibrate", "--levels", "4,2"])
    assert isinstance(result.exception, UserError)
    assert "rising" in str(result.exception)


def test_calibrate_prints_and_writes_its_envelope(tmp_path: Path) -> None:
    out = tmp_path / "cal.json"
    args = ["calibrate", "--levels", "1,2", "--tokens", "10", "--requests-per-stream", "1"]
    args += ["--itl-ms", "5", "--ttft-ms", "5", "--max-ts-err-ms", "50", "--out", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "envelope:" in result.output
    doc = json.loads(out.read_text())
    assert doc["schema"] == "scoville.calibration/1" and len(doc["levels"]) >= 1
