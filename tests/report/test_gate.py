"""A check as CI reads it (JUnit XML, Markdown) and few-sample percentiles marked in the report."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from scoville.analysis.regression import CheckLine, CheckReport, Rule
from scoville.report.gate import to_junit, to_markdown
from scoville.report.tables import point_table as _point_table

LINES = [
    CheckLine(
        "tput_per_gpu", "intvty 50", "lower", 1000.0, 880.0, -0.12, -0.15, -0.09, "regression"
    ),
    CheckLine("median_e2e", "point c8", "higher", 1.0, 1.01, 0.01, -0.02, 0.04, "no change"),
    CheckLine(
        "p99_ttft",
        "point c8",
        "higher",
        0.2,
        0.3,
        0.5,
        None,
        None,
        "few samples",
        "n=80 < 368 for a 95% interval",
    ),
]
REPORT = CheckReport("cand", "base", Rule(), LINES)


def test_junit_has_one_case_per_line_and_fails_only_the_regression() -> None:
    suite = ET.fromstring(to_junit(REPORT))
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "1", "1")
    cases = suite.findall("testcase")
    assert cases[0].find("failure") is not None
    assert "[-15.0, -9.0] %" in cases[0].find("failure").get("message", "")  # type: ignore[union-attr]
    assert cases[1].find("failure") is None and cases[1].find("skipped") is None
    assert cases[2].find("skipped") is not None


def test_markdown_states_the_test_and_the_verdict() -> None:
    md = to_markdown(REPORT)
    assert md.startswith("### scoville check: `cand` vs baseline `base`")
    assert "**REGRESSION: 1 of 3 lines worse beyond noise**" in md
    assert "a change of at least 5%" in md
    assert "| `tput_per_gpu` | intvty 50 | 1,000 | 880 | -12.0 % | [-15.0, -9.0] % |" in md


def test_report_marks_a_few_sample_p99() -> None:
    row = {
        "point_id": "c8",
        "n_ok": 80,
        "n_sent": 80,
        "valid": True,
        "p99_ttft": 0.25,
        "median_ttft": 0.1,
        "n_ttft": 80,
        "few_samples": ["p99_ttft"],
    }
    html = _point_table([row])
    assert "250.0*</span>" in html and "n = 80: too few samples" in html


def test_report_gives_each_percentile_its_count_and_interval() -> None:
    row = {
        "point_id": "c8",
        "n_ok": 400,
        "n_sent": 400,
        "valid": True,
        "median_ttft": 0.1,
        "median_ttft_lo": 0.09,
        "median_ttft_hi": 0.11,
        "n_ttft": 400,
        "few_samples": [],
    }
    assert "n = 400: 95 % CI [90.0, 110.0]" in _point_table([row])
