"""The comparison table on two hand-built configurations with answers worked out by hand."""

from __future__ import annotations

from typing import Any

import pytest

from scoville.analysis.compare import compare, format_ratio, html_table


def pt(system: str, intvty: float, per_kw: float, e2e: float, **kw: Any) -> dict[str, Any]:
    r: dict[str, Any] = {
        "point_id": f"{system}{intvty}",
        "valid": True,
        "system": system,
        "model": "m",
        "framework": "f",
        "precision": "fp8",
        "spec_decode": "none",
        "disagg": False,
        "median_intvty": intvty,
        "tput_per_kw": per_kw,
        "tput_per_gpu": per_kw * 0.7,
        "median_e2e": e2e,
        "power_w_per_accelerator": 700,
        "power_boundary": "package-tdp",
    }
    r.update(kw)
    return r


# System on the line y = 50000 - 100 x; baseline two points (a straight segment).
SYS = [pt("A", 100, 40000, 3.0), pt("A", 200, 30000, 2.0), pt("A", 300, 20000, 1.0)]
BASE = [
    pt("B", 50, 20000, 4.0, power_w_per_accelerator=1200),
    pt("B", 150, 10000, 2.5, power_w_per_accelerator=1200),
    pt("B", 400, 99999, 0.1, valid=False),  # an invalid point must not count
]


def test_headline_lines() -> None:
    t = compare(SYS, BASE, targets=[250, 80])
    assert t.system == "A (f, fp8)" and t.baseline == "B (f, fp8)"
    assert t.line("peak_tput_per_kw").ratio == pytest.approx(2.0)
    assert t.line("min_e2e_s").ratio == pytest.approx(2.5)  # 2.5 s / 1.0 s, lower is better
    assert format_ratio(t.line("min_e2e_s")) == "2.50x lower"
    assert t.line("max_intvty").ratio == pytest.approx(2.0)
    assert t.line("peak_tput_per_gpu").system == pytest.approx(28000.0)
    assert t.baseline_power is not None and t.baseline_power.w_per_accelerator == 1200


def test_iso_interactivity_lines() -> None:
    t = compare(SYS, BASE, targets=[250, 80])
    iso = t.line("tput_per_kw_at_baseline_best_intvty")
    assert (iso.system, iso.baseline) == pytest.approx((35000.0, 10000.0))
    assert iso.ratio == pytest.approx(3.5)
    at250 = t.line("tput_per_kw_at_intvty_250")
    assert at250.system == pytest.approx(25000.0)
    assert at250.ratio is None and at250.status == "unreachable for baseline"
    at80 = t.line("tput_per_kw_at_intvty_80")
    assert at80.baseline == pytest.approx(17000.0)
    assert at80.status == "below_range for system" and "40000" in at80.note


def test_no_power_is_said_not_hidden() -> None:
    strip = [{k: v for k, v in r.items() if k != "tput_per_kw"} for r in SYS]
    t = compare(strip, BASE)
    assert t.line("peak_tput_per_kw").status == "no power"
    assert t.line("tput_per_kw_at_baseline_best_intvty").status == "empty for system"


def test_html_table_is_escaped_and_complete() -> None:
    sys_rows = [dict(r, system="<A&>") for r in SYS]
    out = html_table(compare(sys_rows, BASE, targets=[250]))
    assert "&lt;A&amp;&gt;" in out and "<A&>" not in out
    assert out.count("<tr>") == 1 + 7
    assert "package-tdp 1200 W" in out and "2.00x higher" in out


def test_area_over_the_common_range() -> None:
    t = compare(SYS, BASE)
    a = t.line("area_tput_per_kw_common_range")
    # Common range 100-150: system line 40000->35000, baseline line 15000->10000 (width 50).
    assert a.system == pytest.approx((40000 + 35000) / 2 * 50)
    assert a.baseline == pytest.approx((15000 + 10000) / 2 * 50)
    assert a.ratio == pytest.approx(3.0)
    far = compare(SYS, [pt("B", 10, 1, 9.0), pt("B", 20, 0.5, 9.5)])
    assert far.line("area_tput_per_kw_common_range").status == "no common interactivity range"


def test_cost_lines_use_the_inferencex_formula() -> None:
    # System peak 28000 tok/s/acc at $3.60/h: 3.6 / (28000 x 3600 / 1e6) = $0.0357/M;
    # baseline peak 14000 tok/s/acc (pt() sets 0.7 x per-kW) at $2.52/h: $0.05/M.
    t = compare(SYS, BASE, usd_per_accelerator_hour=(3.60, 2.52))
    peak = t.line("usd_per_m_tokens_at_peak")
    assert peak.system == pytest.approx(3.60 / 100.8)  # 28000 x 3600 / 1e6 = 100.8 M/h
    assert peak.baseline == pytest.approx(2.52 / 50.4)  # 14000 x 3600 / 1e6 = 50.4 M/h
    assert peak.better == "lower" and peak.ratio == pytest.approx(0.05 / (3.6 / 100.8))
    iso = t.line("usd_per_m_tokens_at_baseline_best_intvty")  # at 150: 24500 vs 7000 tok/s
    assert iso.system == pytest.approx(3.60 / (24500 * 3600 / 1e6))
    assert iso.baseline == pytest.approx(2.52 / (7000 * 3600 / 1e6))
