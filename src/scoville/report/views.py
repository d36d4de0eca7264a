"""Which charts a report draws, from its runs: throughput vs interactivity (band and error
bars), throughput vs E2E, throughput per kW, latency percentiles per load, and per run the
agentic-replay frontier and the server timeline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scoville.analysis.e2e_gate import E2E_INTERACTIVITY, OFF_E2E_FRONTIER, e2e_gate_marks
from scoville.analysis.rows import Row, num
from scoville.report.charts import (
    HEIGHT,
    WIDTH,
    Axis,
    Chart,
    axis_points,
    color_by_config,
    fade,
    point_facts,
    points_layers,
    quantitative,
    scale_of,
    slug,
    xy_chart,
)
from scoville.report.intervals import RunIntervals, interval_fields

INTVTY = Axis("median_intvty", "interactivity p50 (tok/s/user)")
E2E = Axis("median_e2e", "E2E latency p50 (s)")
TPUT = Axis("tput_per_gpu", "throughput (tok/s/accelerator)")
TPUT_KW = Axis("tput_per_kw", "throughput (tok/s/kW)")
LATENCIES = (
    ("ttft", "TTFT", "ms"),
    ("tpot", "TPOT", "ms"),
    ("itl", "ITL", "ms"),
    ("e2e", "E2E", "s"),
)
STATS = (("median", "p50"), ("p90", "p90"), ("p99", "p99"), ("p999", "p99.9"))


@dataclass(frozen=True, slots=True)
class RunView:
    """One run as the charts see it: its series label (unique in the report) and rows."""

    label: str
    rows: Sequence[Row]
    intervals: RunIntervals = field(default_factory=RunIntervals)


def _intervals(runs: Sequence[RunView], keys: Mapping[str, str]) -> dict[str, Any]:
    return {
        r.label: {pid: interval_fields(iv, keys) for pid, iv in r.intervals.points.items()}
        for r in runs
    }


def _series(runs: Sequence[RunView]) -> dict[str, Sequence[Row]]:
    return {r.label: r.rows for r in runs}


def frontier_charts(runs: Sequence[RunView], repeats: Sequence[RunView] = ()) -> list[Chart]:
    """Throughput per accelerator against interactivity (band, error bars; `repeats`, the mean
    of repeated runs with their band, join this chart only) and against E2E latency; per kW
    against interactivity when any point has a power basis. A chart with no point to draw is
    left out."""
    configs = [r.label for r in (*runs, *repeats)]
    band = [{"config": r.label, **b} for r in (*runs, *repeats) for b in r.intervals.band]
    by_intvty = _intervals(runs, {"x": "median_intvty", "y": "tput_per_gpu"})
    by_e2e = _intervals(runs, {"x": "median_e2e_s", "y": "tput_per_gpu"})
    series = _series(runs)
    out = [
        xy_chart(
            "throughput-vs-interactivity",
            "Throughput vs interactivity",
            INTVTY,
            TPUT,
            axis_points({**series, **_series(repeats)}, INTVTY, TPUT, by_intvty),
            "higher",
            band,
            configs,
        ),
        xy_chart(
            "throughput-vs-e2e",
            "Throughput vs end-to-end latency",
            E2E,
            TPUT,
            axis_points(series, E2E, TPUT, by_e2e),
            "lower",
            configs=configs,
        ),
    ]
    if any(num(p, "tput_per_kw") for r in runs for p in r.rows):
        pts = axis_points(series, INTVTY, TPUT_KW)
        title = "Throughput per kW vs interactivity"
        out.append(
            xy_chart(
                "throughput-per-kw-vs-interactivity", title, INTVTY, TPUT_KW, pts, configs=configs
            )
        )
    return [c for c in out if c.n_points]  # agentic replay rows have their own chart


def _sample_count(row: Row, metric: str) -> Any:
    """Samples behind a percentile: the row's own count when it has one, else its requests."""
    return row.get(f"n_{metric}", row.get("n_ok"))


def latency_rows(runs: Sequence[RunView], metric: str, scale: float = 1e3) -> list[dict[str, Any]]:
    """One chart row per (point, percentile) of `metric`, times `scale` (s -> ms: 1e3)."""
    out = []
    for run in runs:
        for r in run.rows:
            few = set(r.get("few_samples") or ())
            for stat, shown in STATS:
                v = num(r, f"{stat}_{metric}")
                if v is None or not r.get("n_ok"):
                    continue
                facts = point_facts(r, run.label)
                out.append(
                    {
                        **facts,
                        "stat": shown,
                        "y": v * scale,
                        "n": _sample_count(r, metric),
                        "few": "yes: too few for a 95 % interval"
                        if f"{stat}_{metric}" in few
                        else "-",
                    }
                )
    return out


def _level_title(runs: Sequence[RunView]) -> str:
    rows = [r for run in runs for r in run.rows]
    if rows and all(r.get("conc") is not None for r in rows):
        return "concurrency (requests in flight)"
    if rows and all(r.get("request_rate") is not None for r in rows):
        return "arrival rate (req/s)"
    return "load (concurrency or req/s)"


def _latency_tooltip(shown: str, unit: str) -> list[dict[str, Any]]:
    return [
        {"field": "config", "title": "configuration"},
        {"field": "point"},
        {"field": "load"},
        {"field": "stat", "title": "percentile"},
        {"field": "y", "title": f"{shown} ({unit})", "format": ",.4~g"},
        {"field": "n", "title": "samples"},
        {"field": "few", "title": "few samples"},
        {"field": "validity"},
        {"field": "reason"},
    ]


def latency_chart(runs: Sequence[RunView], metric: str, shown: str, unit: str) -> Chart:
    """Percentiles of one latency against load: colour = configuration, dash and shape =
    percentile; lines join valid points only."""
    data = [d for d in latency_rows(runs, metric, 1e3 if unit == "ms" else 1.0) if d["level"]]
    order = [s for _, s in STATS]
    stat = {
        "field": "stat",
        "type": "nominal",
        "title": "percentile",
        "sort": order,
        "scale": {"domain": order},
    }
    enc = {
        "x": quantitative("level", _level_title(runs), scale_of([d["level"] for d in data])),
        "y": quantitative("y", f"{shown} ({unit})", scale_of([d["y"] for d in data])),
        "color": color_by_config([r.label for r in runs]),
    }
    line = {
        "data": {"values": [d for d in data if d["validity"] == "valid"]},
        "mark": {"type": "line", "strokeWidth": 1.6},
        "encoding": {
            **enc,
            "strokeDash": stat,
            "detail": {"field": "stat"},
            "opacity": fade(1.0, 0.1),
        },
    }
    tip = _latency_tooltip(shown, unit)
    layers = [line, *points_layers(data, {**enc, "shape": stat}, tip, size=45)]
    title = f"{shown} percentiles by load"
    spec = {"title": title, "width": 380, "height": HEIGHT - 60, "layer": layers}
    return Chart(f"latency-{metric}", title, spec, len(data))


def latency_charts(runs: Sequence[RunView]) -> list[Chart]:
    return [
        latency_chart(runs, m, shown, unit) for m, shown, unit in LATENCIES if latency_rows(runs, m)
    ]


NO_E2E = "no E2E-normalised interactivity (p90_intvty_e2e): kept off the agentic frontier"
AGENTIC_X = Axis("intvty_agentx", "interactivity (1/p90 ITL, tok/s)")
AGENTIC_Y = Axis("output_tput_per_accelerator", "output tok/s/accelerator")


def agentic_chart(run: RunView) -> Chart | None:
    """Agentic replay: output throughput against p90-ITL interactivity, one point per lane
    count; validity is the replay's own (`agentic_valid`). A point enters the frontier line
    only if it is on the E2E-normalised frontier (AgentX's rule, `e2e_gate`); one that is not
    is drawn, and its tooltip says why it is off the line."""
    rows = [
        {**r, "valid": r.get("agentic_valid", r.get("valid"))}
        for r in run.rows
        if r.get("lanes") is not None
    ]
    if not rows:
        return None
    marks = e2e_gate_marks(rows, AGENTIC_Y.metric)
    pts = axis_points({run.label: rows}, AGENTIC_X, AGENTIC_Y)
    gated = {str(r.get("point_id")) for r, ok in zip(rows, marks, strict=True) if not ok}
    unknown = {str(r.get("point_id")) for r in rows if r.get(E2E_INTERACTIVITY) is None}
    for p in pts:
        if p["validity"] == "valid" and p["point"] in gated:
            p["frontier"] = False
            p["reason"] = NO_E2E if p["point"] in unknown else OFF_E2E_FRONTIER
    return xy_chart(
        f"agentic-{slug(run.label)}",
        "Agentic replay: throughput vs interactivity",
        AGENTIC_X,
        AGENTIC_Y,
        pts,
        configs=[run.label],
    )


TIMELINE = (
    ("running_requests", "server running"),
    ("waiting_requests", "server waiting"),
    ("client_inflight", "client in flight"),
)


def timeline_chart(name: str, timeline: Mapping[str, Any] | None) -> Chart | None:
    """Server-reported running/waiting requests against the client's in-flight count."""
    tl = timeline or {}
    t_s = tl.get("t_s") or []
    data = [
        {"t": t, "series": label, "requests": float(v)}
        for key, label in TIMELINE
        for t, v in zip(t_s, tl.get(key) or [], strict=False)
        if v is not None
    ]
    if not data:
        return None
    title = "Server metrics against the client's view"
    spec = {
        "title": title,
        "width": 860,
        "height": 240,
        "data": {"values": data},
        "mark": {"type": "line", "strokeWidth": 1.5},
        "encoding": {
            "x": {"field": "t", "type": "quantitative", "title": "time (s)"},
            "y": {"field": "requests", "type": "quantitative", "title": "requests"},
            "color": {
                "field": "series",
                "type": "nominal",
                "title": None,
                "legend": {"orient": "bottom"},
            },
            "strokeDash": {"field": "series", "type": "nominal", "legend": None},
            "tooltip": [
                {"field": "series"},
                {"field": "t", "title": "time (s)"},
                {"field": "requests"},
            ],
        },
    }
    return Chart(f"timeline-{slug(name)}", title, spec, 0)


def line_chart(
    name: str,
    title: str,
    axes: tuple[str, str],
    series: Mapping[str, Sequence[tuple[float, float, str]]],
    points_only: Sequence[str] = (),
) -> Chart:
    """A plain chart of labelled (x, y, label) series, each joined by a line unless named in
    `points_only` (e.g. change points over a trend); log y past a 20x span. For a static
    picture, `vega.to_svg(chart.spec)`."""
    data: list[dict[str, Any]] = [
        {"series": s, "x": x, "y": y, "label": label}
        for s, pts in series.items()
        for x, y, label in pts
    ]
    x = quantitative("x", axes[0], {"zero": False})
    y = quantitative("y", axes[1], scale_of([v for pts in series.values() for _, v, _ in pts]))
    color = {"field": "series", "type": "nominal", "title": None, "legend": {"orient": "bottom"}}
    tip = [
        {"field": "series"},
        {"field": "label"},
        {"field": "x", "title": axes[0]},
        {"field": "y", "title": axes[1], "format": ",.4~g"},
    ]
    joined = [d for d in data if d["series"] not in points_only]
    layers = [
        {"data": {"values": joined}, "mark": "line", "encoding": {"x": x, "y": y, "color": color}},
        {
            "name": "points",
            "data": {"values": data},
            "mark": {"type": "point", "filled": True, "size": 70},
            "encoding": {"x": x, "y": y, "color": color, "tooltip": tip},
        },
    ]
    spec = {"title": title, "width": WIDTH, "height": HEIGHT, "layer": layers}
    return Chart(slug(name), title, spec, len(data))
