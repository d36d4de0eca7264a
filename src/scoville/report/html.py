"""The report: one self-contained HTML file, interactive and offline. Vega-Lite charts (the
Vega/Vega-Lite/vega-embed bundle inlined, no network at view time) with bands, tooltips and
legend toggles; provenance first; point and every-metric tables; each run's frozen spec.

For one run or several (a comparison, with the comparison table). After the charts render, a
small script writes each chart's drawn point count (and any error) onto <body>, which the
headless-browser test reads.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

from scoville.analysis.compare import compare_groups, html_table
from scoville.analysis.rows import GroupKey, Row, group_rows, num
from scoville.bundle.run import RunBundle
from scoville.report import tables, vega
from scoville.report.charts import Chart, scale_of
from scoville.report.intervals import RunIntervals, repeats_band, run_intervals
from scoville.report.quality import quality_section, status_strip
from scoville.report.views import (
    RunView,
    agentic_chart,
    frontier_charts,
    latency_charts,
    timeline_chart,
)

CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1180px;color:#222;padding:0 1em}
h1{font-size:1.6em}h2{font-size:1.25em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}
td,th{border:1px solid #ddd;padding:3px 7px;text-align:right}th{background:#f4f4f4}
td.l,th.l{text-align:left}ul.why{color:#a00;font-size:.9em}.bad{background:#fde2e2}.note{color:#555;font-size:.9em}
.scroll{overflow-x:auto;max-width:100%}
pre{background:#f7f7f7;padding:1em;overflow:auto;font-size:.8em}
.charts{display:flex;flex-wrap:wrap;gap:.5em}
figure.chart{margin:.3em;min-height:320px;max-width:100%;overflow-x:auto}
"""

EMBED_JS = """
(function () {
  var specs = JSON.parse(document.getElementById("scoville-specs").textContent);
  var drawn = {}, errors = [];
  var opts = {renderer: "svg", mode: "vega-lite",
              actions: {export: true, source: false, compiled: false, editor: false}};
  var jobs = Object.keys(specs).map(function (name) {
    var el = document.querySelector('[data-chart="' + name + '"] .vis');
    return vegaEmbed(el, specs[name], opts).then(function () {
      drawn[name] = el.querySelectorAll("g.points_marks > path, g.invalid_marks > path").length;
    }).catch(function (err) {
      errors.push(name + ": " + err);
      el.textContent = "This chart failed to render: " + err;
    });
  });
  Promise.all(jobs).then(function () {
    document.body.setAttribute("data-charts-drawn", JSON.stringify(drawn));
    document.body.setAttribute("data-chart-errors", JSON.stringify(errors));
  });
})();
"""


@dataclass(frozen=True, slots=True)
class ReportRun:
    """One run as the report reads it: `label` names its series (unique in the report)."""

    label: str
    summary: Mapping[str, Any]
    config: str = ""  # the configuration's label (GroupKey), shared by repeated runs
    spec: Mapping[str, Any] = field(default_factory=dict)
    manifest: Mapping[str, Any] = field(default_factory=dict)
    intervals: RunIntervals = field(default_factory=RunIntervals)
    quality: Mapping[str, Any] | None = None  # quality.json, when the run had a quality pass

    @property
    def rows(self) -> list[Row]:
        return list(self.summary.get("points", []))

    def view(self) -> RunView:
        return RunView(self.label, self.rows, self.intervals)


def _configs(bundles: Sequence[RunBundle]) -> list[str]:
    return [
        GroupKey.of(b.summary["points"][0]).label() if b.summary["points"] else b.run_id
        for b in bundles
    ]


def _labels(bundles: Sequence[RunBundle]) -> list[str]:
    """Each run's configuration label; runs that share one get their run id appended."""
    base = _configs(bundles)
    return [
        f"{lab} [{b.run_id}]" if base.count(lab) > 1 else lab
        for lab, b in zip(base, bundles, strict=True)
    ]


def report_runs(bundles: Sequence[RunBundle], n_resamples: int = 300) -> list[ReportRun]:
    """Bundles as the report reads them, with bootstrap intervals where records exist."""
    xs = [x for b in bundles for r in b.summary["points"] if (x := num(r, "median_intvty"))]
    log_x = scale_of(xs).get("type") == "log"
    out = []
    for label, config, b in zip(_labels(bundles), _configs(bundles), bundles, strict=True):
        rows = list(b.summary["points"])
        ivs = run_intervals(b.path, rows, log_x, n_resamples)
        out.append(ReportRun(label, b.summary, config, b.spec, b.manifest, ivs, b.quality))
    return out


def repeat_views(runs: Sequence[ReportRun], n_resamples: int = 300) -> list[RunView]:
    """Per configuration measured by several runs: their mean points with a band over the
    runs, as one more series of the throughput/interactivity chart."""
    groups: dict[str, list[ReportRun]] = {}
    for r in runs:
        groups.setdefault(r.config, []).append(r)
    xs = [x for r in runs for p in r.rows if (x := num(p, "median_intvty"))]
    log_x = scale_of(xs).get("type") == "log"
    out = []
    for config, group in groups.items():
        if len(group) < 2:
            continue
        rows, band = repeats_band([g.rows for g in group], log_x, n_resamples)
        note = f"95 % bootstrap band over {len(group)} runs ({n_resamples} resamples)"
        label = f"{config} (mean of {len(group)} runs)"
        out.append(RunView(label, rows, RunIntervals(band, {}, note)))
    return out


def _figure(chart: Chart) -> str:
    return (
        f"<figure class='chart' data-chart='{escape(chart.name)}' "
        f"data-points='{chart.n_points}'><div class='vis'></div></figure>"
    )


def _comparison(runs: Sequence[ReportRun]) -> tuple[str, str] | None:
    """The seeds' comparison table of every configuration against the first run's."""
    rows = [p for r in runs for p in r.rows]
    if len(group_rows(rows)) < 2:
        return None
    baseline = GroupKey.of(rows[0]).label()  # the first run that has points
    tables_ = compare_groups(rows, baseline)
    return f"Comparison against {baseline}", "".join(html_table(t) for t in tables_)


def _run_section(run: ReportRun, charts: list[Chart]) -> list[str]:
    s = run.summary
    out = [f"<h2>{escape(run.label)} <small>({escape(str(s.get('run_id', '')))})</small></h2>"]
    out += [f"<p class='note'>{escape(n)}</p>" for n in s.get("notes", [])]
    out.append(tables.point_table(run.rows))
    if run.quality is not None:
        out.append(quality_section(run.label, run.quality))
    out.append(
        "<details open><summary>Every metric, with its convention and sample count"
        f"</summary>{tables.metric_table(run.rows)}</details>"
    )
    extra = [
        c
        for c in (agentic_chart(run.view()), timeline_chart(run.label, s.get("server_timeline")))
        if c is not None
    ]
    charts.extend(extra)
    if extra:
        out.append(f"<div class='charts'>{''.join(_figure(c) for c in extra)}</div>")
    out.append(tables.agentic_table(run.rows))
    out.append(
        "<details><summary>Frozen spec</summary><pre>"
        f"{escape(json.dumps(run.spec.get('spec', {}), indent=2))}</pre></details>"
    )
    if run.manifest:
        out.append(
            "<details><summary>Target and client facts</summary><pre>"
            f"{escape(json.dumps(run.manifest, indent=2))}</pre></details>"
        )
    return out


def _reading_note(runs: Sequence[RunView]) -> str:
    bands = "; ".join(f"{r.label}: {r.intervals.note}" for r in runs if r.intervals.note)
    return (
        "<p class='note'>Interactivity = 1/TPOT (tok/s/user); percentiles of interactivity are "
        "tail-aligned (pX = 1/pX(TPOT)). Throughput per accelerator counts input + output tokens "
        "of successful measured requests over the measurement window (warmup excluded). Lines are "
        "each configuration's Pareto frontier over its valid points; shaded bands and error bars "
        "are 95 % bootstrap intervals. <b>Hollow grey diamonds are invalid points</b> (never on "
        "a frontier; the tooltip gives the reason). Hover a point for its facts; click a "
        "configuration in a legend to show it alone (shift-click adds one). An axis whose data "
        f"span more than 20x is logarithmic. Intervals: {escape(bands or 'none')}.</p>"
    )


def _script_json(data: object) -> str:
    return json.dumps(data, separators=(",", ":")).replace("</", "<\\/")


def render(
    runs: Sequence[ReportRun],
    title: str = "scoville report",
    extra_sections: Sequence[tuple[str, str]] = (),
) -> str:
    """HTML for one or more runs. `extra_sections` are (heading, html) pairs appended before
    the definitions."""
    repeats = repeat_views(runs)
    charts = _main_charts(runs, repeats)
    libs = ", ".join(f"{k} {v}" for k, v in vega.versions().items())
    body = [
        f"<h1>{escape(title)}</h1><h2>Provenance</h2>",
        tables.provenance([r.label for r in runs], [(r.summary, r.spec, r.manifest) for r in runs]),
        f"<p class='note'>Charts drawn with {escape(libs)}, inlined in this file.</p>",
        _reading_note([*(r.view() for r in runs), *repeats]),
        f"<div class='charts'>{''.join(_figure(c) for c in charts)}</div>",
        status_strip([(r.label, r.quality) for r in runs]),
    ]
    for run in runs:
        body.extend(_run_section(run, charts))
    comparison = _comparison(runs)
    for heading, section in [*([comparison] if comparison else []), *extra_sections]:
        body.append(f"<h2>{escape(heading)}</h2>{section}")
    body.append(f"<h2>Metric definitions</h2>{tables.definitions()}")
    specs = _script_json({c.name: c.spec for c in charts})
    bundle = re.sub("</script", "<\\\\/script", vega.bundle(), flags=re.IGNORECASE)
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>"
        f"{escape(title)}</title><style>{CSS}</style></head><body>{''.join(body)}"
        f"<script type='application/json' id='scoville-specs'>{specs}</script>"
        f"<script>{bundle}</script><script>{EMBED_JS}</script></body></html>\n"
    )


def _main_charts(runs: Sequence[ReportRun], repeats: Sequence[RunView]) -> list[Chart]:
    views = [r.view() for r in runs]
    return [*frontier_charts(views, repeats), *latency_charts(views)]


def report_charts(runs: Sequence[ReportRun]) -> list[Chart]:
    """Every chart of the report, in page order (what `--format png|svg` exports)."""
    out = _main_charts(runs, repeat_views(runs))
    for r in runs:
        out += [
            c
            for c in (
                agentic_chart(r.view()),
                timeline_chart(r.label, r.summary.get("server_timeline")),
            )
            if c is not None
        ]
    return out
