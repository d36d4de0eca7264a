"""`scoville report` and `export` on every kind of `scoville import` output: imported rows
state no request counts (`n_ok`, `n_sent`), and the report must still draw them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from scoville.cli import app

DATA = Path(__file__).parent.parent / "analysis" / "data"


@pytest.mark.parametrize(
    "name",
    [
        "inferencex_agg_b200.json",
        "inferencex_dashboard_gb200.json",
        "profile_export_aiperf.json",
        "summary_two_systems.json",
    ],
)
def test_report_and_export_work_on_imported_runs(name: str, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "imported"
    res = runner.invoke(app, ["import", str(DATA / name), "--out", str(out)])
    assert res.exit_code == 0, res.output
    rep = runner.invoke(app, ["report", str(out)])
    assert rep.exit_code == 0, repr(rep.exception)
    html = (out / "report.html").read_text()
    assert html.count("<tr>") >= 2  # the point table has rows
    exp = runner.invoke(app, ["export", str(out)])
    assert exp.exit_code == 0, repr(exp.exception)
    rows = json.loads(exp.stdout)
    assert rows and all("valid" in r and "invalid_reasons" in r for r in rows)
