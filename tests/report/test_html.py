"""The page without a browser: self-contained, provenance first, tables, comparison."""

from __future__ import annotations

import json
import re
from pathlib import Path

from report_fakes import row, sweep_a, sweep_b, write_run

from scoville.bundle.run import load_run
from scoville.report.html import render, report_runs
from scoville.report.tables import point_table


def _page(tmp_path: Path) -> str:
    a = write_run(tmp_path / "run-a", sweep_a(), "A")
    b = write_run(tmp_path / "run-b", sweep_b(), "B")
    return render(report_runs([load_run(a), load_run(b)]), "t")


def test_page_is_self_contained(tmp_path: Path) -> None:
    html = _page(tmp_path)
    assert not re.search(r"(src|href|url)\s*[=(]\s*[\"']?https?:", html)
    assert "<script src" not in html and "<link" not in html
    assert "window.vegaEmbed" in html  # the library is inlined, not fetched


def test_provenance_comes_first(tmp_path: Path) -> None:
    html = _page(tmp_path)
    prov = html[html.index("<h2>Provenance</h2>") : html.index("<figure")]
    for fact in ("feedc0ffee123456", "9.9.9", "twin / m", "f94765eab695bf27", "8 x A"):
        assert fact in prov, fact
    assert "power boundary" in prov and "none (no power declared" in prov


def test_chart_specs_and_expected_counts(tmp_path: Path) -> None:
    html = _page(tmp_path)
    specs = json.loads(re.search(r"id='scoville-specs'>(.*?)</script>", html, re.S)[1])
    counts = dict(re.findall(r"data-chart='([^']+)' data-points='(\d+)'", html))
    assert counts["throughput-vs-interactivity"] == "8"  # 4 + 4 points
    assert counts["latency-ttft"] == "24"  # 8 points x p50, p90, p99
    assert set(counts) == set(specs)


def test_tables_show_reason_samples_and_conventions(tmp_path: Path) -> None:
    html = _page(tmp_path)
    assert "<td>NO</td>" in html and "<li><b>c16</b>: loop lag 41 ms</li>" in html
    metric_table = html[html.index("<table class='metrics'>") :]
    assert "<code>ttft p99</code>" in metric_table
    assert "samples (successful requests)" in metric_table
    assert "linear interpolation between order statistics" in metric_table
    assert "Comparison against" in html  # two configurations: the comparison table stays


def test_a_few_sample_percentile_is_starred_with_its_count() -> None:
    r = row("c8", 8, 100.0, 100.0, 1.0, p99_ttft=0.25, n_ttft=80, few_samples=["p99_ttft"])
    html = point_table([r])
    assert "250.0*</span>" in html and "n = 80: too few samples" in html
    assert "30.0*" not in point_table([row("c8", 8, 100.0, 100.0, 1.0)])


def test_odd_runs_still_render(tmp_path: Path) -> None:
    """A run with no point, one whose every point is invalid, an open-loop sweep."""
    empty = write_run(tmp_path / "empty", [], "E")
    bad = [row("c1", 1, 300.0, 200.0, 0.9, system="X", valid=False, failure_rate=0.5)]
    rates = [
        {**row("r1", 1, 280.0, 700.0, 1.0, system="R"), "conc": None, "request_rate": 1.5},
        {**row("r2", 1, 250.0, 900.0, 1.1, system="R"), "conc": None, "request_rate": 3.0},
    ]
    runs = [load_run(empty), load_run(write_run(tmp_path / "bad", bad, "X"))]
    runs.append(load_run(write_run(tmp_path / "rates", rates, "R")))
    html = render(report_runs(runs), "odd")
    assert "50.0% of measured requests failed (&gt; 5 %)" in html
    assert "1.5 req/s" in html and "<h2>Metric definitions</h2>" in html


def test_repeated_runs_get_a_mean_series_with_a_band(tmp_path: Path) -> None:
    a1 = write_run(tmp_path / "a1", sweep_b(), "B")
    a2 = write_run(
        tmp_path / "a2", [{**r, "tput_per_gpu": r["tput_per_gpu"] * 1.1} for r in sweep_b()], "B"
    )
    html = render(report_runs([load_run(a1), load_run(a2)]), "t")
    specs = json.loads(re.search(r"id='scoville-specs'>(.*?)</script>", html, re.S)[1])
    layers = specs["throughput-vs-interactivity"]["layer"]
    (band,) = [x for x in layers if x.get("name") == "band"]
    assert {b["config"] for b in band["data"]["values"]} == {"B (vllm, fp8) (mean of 2 runs)"}
    points = next(x for x in layers if x.get("name") == "points")["data"]["values"]
    assert len(points) == 12  # 4 points of each run and their 4 means
    assert "B (vllm, fp8) [a1]" in html and "band over 2 runs" in html
