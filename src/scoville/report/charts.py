"""The report's charts as Vega-Lite specs: frontiers with bands and error bars, throughput vs
E2E, latency percentiles. Each point carries its tooltip facts (configuration, load, sample
count, validity and reason); invalid points are hollow grey diamonds, never on a frontier.

A chart's `n_points` is the number of point marks it draws, what the browser check counts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scoville.analysis.frontier import Better, FrontierPoint, pareto
from scoville.analysis.monotone import MonotoneCubic
from scoville.analysis.rows import Row, num

LOG_SPAN = 20.0  # an axis whose data spans more than this ratio is drawn on a log scale
WIDTH, HEIGHT = 460, 300
PAD_PX = 10
INVALID_GREY = "#8c8c8c"
CURVE_SAMPLES = 48  # points a frontier curve is drawn with
TOGGLE = "cfg"  # the legend-bound selection: click a configuration to show it alone
TOGGLE_PARAM = {"name": TOGGLE, "select": {"type": "point", "fields": ["config"]}, "bind": "legend"}
LEGEND = {  # symbols solid whichever layer the legend is merged from
    "orient": "bottom",
    "direction": "vertical",
    "labelLimit": 420,
    "symbolType": "circle",
    "symbolOpacity": 1,
}
Spec = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Chart:
    """One chart: `name` is its element id and export file stem."""

    name: str
    title: str
    spec: Spec
    n_points: int


@dataclass(frozen=True, slots=True)
class Axis:
    metric: str  # the row key (seconds, tokens/s as in summary rows)
    title: str
    scale: float = 1.0  # display multiplier (s -> ms: 1e3)


def slug(text: str) -> str:
    """A chart name safe as an element attribute and a file name."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "chart"


def scale_of(values: Sequence[float], zero: bool = False) -> dict[str, Any]:
    """Log when every value is positive and the data span more than LOG_SPAN x. A few pixels
    of padding keep a point at the data's edge off a linear frame (not below a zero baseline;
    a log axis is rounded out to powers of ten already)."""
    pos = [v for v in values if v > 0]
    if pos and len(pos) == len(values) and max(pos) / min(pos) > LOG_SPAN:
        return {"type": "log"}
    return {"zero": True} if zero else {"zero": False, "padding": PAD_PX}


def load_text(row: Row) -> str:
    if row.get("lanes") is not None:
        return f"{row['lanes']} lanes"
    if row.get("conc") is not None:
        return f"concurrency {row['conc']}"
    if row.get("request_rate") is not None:
        return f"{row['request_rate']:g} req/s"
    return "-"


def validity(row: Row) -> tuple[str, str]:
    """("valid" | "invalid", the one-line reason; "-" when valid and none is given). Rows carry
    their reasons as `invalid_reasons` (a list, one tagged line each) or `invalid_reason`."""
    reasons = row.get("invalid_reasons")
    reason = "; ".join(map(str, reasons)) if reasons else row.get("invalid_reason")
    if row.get("valid") is not False:
        return "valid", str(reason) if reason else "-"
    if reason:
        return "invalid", str(reason)
    rate = num(row, "failure_rate")
    if rate is not None and rate > 0.05:
        return "invalid", f"{rate:.1%} of measured requests failed (> 5 %)"
    return "invalid", "marked invalid by the run"


def point_facts(row: Row, config: str) -> dict[str, Any]:
    """What every tooltip shows of a point."""
    ok, reason = validity(row)
    return {
        "config": config,
        "point": str(row.get("point_id", "")),
        "load": load_text(row),
        "level": num(row, "conc") or num(row, "request_rate") or num(row, "lanes"),
        "n": row.get("n_ok"),
        "sent": row.get("n_sent"),
        "validity": ok,
        "reason": reason,
    }


def _tooltip(x: Axis, y: Axis, extra: Sequence[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    return [
        {"field": "config", "title": "configuration"},
        {"field": "point", "title": "point"},
        {"field": "load", "title": "load"},
        {"field": "x", "title": x.title, "format": ",.4~g"},
        {"field": "y", "title": y.title, "format": ",.4~g"},
        *extra,
        {"field": "n", "title": "samples (successful requests)"},
        {"field": "sent", "title": "requests sent"},
        {"field": "validity", "title": "validity"},
        {"field": "reason", "title": "reason"},
    ]


def quantitative(field: str, title: str, scale: dict[str, Any]) -> dict[str, Any]:
    return {"field": field, "type": "quantitative", "title": title, "scale": scale}


def fade(on: float, off: float) -> dict[str, Any]:
    """Opacity `on` for the configurations the legend selects (all, at first), else `off`."""
    return {"condition": {"param": TOGGLE, "value": on}, "value": off}


def color_by_config(configs: Sequence[str]) -> dict[str, Any]:
    """Colour by configuration, one fixed domain so every chart colours a run alike."""
    return {
        "field": "config",
        "type": "nominal",
        "title": "configuration (click to toggle)",
        "scale": {"domain": list(configs)},
        "legend": LEGEND,
    }


def points_layers(
    pts: Sequence[dict[str, Any]], enc: Spec, tip: list[Any], size: int = 70
) -> list[Spec]:
    """Valid points (filled, encoded by `enc`: x, y, colour = configuration, the legend
    toggle) in layer "points"; invalid ones as hollow grey diamonds in layer "invalid"."""
    valid = [p for p in pts if p["validity"] == "valid"]
    bad = [p for p in pts if p["validity"] != "valid"]
    layers: list[Spec] = [
        {
            "name": "points",
            "data": {"values": valid},
            "params": [TOGGLE_PARAM],
            "mark": {"type": "point", "filled": True, "size": size},
            "encoding": {
                **enc,
                "opacity": fade(1.0, 0.12),
                "tooltip": tip,
            },
        }
    ]
    if bad:
        layers.append(
            {
                "name": "invalid",
                "data": {"values": bad},
                "mark": {
                    "type": "point",
                    "shape": "diamond",
                    "filled": False,
                    "size": size + 40,
                    "strokeWidth": 1.8,
                    "color": INVALID_GREY,
                },
                "encoding": {
                    "x": enc["x"],
                    "y": enc["y"],
                    "opacity": fade(1.0, 0.12),
                    "tooltip": tip,
                },
            }
        )
    return layers


def _error_layers(pts: Sequence[dict[str, Any]], enc: Spec) -> list[Spec]:
    """95 % bootstrap error bars on each valid point that has intervals."""
    out: list[Spec] = []
    xs, ys, color = enc["x"], enc["y"], enc["color"]
    with_x = [p for p in pts if "x_lo" in p and p["validity"] == "valid"]
    with_y = [p for p in pts if "y_lo" in p and p["validity"] == "valid"]
    rule = {"type": "rule", "strokeWidth": 1.2}
    if with_x:
        out.append(
            {
                "data": {"values": with_x},
                "mark": rule,
                "encoding": {
                    "x": {**xs, "field": "x_lo"},
                    "x2": {"field": "x_hi"},
                    "y": ys,
                    "color": color,
                    "opacity": fade(0.7, 0.05),
                },
            }
        )
    if with_y:
        out.append(
            {
                "data": {"values": with_y},
                "mark": rule,
                "encoding": {
                    "x": xs,
                    "y": {**ys, "field": "y_lo"},
                    "y2": {"field": "y_hi"},
                    "color": color,
                    "opacity": fade(0.7, 0.05),
                },
            }
        )
    return out


def frontier(
    pts: Sequence[dict[str, Any]], x_better: Better, log_x: bool = False
) -> list[dict[str, Any]]:
    """Each configuration's Pareto frontier over its valid points, drawn as the monotone
    cubic the analysis reads it with (sampled between its ends, never beyond), as line rows."""
    by_config: dict[str, list[FrontierPoint]] = {}
    for p in pts:
        if p["validity"] == "valid" and p.get("frontier", True):  # False: gated off it
            by_config.setdefault(p["config"], []).append(FrontierPoint(p["x"], p["y"], p["point"]))
    out = []
    for config, cands in by_config.items():
        front = pareto(cands, x_better)
        if len(front) < 2:
            continue
        curve = MonotoneCubic.fit([f.x for f in front], [f.y for f in front])
        xs = sorted({*_samples(curve.x_min, curve.x_max, log_x), *(f.x for f in front)})
        out += [{"config": config, "x": x, "y": curve(x)} for x in xs]
    return out


def _samples(lo: float, hi: float, log: bool, n: int = CURVE_SAMPLES) -> list[float]:
    """n points from lo to hi; the ends exact (rounding must not step past the curve's range)."""
    if log and lo > 0:
        xs = [lo * (hi / lo) ** (i / (n - 1)) for i in range(n)]
    else:
        xs = [lo + (hi - lo) * i / (n - 1) for i in range(n)]
    return [min(max(x, lo), hi) for x in xs]


def _line_layers(
    pts: Sequence[dict[str, Any]], band: Sequence[dict[str, Any]], enc: Spec, x_better: Better
) -> list[Spec]:
    """The band (rows {config, x, lo, hi}) under each configuration's frontier line."""
    xs, ys = enc["x"], enc["y"]
    layers: list[Spec] = []
    if band:
        layers.append(
            {
                "name": "band",
                "data": {"values": list(band)},
                "mark": {"type": "area", "opacity": 0.22},
                "encoding": {
                    "x": xs,
                    "y": {**ys, "field": "lo"},
                    "y2": {"field": "hi"},
                    "color": enc["color"],
                    "opacity": fade(0.25, 0.03),
                },
            }
        )
    line = frontier(pts, x_better, xs["scale"].get("type") == "log")
    if line:
        layers.append(
            {
                "name": "frontier",
                "data": {"values": line},
                "mark": {"type": "line", "strokeWidth": 2},
                "encoding": {**enc, "opacity": fade(1.0, 0.1)},
            }
        )
    return layers


def xy_chart(
    name: str,
    title: str,
    x: Axis,
    y: Axis,
    pts: Sequence[dict[str, Any]],
    x_better: Better = "higher",
    band: Sequence[dict[str, Any]] = (),
    configs: Sequence[str] = (),
) -> Chart:
    """Points (with `x`, `y` and point_facts), each configuration's frontier line, the band
    (rows {config, x, lo, hi}) and error bars where points carry `x_lo`/`y_lo`."""
    all_x = [p["x"] for p in pts] + [b["x"] for b in band]
    all_y = [p["y"] for p in pts] + [v for b in band for v in (b["lo"], b["hi"])]
    enc = {
        "x": quantitative("x", x.title, scale_of(all_x)),
        "y": quantitative("y", y.title, scale_of(all_y, zero=True)),
        "color": color_by_config(configs or sorted({p["config"] for p in pts})),
    }
    extra = [
        {"field": "y_lo", "title": "y 95 % low", "format": ",.4~g"},
        {"field": "y_hi", "title": "y 95 % high", "format": ",.4~g"},
    ]
    tip = _tooltip(x, y, extra if any("y_lo" in p for p in pts) else ())
    layers = _line_layers(pts, band, enc, x_better)
    layers += _error_layers(pts, enc)
    layers += points_layers(pts, enc, tip)
    spec = {"title": title, "width": WIDTH, "height": HEIGHT, "layer": layers}
    return Chart(name, title, spec, len(pts))


def axis_points(
    series: Mapping[str, Sequence[Row]],
    x: Axis,
    y: Axis,
    intervals: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None,
) -> list[dict[str, Any]]:
    """Chart rows of every point that has both numbers; `intervals` (config -> point_id ->
    fields such as x_lo/y_hi, in row units) are scaled like the axes."""
    out = []
    for config, rows in series.items():
        for r in rows:
            xv, yv = num(r, x.metric), num(r, y.metric)
            if xv is None or yv is None or not r.get("n_ok"):
                continue
            p = {**point_facts(r, config), "x": xv * x.scale, "y": yv * y.scale}
            extra = (intervals or {}).get(config, {}).get(str(r.get("point_id")), {})
            for k, v in extra.items():
                p[k] = v * (x.scale if k.startswith("x") else y.scale)
            out.append(p)
    return out
