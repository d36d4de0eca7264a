"""The report's chart specs: axes, frontiers, invalid points and tooltips (no browser)."""

from __future__ import annotations

from typing import Any

from report_fakes import row, sweep_a

from scoville.report.charts import scale_of, validity
from scoville.report.vega import to_svg
from scoville.report.views import (
    RunView,
    agentic_chart,
    frontier_charts,
    latency_charts,
    line_chart,
    timeline_chart,
)


def _layer(spec: dict[str, Any], name: str) -> dict[str, Any]:
    (layer,) = [x for x in spec["layer"] if x.get("name") == name]
    return layer


def test_log_axis_only_past_twenty_fold() -> None:
    assert scale_of([180.0, 6104.0])["type"] == "log"  # 34x
    assert "type" not in scale_of([159.0, 290.0])
    assert "type" not in scale_of([1.0, 20.0])  # exactly 20x stays linear
    assert "type" not in scale_of([0.0, 100.0, 5000.0])  # a zero cannot sit on a log axis
    assert scale_of([1.0, 2.0])["padding"] > 0  # a point at the data's edge stays off the frame


def test_validity_reason_shown_or_derived() -> None:
    assert validity(row("c1", 1, 1.0, 1.0, 1.0)) == ("valid", "-")
    bad = row("c1", 1, 1.0, 1.0, 1.0, valid=False, invalid_reason="loop lag 41 ms")
    assert validity(bad) == ("invalid", "loop lag 41 ms")
    failed = row("c1", 1, 1.0, 1.0, 1.0, valid=False, failure_rate=0.12)
    assert validity(failed) == ("invalid", "12.0% of measured requests failed (> 5 %)")


def test_invalid_point_is_drawn_apart_and_off_the_frontier() -> None:
    tput_vs_intvty, _ = frontier_charts([RunView("A", sweep_a())])
    spec = tput_vs_intvty.spec
    assert tput_vs_intvty.n_points == 4
    assert [p["point"] for p in _layer(spec, "points")["data"]["values"]] == ["c1", "c4", "c64"]
    (bad,) = _layer(spec, "invalid")["data"]["values"]
    assert (bad["point"], bad["reason"], bad["load"]) == ("c16", "loop lag 41 ms", "concurrency 16")
    assert _layer(spec, "invalid")["mark"]["filled"] is False
    line = _layer(spec, "frontier")["data"]["values"]
    assert min(p["x"] for p in line) == 160.0 and max(p["x"] for p in line) == 300.0
    assert all(abs(p["x"] - 240.0) > 1e-9 or p["y"] != 1500.0 for p in line)
    assert spec["layer"][0]["encoding"]["y"]["scale"]["type"] == "log"  # 200 .. 6000


def test_frontier_curve_stays_inside_its_points() -> None:
    """The drawn curve passes through each frontier point and is never extrapolated."""
    chart, _ = frontier_charts([RunView("A", sweep_a())])
    line = _layer(chart.spec, "frontier")["data"]["values"]
    knots = {(p["x"], p["y"]) for p in line}
    assert {(300.0, 200.0), (280.0, 700.0), (160.0, 6000.0)} <= knots
    assert all(200.0 - 1e-9 <= p["y"] <= 6000.0 + 1e-9 for p in line)


def test_tooltip_names_point_load_samples_and_validity() -> None:
    chart, _ = frontier_charts([RunView("A", sweep_a())])
    fields = [t["field"] for t in _layer(chart.spec, "points")["encoding"]["tooltip"]]
    for want in ("config", "point", "load", "x", "y", "n", "validity", "reason"):
        assert want in fields, want
    first = _layer(chart.spec, "points")["data"]["values"][0]
    assert first["n"] == 40 and first["validity"] == "valid"


def test_latency_percentiles_in_ms_with_sample_marks() -> None:
    rows = [row("c1", 1, 300.0, 200.0, 0.9, few_samples=["p99_ttft"], n_ttft=40)]
    ttft = next(c for c in latency_charts([RunView("A", rows)]) if c.name == "latency-ttft")
    values = _layer(ttft.spec, "points")["data"]["values"]
    assert [(v["stat"], round(v["y"], 6)) for v in values] == [
        ("p50", 10.0),
        ("p90", 20.0),
        ("p99", 30.0),
    ]
    assert [v["few"] != "-" for v in values] == [False, False, True]
    assert ttft.n_points == 3


def test_legend_toggle_is_bound_on_every_xy_chart() -> None:
    for chart in frontier_charts([RunView("A", sweep_a())]):
        params = _layer(chart.spec, "points")["params"]
        assert params[0]["bind"] == "legend" and params[0]["select"]["fields"] == ["config"]


def test_agentic_replay_chart_uses_its_own_validity() -> None:
    rows = [
        {"lanes": 2, "n_ok": 30, "n_sent": 30, "intvty_agentx": 90.0,
         "output_tput_per_accelerator": 400.0, "agentic_valid": True},
        {"lanes": 8, "n_ok": 30, "n_sent": 30, "intvty_agentx": 60.0,
         "output_tput_per_accelerator": 900.0, "agentic_valid": False},
    ]  # fmt: skip
    chart = agentic_chart(RunView("A (lanes)", rows))
    assert chart is not None and chart.name == "agentic-a-lanes" and chart.n_points == 2
    (bad,) = _layer(chart.spec, "invalid")["data"]["values"]
    assert bad["load"] == "8 lanes"
    assert agentic_chart(RunView("A", sweep_a())) is None


def test_agentic_frontier_takes_only_points_on_the_e2e_frontier() -> None:
    # lanes 2 decodes fast (AgentX interactivity 90) but is slow end to end: on E2E-normalised
    # axes lanes 4 beats it on both (40 > 20 tok/s, 600 > 500 tok/s), so it is drawn, valid,
    # but the frontier line runs from lanes 4 to lanes 1 without it.
    figures = ((1, 100.0, 300.0, 80.0), (2, 90.0, 500.0, 20.0), (4, 50.0, 600.0, 40.0))
    rows = [
        {"point_id": f"lanes{n}", "lanes": n, "n_ok": 30, "n_sent": 30, "agentic_valid": True,
         "intvty_agentx": x, "output_tput_per_accelerator": y, "p90_intvty_e2e": e2e}
        for n, x, y, e2e in figures
    ]  # fmt: skip
    chart = agentic_chart(RunView("A", rows))
    assert chart is not None and chart.n_points == 3
    line = _layer(chart.spec, "frontier")["data"]["values"]
    assert min(v["x"] for v in line) == 50.0 and max(v["x"] for v in line) == 100.0
    near_90 = min(line, key=lambda v: abs(v["x"] - 90.0))
    assert near_90["y"] < 450.0  # through lanes 2 it would be 500
    facts = {p["point"]: p for p in _layer(chart.spec, "points")["data"]["values"]}
    assert facts["lanes2"]["validity"] == "valid" and "E2E-normalised" in facts["lanes2"]["reason"]
    assert facts["lanes1"]["reason"] == "-"


def test_timeline_chart_skips_missing_samples() -> None:
    tl = {"t_s": [0.0, 1.0, 2.0], "running_requests": [1, None, 3], "client_inflight": [1, 2, 3]}
    chart = timeline_chart("run 1", tl)
    assert chart is not None and chart.name == "timeline-run-1"
    values = chart.spec["data"]["values"]
    assert [(v["series"], v["t"]) for v in values if v["series"] == "server running"] == [
        ("server running", 0.0),
        ("server running", 2.0),
    ]
    assert len(values) == 5 and timeline_chart("x", None) is None


def test_rows_without_the_axes_draw_no_empty_frontier() -> None:
    lanes_only = [{"lanes": 2, "n_ok": 3, "n_sent": 3, "intvty_agentx": 9.0}]
    assert frontier_charts([RunView("A", lanes_only)]) == []


def test_line_chart_joins_all_but_points_only_series() -> None:
    series = {"H200 m": [(1.0, 100.0, "run 1"), (2.0, 80.0, "run 2")], "change": [(2.0, 80.0, "")]}
    chart = line_chart("trend", "tput over runs", ("run", "tok/s"), series, points_only=["change"])
    line, points = chart.spec["layer"]
    assert [d["series"] for d in line["data"]["values"]] == ["H200 m", "H200 m"]
    assert chart.n_points == 3 and len(points["data"]["values"]) == 3
    svg = to_svg(chart.spec)
    assert svg.startswith("<svg") and "tput over runs" in svg


def test_a_frontier_is_sampled_within_its_measured_range() -> None:
    """An H200 twin sweep's interactivity range: lo + (hi - lo) x 47/47 came out as
    6.297971002000001, past the curve's end, and the report failed to render."""
    from scoville.report.charts import frontier

    knots = ((1.031996485, 900.0), (3.1, 500.0), (6.297971002, 80.0))
    pts = [
        {"config": "H200", "x": x, "y": y, "point": f"c{i}", "validity": "valid"}
        for i, (x, y) in enumerate(knots)
    ]
    xs = [r["x"] for r in frontier(pts, "higher")]
    assert min(xs) == 1.031996485 and max(xs) == 6.297971002
