"""The report: one self-contained HTML file (inline CSS and SVG, no script, no network).

For one run or several (a comparison): the throughput-vs-interactivity frontier, throughput vs
E2E latency, latency percentile tables, validity flags and each run's frozen spec.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from typing import Any

from scoville.analysis.compare import compare_groups, html_table
from scoville.analysis.frontier import Better, FrontierPoint, pareto
from scoville.analysis.rows import GroupKey, group_rows
from scoville.figures import fixed
from scoville.metrics.table import METRICS
from scoville.report.svg import Series, chart

CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}
h1{font-size:1.6em}h2{font-size:1.25em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}
td,th{border:1px solid #ddd;padding:3px 7px;text-align:right}th{background:#f4f4f4}
td.l,th.l{text-align:left}.bad{background:#fde2e2}.note{color:#555;font-size:.9em}
pre{background:#f7f7f7;padding:1em;overflow:auto;font-size:.8em}
.charts{display:flex;flex-wrap:wrap}.charts svg{margin:.5em}
"""


def _num(v: Any, scale: float = 1.0, digits: int = 1) -> str:
    """A table cell: a number as `figures.fixed` writes it, other text escaped."""
    if v is None or isinstance(v, bool) or not isinstance(v, (int, float)):
        return "-" if v is None else escape(str(v))
    return fixed(v, digits, scale)


def _run_label(run: dict[str, Any]) -> str:
    lab = run["summary"].get("labels", {})
    parts = [lab.get("system"), lab.get("model"), lab.get("precision"), lab.get("framework")]
    return " / ".join(str(p) for p in parts if p) or run["summary"].get("run_id", "run")


def _series(
    runs: Sequence[dict[str, Any]], x_key: str, y_key: str, x_better: Better = "higher"
) -> list[Series]:
    """Every measured point of each run, and the line of its Pareto frontier."""
    out = []
    for run in runs:
        pts = [
            (p[x_key], p[y_key], p["point_id"])
            for p in run["summary"]["points"]
            if p.get(x_key) is not None and p.get(y_key) is not None and p.get("n_ok")
        ]
        front = pareto((FrontierPoint(x, y, pid) for x, y, pid in pts), x_better)
        out.append(Series(_run_label(run), pts, [(f.x, f.y) for f in front]))
    return out


def _point_table(rows: Sequence[dict[str, Any]]) -> str:
    head = (
        "point",
        "ok/sent",
        "fail %",
        "valid",
        "TTFT p50 ms",
        "TTFT p99 ms",
        "TPOT p50 ms",
        "TPOT p99 ms",
        "ITL p50 ms",
        "ITL p99 ms",
        "E2E p50 s",
        "E2E p99 s",
        "intvty p50 tok/s/user",
        "tok/s/accel",
        "out tok/s/accel",
        "tok/s/kW",
        "goodput req/s",
    )
    html = ["<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    for r in rows:
        cls = "" if r.get("valid") else ' class="bad"'
        cells = [
            escape(str(r["point_id"])),
            f"{r['n_ok']}/{r['n_sent']}",
            _num(r.get("failure_rate"), 100),
            "yes" if r.get("valid") else "NO: " + escape(str(r.get("invalid_reason") or "")),
            _num(r.get("median_ttft"), 1e3),
            _num(r.get("p99_ttft"), 1e3),
            _num(r.get("median_tpot"), 1e3, 2),
            _num(r.get("p99_tpot"), 1e3, 2),
            _num(r.get("median_itl"), 1e3, 2),
            _num(r.get("p99_itl"), 1e3, 2),
            _num(r.get("median_e2e"), 1, 3),
            _num(r.get("p99_e2e"), 1, 3),
            _num(r.get("median_intvty")),
            _num(r.get("tput_per_gpu")),
            _num(r.get("output_tput_per_gpu")),
            _num(r.get("tput_per_kw")),
            _num(r.get("goodput_req_per_s"), 1, 2),
        ]
        html.append(f"<tr{cls}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return "\n".join(html) + "</table>"


def _definitions() -> str:
    rows = "".join(
        f"<tr><td class='l'><code>{m.name}</code></td><td class='l'>{escape(m.unit)}"
        f"</td><td class='l'>{escape(m.formula)}</td></tr>"
        for m in METRICS
    )
    return (
        f"<table><tr><th class='l'>metric</th><th class='l'>unit</th>"
        f"<th class='l'>definition</th></tr>{rows}</table>"
    )


def _comparison(runs: Sequence[dict[str, Any]]) -> tuple[str, str] | None:
    """The seeds' comparison table of every configuration against the first run's."""
    rows = [p for r in runs for p in r["summary"]["points"]]
    if len(group_rows(rows)) < 2:
        return None
    baseline = GroupKey.of(runs[0]["summary"]["points"][0]).label()
    tables = compare_groups(rows, baseline)
    return f"Comparison against {baseline}", "".join(html_table(t) for t in tables)


def _timeline(run: dict[str, Any]) -> str:
    """Server-reported running/waiting requests against the client's in-flight count."""
    tl = run["summary"].get("server_timeline") or {}
    t = tl.get("t_s") or []
    series = []
    for key, label in (
        ("running_requests", "server running"),
        ("waiting_requests", "server waiting"),
        ("client_inflight", "client in flight"),
    ):
        ys = tl.get(key)
        if ys:
            pts = [(x, float(y), "") for x, y in zip(t, ys, strict=False) if y is not None]
            series.append(
                Series(
                    label,
                    pts,
                    [(x, y) for x, y, _ in pts],
                    dashed=key == "client_inflight",
                    markers=False,
                )
            )
    if not series:
        return ""
    return chart(
        "Server metrics against the client's view",
        "time (s)",
        "requests",
        series,
        width=900,
        height=300,
    )


_AGENTIC_COLS = (
    ("lanes", "lanes", 1.0, 0),
    ("req_per_s", "req/s", 1.0, 3),
    ("output_tput_per_accelerator", "out tok/s/accel", 1.0, 1),
    ("intvty_agentx", "intvty (1/p90 ITL) tok/s", 1.0, 1),
    ("median_ttft_hit", "TTFT hit p50 ms", 1e3, 1),
    ("median_ttft_miss", "TTFT miss p50 ms", 1e3, 1),
    ("p99_ttft", "TTFT p99 ms", 1e3, 1),
    ("p90_session_makespan", "session p90 s", 1.0, 1),
    ("cache_hit_rate_measured", "cache hit measured", 1.0, 3),
    ("cache_hit_rate_theoretical", "cache hit theoretical", 1.0, 3),
    ("overflow_share", "overflow share", 1.0, 3),
)


def _agentic(run: dict[str, Any]) -> str:
    """Agentic replay: throughput against p90-ITL interactivity per lane count, and the
    cache and session figures agents feel."""
    rows = [p for p in run["summary"]["points"] if p.get("lanes") is not None]
    if not rows:
        return ""
    pts = [
        (p["intvty_agentx"], p["output_tput_per_accelerator"], f"{p['lanes']} lanes")
        for p in rows
        if p.get("intvty_agentx") and p.get("output_tput_per_accelerator")
    ]
    front = pareto((FrontierPoint(x, y, lab) for x, y, lab in pts), "higher")
    svg = chart(
        "Agentic replay: throughput vs interactivity",
        "interactivity (1/p90 ITL, tok/s)",
        "output tok/s/accelerator",
        [Series(_run_label(run), pts, [(f.x, f.y) for f in front])],
    )
    head = "".join(f"<th>{escape(h)}</th>" for _, h, _, _ in _AGENTIC_COLS) + "<th>valid</th>"
    body = ""
    for p in rows:
        cells = "".join(f"<td>{_num(p.get(k), s, d)}</td>" for k, _, s, d in _AGENTIC_COLS)
        ok = "yes" if p.get("agentic_valid") else "NO"
        body += f"<tr>{cells}<td>{ok}</td></tr>"
    return f"<div class='charts'>{svg}</div><table><tr>{head}</tr>{body}</table>"


def render(
    runs: Sequence[dict[str, Any]],
    title: str = "scoville report",
    extra_sections: Sequence[tuple[str, str]] = (),
) -> str:
    """HTML for one or more runs. Each run is {"summary", "spec", "manifest"} as on disk.
    `extra_sections` are (heading, html) pairs appended before the definitions."""
    charts = [
        chart(
            "Throughput vs interactivity",
            "interactivity p50 (tok/s/user)",
            "throughput (tok/s/accelerator)",
            _series(runs, "median_intvty", "tput_per_gpu"),
        ),
        chart(
            "Throughput vs end-to-end latency",
            "E2E p50 (s)",
            "throughput (tok/s/accelerator)",
            _series(runs, "median_e2e", "tput_per_gpu", "lower"),
        ),
    ]
    if any(p.get("tput_per_kw") for r in runs for p in r["summary"]["points"]):
        charts.append(
            chart(
                "Throughput per kW vs interactivity",
                "interactivity p50 (tok/s/user)",
                "throughput (tok/s/kW)",
                _series(runs, "median_intvty", "tput_per_kw"),
            )
        )
    body = [
        f"<h1>{escape(title)}</h1>",
        "<p class='note'>Interactivity = 1/TPOT (tok/s/user); percentiles of interactivity "
        "are tail-aligned (pX = 1/pX(TPOT)). Throughput per accelerator counts input + "
        "output tokens of successful measured requests over the measurement window "
        "(warmup excluded). Rows shaded red are invalid; the valid column says why.</p>",
        f"<div class='charts'>{''.join(charts)}</div>",
    ]
    for run in runs:
        s = run["summary"]
        spec = run.get("spec", {}).get("spec", {})
        shape = spec.get("shape", {})
        body.append(
            f"<h2>{escape(_run_label(run))} <small>({escape(s.get('run_id', ''))})</small></h2>"
        )
        body.append(
            f"<p class='note'>ISL {shape.get('isl_tokens')} / OSL "
            f"{shape.get('osl_tokens')} tokens, range ratio {s.get('range_ratio')}; "
            f"spec hash <code>{escape(str(s.get('spec_hash')))}</code>.</p>"
        )
        body.extend(f"<p class='note'>{escape(n)}</p>" for n in s.get("notes", []))
        body.append(_point_table(s["points"]))
        body.append(_agentic(run))
        body.append(_timeline(run))
        body.append(
            "<details><summary>Frozen spec</summary><pre>"
            f"{escape(json.dumps(spec, indent=2))}</pre></details>"
        )
        target = run.get("manifest", {}).get("target", {})
        if target:
            body.append(
                "<details><summary>Target and client facts</summary><pre>"
                f"{escape(json.dumps(run.get('manifest', {}), indent=2))}</pre></details>"
            )
    comparison = _comparison(runs)
    for heading, section in [*([comparison] if comparison else []), *extra_sections]:
        body.append(f"<h2>{escape(heading)}</h2>{section}")
    body.append(f"<h2>Metric definitions</h2>{_definitions()}")
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>"
        f"{escape(title)}</title><style>{CSS}</style></head><body>{''.join(body)}"
        "</body></html>\n"
    )
