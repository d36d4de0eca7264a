"""The soak page escapes every label it draws and stays self-contained."""

from __future__ import annotations

from typing import Any

from scoville.report.fleet import soak_page

EVIL = "<img src=x onerror=alert(1)>"


def _summary() -> dict[str, Any]:
    rules = {"window_s": 2.0, "band": 0.2, "hold_windows": 2, "error_budget": 0.01}
    rules |= {"alpha": 0.01, "min_effect": 0.6}
    spec = {"replicas": 2, "replicas_kind": EVIL, "streams_per_replica": 1, "rules": rules}
    window = {"start_s": 0.0, "end_s": 2.0, "throughput_rps": 3.0, "p99_ms": 10.0}
    health = {"replica": 0, "n_ok": 9, "n_failed": 0, "median_ms": 5.0, "p99_ms": 9.0}
    health |= {"effect_a": 0.5, "p_holm": 1.0, "degraded": False}
    acct = {"sent": 9, "ok": 9, "failed": 0, "cancelled": 0, "records": 9, "adds_up": True}
    acct |= {"router_retried": 0, "by_error": {EVIL: 1}, "router_outcomes": {"ok": 9}}
    return {
        "spec": spec,
        "duration_s": 2.0,
        "windows": [window],
        "events": [{"kind": EVIL, "action": "start", "t_s": 1.0, "replica": 0}],
        "faults": [{"fault": 0, "kind": EVIL, "note": EVIL}],
        "replicas": [health],
        "drift": {"throughput_rps": None, "p99_ms": None},
        "accounting": acct,
        "error_budget_burned": 0.0,
    }


def test_every_label_is_escaped() -> None:
    page = soak_page(_summary())
    assert EVIL not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<script" not in page and "http" not in page.replace("http://www.w3.org/2000/svg", "")


def _label_boxes(page: str) -> list[tuple[float, float, float]]:
    """(left, right, baseline) of each marker label in the first chart, from the SVG text."""
    import re

    svg = page.split("</svg>")[0]
    found = re.findall(r'<text x="([\d.]+)" y="(\d+)" font-size="9"[^>]*>([^<]*)</text>', svg)
    return [(float(x), float(x) + 5.4 * len(t), float(y)) for x, y, t in found]


def test_marker_labels_at_nearby_times_do_not_overlap() -> None:
    s = _summary()
    s["duration_s"] = 100.0
    s["events"] = [
        {"kind": "kill", "action": "start", "t_s": 40.0, "replica": 1},
        {"kind": "kill", "action": "restart", "t_s": 40.5, "replica": 1},
        {"kind": "kill", "action": "ready", "t_s": 41.0, "replica": 1},
        {"kind": "kill", "action": "end", "t_s": 99.9, "replica": 1},
    ]
    boxes = _label_boxes(soak_page(s))
    assert len(boxes) == 4
    for i, (l1, r1, y1) in enumerate(boxes):
        assert r1 <= 750, "a label runs past the chart's right edge"
        for l2, r2, y2 in boxes[i + 1 :]:
            assert y1 != y2 or r1 <= l2 or r2 <= l1, "two marker labels overlap"
