"""A regression check as CI reads it: a Markdown summary (GitHub Actions' job summary) and
JUnit XML (one test case per line; a regression is a failure, an undecided line is skipped).
"""

from __future__ import annotations

from xml.etree import ElementTree as ET

from scoville.analysis.regression import CheckLine, CheckReport

_MARK = {
    "regression": "❌ regression",
    "improvement": "✅ improvement",
    "no change": "✅ no change",
    "not comparable": "⚪ not comparable",
    "few samples": "⚠️ few samples",
}


def _num(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.4g}"


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v * 100:+.1f} %"


def interval_text(ln: CheckLine) -> str:
    if ln.lo is None or ln.hi is None:
        return "-"
    lo, hi = min(ln.lo, ln.hi), max(ln.lo, ln.hi)
    return f"[{lo * 100:+.1f}, {hi * 100:+.1f}] %"


def summary_line(report: CheckReport) -> str:
    bad = [ln for ln in report.lines if ln.verdict == "regression"]
    if bad:
        return f"REGRESSION: {len(bad)} of {len(report.lines)} lines worse beyond noise"
    decided = [ln for ln in report.lines if ln.verdict in ("no change", "improvement")]
    if not decided:  # undecided is not passed: say so, though no regression was found
        return f"UNDECIDED: no line could be compared ({len(report.lines)} lines; see notes)"
    return f"PASS: no line worse beyond noise ({len(report.lines)} lines)"


def to_markdown(report: CheckReport) -> str:
    r = report.rule
    out = [
        f"### scoville check: `{report.candidate}` vs baseline `{report.baseline}`",
        "",
        f"**{summary_line(report)}**",
        "",
        *(f"> Note: {n}" for n in report.notes),
        f"Test: relative change with a {r.level:.0%} percentile bootstrap interval over "
        f"requests ({r.n_resamples} resamples, seed {r.seed}); a regression needs the whole "
        f"interval on the worse side and a change of at least {r.min_effect:.0%}.",
        "",
        "| metric | at (intvty in tok/s/user) | baseline | candidate | change | interval | "
        "verdict | note |",
        "|---|---|---:|---:|---:|---|---|---|",
    ]
    for ln in report.lines:
        out.append(
            f"| `{ln.metric}` | {ln.where} | {_num(ln.baseline)} | {_num(ln.candidate)} | "
            f"{_pct(ln.change)} | {interval_text(ln)} | {_MARK[ln.verdict]} | {ln.note} |"
        )
    return "\n".join(out) + "\n"


def to_junit(report: CheckReport) -> str:
    """JUnit XML: testsuite 'scoville check', one testcase per line."""
    fails = sum(ln.verdict == "regression" for ln in report.lines)
    skips = sum(ln.verdict in ("not comparable", "few samples") for ln in report.lines)
    suite = ET.Element(
        "testsuite",
        name="scoville check",
        tests=str(len(report.lines)),
        failures=str(fails),
        skipped=str(skips),
        errors="0",
    )
    for ln in report.lines:
        case = ET.SubElement(
            suite, "testcase", classname=f"scoville.{ln.metric}", name=f"{ln.metric} @ {ln.where}"
        )
        text = (
            f"baseline {_num(ln.baseline)}, candidate {_num(ln.candidate)}, change "
            f"{_pct(ln.change)}, interval {interval_text(ln)}" + (f"; {ln.note}" if ln.note else "")
        )
        if ln.verdict == "regression":
            ET.SubElement(case, "failure", message=f"regression: {text}", type="regression")
        elif ln.verdict in ("not comparable", "few samples"):
            ET.SubElement(case, "skipped", message=f"{ln.verdict}: {text}")
        else:
            ET.SubElement(case, "system-out").text = f"{ln.verdict}: {text}"
    ET.indent(suite)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suite, encoding="unicode")
