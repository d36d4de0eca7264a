"""The analysis CLI (compare, claims audit, import) through typer's runner, on fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from scoville.analysis.load import load_rows
from scoville.commands.analysis import app

DATA = Path(__file__).parent / "data"
JALAPENO = Path(__file__).resolve().parents[2] / "examples" / "claims" / "jalapeno-2026-08.yaml"


@pytest.fixture
def cli() -> typer.Typer:
    main = typer.Typer()
    main.add_typer(app)  # mounted the way the top-level CLI mounts it
    return main


def test_compare_json(cli: typer.Typer) -> None:
    res = CliRunner().invoke(
        cli,
        [
            "compare",
            str(DATA / "summary_two_systems.json"),
            "--baseline",
            "B",
            "-t",
            "250",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    (table,) = json.loads(res.output)
    lines = {ln["key"]: ln for ln in table["lines"]}
    assert lines["peak_tput_per_kw"]["ratio"] == pytest.approx(2.0)  # 40000 / 20000
    assert lines["min_e2e_s"]["ratio"] == pytest.approx(2.5)  # 2.5 s / 1.0 s
    iso = lines["tput_per_kw_at_baseline_best_intvty"]  # at 150: A's line gives 35000
    assert iso["system"] == pytest.approx(35000.0) and iso["ratio"] == pytest.approx(3.5)
    assert lines["tput_per_kw_at_intvty_250"]["status"] == "unreachable for baseline"
    assert "usd_per_m_tokens_at_peak" not in lines  # no prices given


def test_compare_with_prices(cli: typer.Typer) -> None:
    res = CliRunner().invoke(
        cli,
        [
            "compare",
            str(DATA / "summary_two_systems.json"),
            "-b",
            "B",
            "--json",
            "--price",
            "A=3.6",
            "--price",
            "b=2.4",
        ],
    )
    assert res.exit_code == 0, res.output
    lines = {ln["key"]: ln for ln in json.loads(res.output)[0]["lines"]}
    # A: 28000 tok/s/acc -> 100.8 M tokens/h at $3.6; B: 24000 -> 86.4 M/h at $2.4.
    assert lines["usd_per_m_tokens_at_peak"]["system"] == pytest.approx(3.6 / 100.8)
    assert lines["usd_per_m_tokens_at_peak"]["baseline"] == pytest.approx(2.4 / 86.4)
    bad = CliRunner().invoke(
        cli, ["compare", str(DATA / "summary_two_systems.json"), "-b", "B", "--price", "A=x"]
    )
    assert "should look like" in str(bad.exception)


def test_compare_power_override_and_text(cli: typer.Typer, tmp_path: Path) -> None:
    html = tmp_path / "t.html"
    res = CliRunner().invoke(
        cli,
        [
            "compare",
            str(DATA / "summary_two_systems.json"),
            "-b",
            "B",
            "--power",
            "A=board-measured:560",
            "--allow-unlike",  # A at measured board power, B at package TDP
            "--html",
            str(html),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "board-measured 560 W" in res.output
    # A's peak 28000 tok/s/acc at 560 W = 50000 tok/s/kW; over B's 20000 = 2.5x.
    assert "2.50x higher" in html.read_text()


def test_compare_unknown_baseline_is_a_user_error(cli: typer.Typer) -> None:
    res = CliRunner().invoke(cli, ["compare", str(DATA / "summary_two_systems.json"), "-b", "Z"])
    assert res.exit_code != 0
    assert "Known: A (f, fp8); B (f, fp8)" in str(res.exception)
    bad = CliRunner().invoke(
        cli, ["compare", str(DATA / "summary_two_systems.json"), "-b", "B", "--power", "A=x"]
    )
    assert "should look like" in str(bad.exception)


def test_claims_audit_text_and_json(cli: typer.Typer, tmp_path: Path) -> None:
    html = tmp_path / "audit.html"
    res = CliRunner().invoke(cli, ["claims", "audit", str(JALAPENO), "--html", str(html)])
    assert res.exit_code == 0, res.output
    assert "scoville-audit" in html.read_text()
    assert "104.2x" in res.output and "Verdict rules" in res.output
    assert "59,814 vs 53,952" in res.output  # implied tok/s per accelerator, GPT-OSS
    res = CliRunner().invoke(cli, ["claims", "audit", str(JALAPENO), "--json", "--strict"])
    doc = json.loads(res.output)
    assert doc["strict"] is True and len(doc["claims"]) == 12 and len(doc["ranges"]) == 4


def test_import_then_load(cli: typer.Typer, tmp_path: Path) -> None:
    out = tmp_path / "imported"
    res = CliRunner().invoke(
        cli,
        [
            "import",
            str(DATA / "profile_export_aiperf.json"),
            str(DATA / "inferencex_agg_b200.json"),
            "--out",
            str(out),
            "--system",
            "H200",
        ],
    )
    assert res.exit_code == 0, res.output
    rows = load_rows(out)
    assert len(rows) == 3 and {r["system"] for r in rows} == {"H200"}


def test_claims_audit_bad_file_is_a_user_error(cli: typer.Typer, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("schema: scoville.claims/1\ntitle: t\nsides: {}\nclaims: [{id: x}]\n")
    res = CliRunner().invoke(cli, ["claims", "audit", str(bad)])
    assert res.exit_code != 0
    assert "claims.0.metric" in str(res.exception)


S = 1_000_000_000


def _run_dir(
    root: Path, system: str, w: float, points: list[tuple[str, int, float, float]]
) -> Path:
    """A run directory: records.jsonl (requests of 100 in / 11 out tokens) and summary.json.

    points: (point_id, n requests, decode seconds per request, window seconds)."""
    from scoville.records.model import PointWindow, RequestRecord
    from scoville.records.sink import RecordSink

    d = root / system
    d.mkdir()
    rows = []
    with RecordSink(d / "records.jsonl") as sink:
        for pid, n, decode_s, window_s in points:
            for i in range(n):
                chunks = tuple(int((0.5 + k * decode_s / 10) * S) for k in range(11))
                sink.write(
                    RequestRecord(
                        f"{pid}-{i}",
                        pid,
                        "measure",
                        0,
                        chunks[-1],
                        chunks,
                        (1,) * 11,
                        input_tokens=100,
                        output_tokens=11,
                    )
                )
            sink.write_window(PointWindow(pid, 0, int(window_s * S), "concurrency", 1.0, n))
            tput = n * 111 / window_s
            rows.append(
                {
                    "point_id": pid,
                    "valid": True,
                    "median_intvty": 10 / decode_s,
                    "tput_per_gpu": tput,
                    "tput_per_kw": tput * 1000 / w,
                    "power_w_per_accelerator": w,
                    "power_boundary": "package-tdp",
                    "n_accelerators": 1,
                    "median_e2e": 0.5 + decode_s,
                }
            )
    doc = {
        "schema": "scoville.summary/1",
        "run_id": system,
        "labels": {"system": system, "model": "m", "isl": 100, "osl": 11},
        "points": rows,
    }
    (d / "summary.json").write_text(json.dumps(doc))
    return d


def test_compare_with_intervals_over_requests(cli: typer.Typer, tmp_path: Path) -> None:
    a = _run_dir(tmp_path, "A", 700, [("c1", 4, 0.5, 1.0), ("c8", 8, 1.0, 1.0)])
    b = _run_dir(tmp_path, "B", 1200, [("c1", 4, 1.0, 2.0)])
    res = CliRunner().invoke(cli, ["compare", str(a), str(b), "-b", "B", "--ci", "50", "--json"])
    assert res.exit_code == 0, res.output
    lines = {ln["key"]: ln for ln in json.loads(res.output)[0]["lines"]}
    iv = lines["interval_tput_at_intvty"]
    # At B's best interactivity (10 tok/s/user): A's c8 = 8 x 111 tok/s at 700 W = 1268.6 /kW;
    # B's c1 = 4 x 111 / 2 s at 1200 W = 185 /kW. Identical requests: zero-width intervals.
    assert iv["system"] == pytest.approx(888 / 0.7) and iv["baseline"] == pytest.approx(185.0)
    assert "system [1,269, 1,269]" in iv["note"] and "50/50" in iv["note"]


def test_intervals_are_paired_with_their_own_configuration(tmp_path: Path) -> None:
    from scoville.analysis.comparison import CompareRequest, compare_results

    a = _run_dir(tmp_path, "A", 700, [("c1", 4, 0.5, 1.0), ("c8", 8, 1.0, 1.0)])
    c = _run_dir(tmp_path, "C", 1400, [("c1", 4, 0.5, 1.0), ("c8", 8, 1.0, 1.0)])
    b = _run_dir(tmp_path, "B", 1200, [("c1", 4, 1.0, 2.0)])
    # paths in an order unlike the tables': each table still gets its own system's interval
    tables = compare_results(CompareRequest([c, b, a], "B", n_resamples=20))
    got = {t.system: t.line("interval_tput_at_intvty").system for t in tables}
    # 8 requests x 111 tok/s over 1 s per accelerator: /0.7 kW (A), /1.4 kW (C)
    assert got["A"] == pytest.approx(888 / 0.7) and got["C"] == pytest.approx(888 / 1.4)
