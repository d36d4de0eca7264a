"""The soak page: a self-contained HTML file (inline SVG, no script, no network) with the
timeline of throughput and p99 latency per window, fault markers, recovery per fault, the
health of each replica, drift and the accounting. Every label is escaped.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

_W, _H, _PAD_L, _PAD_B = 760, 190, 60, 28
_FAULT_COLOURS = {"start": "#d62728", "end": "#2ca02c", "ready": "#2ca02c", "restart": "#ff7f0e"}


def _num(v: Any, digits: int = 2) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return escape(str(v))


_CHAR_W = 5.4  # width of one 9-px sans-serif character, generous so labels never touch


def _event_label(e: dict[str, Any]) -> str:
    replica = f" r{e['replica']}" if e.get("replica") is not None else ""
    return f"{e.get('kind')} {e.get('action')}{replica}"


def _place_labels(xs: Sequence[float], labels: Sequence[str]) -> list[tuple[float, int]]:
    """Left edge and text row of each marker label: the first row where the label does not
    overlap one already placed, and shifted left where it would run past the chart's edge."""
    placed: list[list[tuple[float, float]]] = []
    out: list[tuple[float, int]] = []
    for ex, label in zip(xs, labels, strict=True):
        width = _CHAR_W * len(label)
        left = min(ex + 2, _W - 10 - width)
        row = next(
            (
                i
                for i, spans in enumerate(placed)
                if all(left + width + 3 <= a or left >= b + 3 for a, b in spans)
            ),
            len(placed),
        )
        if row == len(placed):
            placed.append([])
        placed[row].append((left, left + width))
        out.append((left, row))
    return out


def _panel(
    title: str, points: Sequence[tuple[float, float | None]], t_max: float, events: list[Any]
) -> str:
    """One line chart of (t_s, value) with vertical markers at fault events."""
    vals = [v for _t, v in points if v is not None]
    top = max(vals) * 1.1 if vals and max(vals) > 0 else 1.0
    plot_w, plot_h = _W - _PAD_L - 10, _H - _PAD_B - 20

    def x(t: float) -> float:
        return _PAD_L + plot_w * t / max(t_max, 1e-9)

    def y(v: float) -> float:
        return 20 + plot_h * (1 - v / top)

    path = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in points if v is not None)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" role="img">',
        f'<text x="{_PAD_L}" y="14" font-size="12">{escape(title)}</text>',
        f'<line x1="{_PAD_L}" y1="{20 + plot_h}" x2="{_W - 10}" y2="{20 + plot_h}" stroke="#888"/>',
        f'<line x1="{_PAD_L}" y1="20" x2="{_PAD_L}" y2="{20 + plot_h}" stroke="#888"/>',
        f'<text x="4" y="24" font-size="10">{escape(f"{top:.3g}")}</text>',
        f'<text x="4" y="{20 + plot_h}" font-size="10">0</text>',
        f'<text x="{_W - 60}" y="{_H - 6}" font-size="10">{escape(f"{t_max:.0f} s")}</text>',
    ]
    labels = [_event_label(e) for e in events]
    xs = [x(float(e.get("t_s", 0.0))) for e in events]
    for e, ex, label, (lx, row) in zip(events, xs, labels, _place_labels(xs, labels), strict=True):
        colour = _FAULT_COLOURS.get(str(e.get("action")), "#999")
        parts.append(
            f'<line x1="{ex:.1f}" y1="20" x2="{ex:.1f}" y2="{20 + plot_h}" stroke="{colour}" '
            f'stroke-dasharray="4 3"><title>{escape(label)}</title></line>'
            f'<text x="{lx:.1f}" y="{30 + 10 * row}" font-size="9" fill="{colour}">'
            f"{escape(label)}</text>"
        )
    if path:
        parts.append(f'<polyline fill="none" stroke="#1f77b4" stroke-width="1.5" points="{path}"/>')
    parts.append("</svg>")
    return "".join(parts)


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{_num(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _fault_rows(faults: list[dict[str, Any]]) -> list[list[Any]]:
    return [
        [
            f["fault"],
            f["kind"],
            f.get("replica"),
            f.get("started_s"),
            f.get("cleared_s"),
            f.get("recovery_s"),
            f.get("recovery_after_clear_s"),
            f.get("out_of_band_windows"),
            f.get("lost_until_recovered"),
            f.get("note", ""),
        ]
        for f in faults
    ]


def _replica_rows(replicas: list[dict[str, Any]]) -> list[list[Any]]:
    return [
        [
            r["replica"],
            r["n_ok"],
            r["n_failed"],
            r["median_ms"],
            r["p99_ms"],
            r["effect_a"],
            r["p_holm"],
            "DEGRADED" if r["degraded"] else "ok",
        ]
        for r in replicas
    ]


def _drift_rows(drift: dict[str, Any]) -> list[list[Any]]:
    rows = []
    for name, t in drift.items():
        if t is None:
            rows.append([name, None, None, None, ""])
            continue
        cps = ", ".join(f"{c:.0f}" for c in t["change_at_s"])
        rows.append([name, t["slope_per_h"], t["low_per_h"], t["high_per_h"], cps])
    return rows


_STYLE = (
    "<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;"
    "margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}</style>"
)
_FAULT_HEAD = ["fault", "kind", "replica", "at s", "cleared s", "recovery s", "after clear s"]
_REPLICA_HEAD = ["replica", "ok", "failed", "median ms", "p99 ms", "A", "p (Holm)", "verdict"]
_DRIFT_HEAD = ["series", "slope per h", "95 % low", "95 % high", "change points (s)"]


def _timeline(s: dict[str, Any]) -> list[str]:
    wins = s["windows"]
    mids = [(w["start_s"] + w["end_s"]) / 2 for w in wins]
    events = [e for e in s["events"] if e.get("kind") != "soak"]
    return [
        _panel(title, list(zip(mids, [w[key] for w in wins], strict=True)), s["duration_s"], events)
        for title, key in (
            ("throughput (ok req/s)", "throughput_rps"),
            ("p99 E2E latency (ms)", "p99_ms"),
        )
    ]


def _accounting(s: dict[str, Any]) -> str:
    acct = s["accounting"]
    keys = ("sent", "ok", "failed", "cancelled", "records", "adds_up", "router_retried")
    rows = [[k, acct[k]] for k in keys]
    rows.append(["error budget burned", s["error_budget_burned"]])
    rows += [[f"error: {k}", v] for k, v in acct["by_error"].items()]
    rows += [[f"router: {k}", v] for k, v in acct["router_outcomes"].items()]
    return _table(["what", "count"], rows)


def _rules_text(rules: dict[str, Any]) -> tuple[str, str]:
    band = rules["band"]
    recovery = (
        f"<p>Recovered: {rules['hold_windows']} consecutive windows with throughput &ge; "
        f"{1 - band:.2f} &times; and p99 &le; {1 + band:.2f} &times; the pre-fault baseline, "
        f"and failures within the error budget ({rules['error_budget']:.2%}). "
        "Resolution: one window.</p>"
    )
    health = (
        "<p>Mann-Whitney U of each replica's ok E2E latencies against the pooled others "
        f"(one-sided), Holm-adjusted; degraded when p &lt; {rules['alpha']} and "
        f"A = P(slower) &ge; {rules['min_effect']}.</p>"
    )
    return recovery, health


def soak_page(s: dict[str, Any]) -> str:
    """The whole page for one soak summary (see `fleet/summary.py` for its fields)."""
    spec, rules = s["spec"], s["spec"]["rules"]
    title = escape(
        f"soak: {spec['replicas']} {spec['replicas_kind']} replicas, "
        f"{s['duration_s']:.0f} s, {spec['streams_per_replica']} streams per replica"
    )
    recovery_text, health_text = _rules_text(rules)
    return "\n".join(
        [
            f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>",
            f"{_STYLE}</head><body><h1>{title}</h1>",
            f"<p>Windows of {_num(rules['window_s'], 1)} s. Dashed lines: fault events (red "
            "start, orange restart, green cleared).</p>",
            *_timeline(s),
            "<h2>Recovery</h2>",
            recovery_text,
            _table([*_FAULT_HEAD, "bad windows", "lost", "note"], _fault_rows(s["faults"])),
            "<h2>Replica health</h2>",
            health_text,
            _table(_REPLICA_HEAD, _replica_rows(s["replicas"])),
            "<h2>Drift</h2>",
            _table(_DRIFT_HEAD, _drift_rows(s["drift"])),
            "<h2>Accounting</h2>",
            _accounting(s),
            "</body></html>",
        ]
    )
