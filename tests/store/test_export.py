"""Exports: AIPerf profile exports that our AIPerf importer reads back unchanged, and CSV cells
that no spreadsheet evaluates as formulas."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from scoville.analysis.aiperf_export import rows_to_aiperf
from scoville.analysis.importers import rows_from_aiperf
from scoville.analysis.load import load_rows
from scoville.bundle.export import to_csv
from scoville.cli import app


def test_csv_cells_cannot_be_read_as_formulas() -> None:
    rows = [
        {"a": "=HYPERLINK(1)", "b": "+1", "c": "-cmd", "d": "@SUM(A1)", "e": "\tx", "f": "\rx"},
        {"a": "safe", "b": -0.5, "c": {"http_5xx": 1}, "d": "a=b", "e": 3, "f": None},
    ]
    got = list(csv.reader(io.StringIO(to_csv(rows))))
    assert got[1] == ["'=HYPERLINK(1)", "'+1", "'-cmd", "'@SUM(A1)", "'\tx", "'\rx"]
    assert got[2] == ["safe", "-0.5", "{'http_5xx': 1}", "a=b", "3", ""]


def test_aiperf_export_reads_back_through_the_aiperf_importer(
    twin_runs: dict[str, Path],
) -> None:
    rows = load_rows(twin_runs["base"])
    docs = rows_to_aiperf(rows)
    assert len(docs) == 3 and docs[0]["time_to_first_token"]["unit"] == "ms"
    for row, doc in zip(rows, docs, strict=True):
        (back,) = rows_from_aiperf(doc, "export", n_accelerators=8)
        assert back["point_id"] == row["point_id"]
        for key in ("median_ttft", "p99_e2e", "median_tpot", "tput_per_gpu", "mean_intvty"):
            assert back[key] == pytest.approx(row[key], rel=1e-9), key


def test_export_command_writes_aiperf_json(twin_runs: dict[str, Path]) -> None:
    r = CliRunner().invoke(app, ["export", str(twin_runs["base"]), "--format", "aiperf"])
    assert r.exit_code == 0, r.output
    docs = json.loads(r.output)
    assert [d["input_config"]["loadgen"]["concurrency"] for d in docs] == [1, 4, 16]
