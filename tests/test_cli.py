"""The command line as a user meets it: real processes, real servers on loopback."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from conftest import valid_but_for_load
from scoville.client.ports import free_port


def scoville(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scoville.cli", *args],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=cwd,
    )


def _run_dir(out: Path) -> Path:
    (run,) = [p for p in out.iterdir() if p.is_dir()]
    return run


def test_run_export_and_report_against_a_server(fast_url: str, tmp_path: Path) -> None:
    res = scoville(
        "run",
        "--target",
        fast_url,
        "--concurrency",
        "1,4",
        "--isl",
        "32",
        "--osl",
        "8",
        "--set",
        "load.requests_per_point=8",
        "--set",
        "accelerators.power_w_per_accelerator=700",
        "--out",
        str(tmp_path),
    )
    run = _run_dir(tmp_path)
    points = json.loads((run / "summary.json").read_text())["points"]
    assert all(valid_but_for_load(p) for p in points), [p["invalid_reasons"] for p in points]
    assert res.returncode == (0 if all(p["valid"] for p in points) else 3), res.stderr
    for name in ("spec.json", "manifest.json", "records.jsonl", "summary.json", "report.html"):
        assert (run / name).is_file(), name
    lines = (run / "records.jsonl").read_text().splitlines()
    records = [json.loads(x) for x in lines if '"type":"record"' in x]
    assert len(records) == (8 + 2) + (8 + 8)  # measured + warmup per point
    assert all(r["input_tokens"] == 32 and r["output_tokens"] == 8 for r in records)
    rows = json.loads(scoville("export", str(run)).stdout)
    assert [r["conc"] for r in rows] == [1, 4]
    for key in (
        "isl",
        "osl",
        "tput_per_gpu",
        "output_tput_per_gpu",
        "input_tput_per_gpu",
        "median_ttft",
        "p99_ttft",
        "median_tpot",
        "median_intvty",
        "median_e2el",
    ):
        assert key in rows[0], key
    assert rows[0]["isl"] == 32 and rows[0]["median_ttft"] < 1.0  # seconds
    csv_out = scoville("export", str(run), "--format", "csv").stdout
    assert csv_out.splitlines()[0].startswith("point_id,")
    html = (run / "report.html").read_text()
    # the charts are Vega-Lite specs drawn as SVG in the browser (tests/report/test_browser.py)
    assert "window.vegaEmbed" in html and "Throughput vs interactivity" in html
    assert not re.search(r"(src|href|url)\s*[=(]\s*[\"']?https?:", html)  # self-contained
    again = scoville("report", str(run), str(run), "--out", str(tmp_path / "cmp.html"))
    assert again.returncode == 0 and (tmp_path / "cmp.html").is_file()
    svg = scoville("report", str(run), "--format", "svg", "--out", str(tmp_path / "svg"))
    assert svg.returncode == 0, svg.stderr
    drawn = (tmp_path / "svg" / "throughput-vs-interactivity.svg").read_text()
    assert drawn.startswith("<svg") and "Throughput vs interactivity" in drawn
    png = scoville("report", str(run), "--format", "png", "--out", str(tmp_path / "png"))
    assert png.returncode == 0, png.stderr
    names = sorted(p.name for p in (tmp_path / "png").iterdir())
    assert names == sorted(p.name.replace(".svg", ".png") for p in (tmp_path / "svg").iterdir())
    assert (tmp_path / "png" / "latency-ttft.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = scoville("report", str(run), "--format", "pdf")
    assert bad.returncode == 2 and "html, png or svg" in bad.stderr


def test_bad_spec_is_one_paragraph_without_traceback(tmp_path: Path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text("shape:\n  isl_tokens: -3\n  colour: red\n")
    res = scoville("run", "--spec", str(spec), "--out", str(tmp_path))
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    assert "shape.isl_tokens" in res.stderr and "shape.colour" in res.stderr


def test_unreachable_endpoint(tmp_path: Path) -> None:
    res = scoville("run", "--target", f"http://127.0.0.1:{free_port()}", "--out", str(tmp_path))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "Cannot reach" in res.stderr


def test_cut_streams_are_recorded_and_flagged(cutting_url: str, tmp_path: Path) -> None:
    res = scoville(
        "run",
        "--target",
        cutting_url,
        "--concurrency",
        "2",
        "--isl",
        "8",
        "--osl",
        "8",
        "--set",
        "load.requests_per_point=6",
        "--out",
        str(tmp_path),
    )
    assert res.returncode == 3, res.stdout + res.stderr
    assert "Traceback" not in res.stderr and "invalid" in res.stdout
    run = _run_dir(tmp_path)
    summary = json.loads((run / "summary.json").read_text())
    (point,) = summary["points"]
    assert point["n_sent"] == 6 and point["n_ok"] + point["n_failed"] == 6
    assert point["errors"] == {"stream_cut": 6} and point["valid"] is False


def test_two_client_processes_account_for_every_request(fast_url: str, tmp_path: Path) -> None:
    res = scoville(
        "run",
        "--target",
        fast_url,
        "--concurrency",
        "8",
        "--isl",
        "16",
        "--osl",
        "8",
        "--set",
        "load.requests_per_point=24",
        "--workers",
        "2",
        "--out",
        str(tmp_path),
    )
    assert res.returncode in (0, 3), res.stderr
    run = _run_dir(tmp_path)
    (point,) = json.loads((run / "summary.json").read_text())["points"]
    assert point["n_sent"] == 24 and point["n_ok"] == 24
    assert point["client_workers"] == 2
    lines = (run / "records.jsonl").read_text().splitlines()
    workers = {json.loads(x)["worker"] for x in lines if '"type":"record"' in x}
    assert len(workers) == 2


def test_points_beyond_a_calibrated_envelope_are_flagged(fast_url: str, tmp_path: Path) -> None:
    envelope = tmp_path / "envelope.json"
    envelope.write_text(
        json.dumps(
            {
                "max_streams": 2,
                "max_chunks_per_s": 1e9,
                "limited_by": "client",
                "floor_ts_err_p99_ms": 0.4,
                "itl_s": 0.01,
                "ttft_s": 0.02,
                "criteria": {},
                "levels": [],
            }
        )
    )
    res = scoville(
        "run",
        "--target",
        fast_url,
        "--concurrency",
        "1,4",
        "--isl",
        "16",
        "--osl",
        "8",
        "--set",
        "load.requests_per_point=8",
        "--envelope",
        str(envelope),
        "--out",
        str(tmp_path / "runs"),
    )
    assert res.returncode in (0, 3), res.stderr
    c1, c4 = json.loads((_run_dir(tmp_path / "runs") / "summary.json").read_text())["points"]
    assert "beyond_client_envelope" not in c1["client_flags"]
    assert "beyond_client_envelope" in c4["client_flags"] and c4["valid_client"] is False
    bad = scoville(
        "run",
        "--target",
        fast_url,
        "--envelope",
        str(tmp_path / "missing.json"),
        "--out",
        str(tmp_path / "runs2"),
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_spec_prints_what_a_run_command_line_resolves_to() -> None:
    res = scoville("spec", "--target", "twin:H200/Llama-3.1-8B", "--isl", "100", "--seed", "3")
    assert res.returncode == 0, res.stderr
    spec = json.loads(res.stdout)["spec"]
    assert spec["target"]["url"] == "twin:H200/Llama-3.1-8B" and spec["seed"] == 3
    assert spec["shape"]["isl_tokens"] == 100 and spec["shape"]["osl_tokens"] == 1024  # twin
    bad = scoville("spec", "--concurrency", "abc")
    assert bad.returncode == 2 and "--concurrency" in bad.stderr
    assert "tuple" not in bad.stderr and "defaults" not in bad.stderr


def test_help_keeps_brackets_and_has_no_double_negatives() -> None:
    run_help = scoville("run", "--help").stdout
    assert "[ratio*L, L]" in " ".join(run_help.split())
    replay_help = scoville("replay", "--help").stdout
    assert "--no-cache-bust" in replay_help and "--no-no-" not in replay_help
    assert "<bool>" not in replay_help
