"""The claim audit on the shipped Jalapeño file (hand-computed ratios) and on bad claim files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from scoville.analysis.audit import audit, written_tolerance
from scoville.analysis.claims import load_claims, load_side_rows, parse_claims
from scoville.errors import DataError

ROOT = Path(__file__).resolve().parents[2]
JALAPENO = ROOT / "examples" / "claims" / "jalapeno-2026-08.yaml"

# Ratios worked out by hand (long division), system-is-better orientation.
EXPECTED = {
    "gptoss-peak-tput-kw": (1.90053, "reproduced"),  # 85448 / 44960
    "gptoss-e2e": (1.74757, "reproduced"),  # 1.80 / 1.03
    "gptoss-max-intvty": (2.72710, "unverifiable"),  # 1459 / 535, no ratio stated
    "gptoss-iso-intvty": (None, "unverifiable"),  # 53.7x stated, numbers not published
    "dsr1-peak-tput-kw": (1.66718, "reproduced"),  # 19641 / 11781
    "dsr1-e2e": (3.63030, "reproduced"),  # 5.99 / 1.65
    "dsr1-max-intvty": (4.14201, "reproduced"),  # 700 / 169
    "dsr1-iso-intvty": (104.23729, "reproduced"),  # 12300 / 118
    "kimi-peak-tput-kw": (1.53389, "reproduced"),  # 18195 / 11862
    "kimi-e2e": (3.40385, "reproduced"),  # 5.31 / 1.56
    "kimi-max-intvty": (3.81319, "reproduced"),  # 694 / 182
    "kimi-iso-intvty": (None, "unverifiable"),
}


def test_every_jalapeno_ratio_is_recomputed() -> None:
    report = audit(load_claims(JALAPENO))
    got = {a.claim_id: a for a in report.claims}
    assert set(got) == set(EXPECTED)
    for cid, (ratio, verdict) in EXPECTED.items():
        a = got[cid]
        assert a.verdict == verdict, cid
        if ratio is None:
            assert a.recomputed_ratio is None
        else:
            assert a.recomputed_ratio == pytest.approx(ratio, abs=1e-5), cid
    assert got["gptoss-peak-tput-kw"].basis == "arithmetic"


def test_jalapeno_conditions_and_boundary_shift() -> None:
    a = {x.claim_id: x for x in audit(load_claims(JALAPENO)).claims}["gptoss-peak-tput-kw"]
    conds = {c.field: c for c in a.conditions}
    assert conds["spec_decode"].system == "none" and conds["spec_decode"].status == "unstated"
    assert conds["power boundary"].status == "same"
    assert any("caveat" in f and "precision" in f for f in a.findings)
    shifts = {b.label: b for b in a.boundary}
    # 59813.6 vs 53952 tok/s per accelerator; 108752 vs 44960 tok/s/kW with 550 W measured.
    assert shifts["per accelerator (power denominator removed)"].ratio == pytest.approx(
        1.10865, abs=1e-5
    )
    measured = shifts["system at measured 550 W, baseline as stated"]
    assert measured.system_per_kw == pytest.approx(108752.0)
    assert measured.ratio == pytest.approx(2.41886, abs=1e-5) and not measured.like_for_like


def test_jalapeno_ranges() -> None:
    got = {r.range_id: r for r in audit(load_claims(JALAPENO)).ranges}
    assert got["peak-tput-kw-range"].verdict == "reproduced"
    assert got["e2e-range"].verdict == "reproduced"
    inter = got["interactive-range"]  # 2.1x low end vs 1459/535 = 2.73x
    assert inter.verdict == "inconsistent" and inter.low == pytest.approx(2.72710, abs=1e-5)
    assert got["iso-intvty-range"].verdict == "unverifiable"  # two members only as stated


def test_strict_mode_treats_unstated_conditions_as_not_comparable() -> None:
    report = audit(load_claims(JALAPENO), strict=True)
    assert {a.verdict for a in report.claims if a.recomputed_ratio} == {"not comparable"}


def test_written_tolerance() -> None:
    assert written_tolerance(1.9) == pytest.approx(0.05)
    assert written_tolerance(104) == 0.5
    assert written_tolerance(53.7) == pytest.approx(0.05)
    assert written_tolerance(2.0) == pytest.approx(0.05)
    assert written_tolerance(1.25) == pytest.approx(0.005)


def base_doc() -> dict[str, Any]:
    side = {
        "model": "M",
        "isl_tokens": 8192,
        "osl_tokens": 1024,
        "spec_decode": "none",
        "power": {"boundary": "package-tdp", "w_per_accelerator": 700},
    }
    return {
        "schema": "scoville.claims/1",
        "title": "t",
        "sides": {"a": {"system": "A", **side}, "b": {"system": "B", **side}},
        "claims": [
            {
                "id": "c",
                "metric": "peak_tput_per_kw",
                "system": "a",
                "baseline": "b",
                "system_value": 200,
                "baseline_value": 100,
                "unit": "tok/s/kW",
                "stated_ratio": 2.0,
            }
        ],
    }


def one(doc: dict[str, Any]) -> Any:
    return audit(parse_claims(doc)).claims[0]


def test_ratio_that_does_not_follow_is_inconsistent() -> None:
    doc = base_doc()
    assert one(doc).verdict == "reproduced"
    doc["claims"][0]["stated_ratio"] = 2.5
    a = one(doc)
    assert a.verdict == "inconsistent" and "does not follow" in a.findings[0]
    doc["claims"][0]["stated_ratio"] = 0.5
    assert "inverse" in one(doc).findings[0]


def test_contradictory_unit_is_inconsistent() -> None:
    doc = base_doc()
    doc["claims"][0]["unit"] = "s"
    a = one(doc)
    assert a.verdict == "inconsistent" and any("contradicts metric" in f for f in a.findings)


def test_missing_or_differing_condition_is_not_comparable() -> None:
    doc = base_doc()
    doc["sides"]["b"]["spec_decode"] = "mtp"
    a = one(doc)
    assert a.verdict == "not comparable" and any("spec_decode: differs" in f for f in a.findings)
    doc = base_doc()
    del doc["sides"]["b"]["power"]
    a = one(doc)
    assert a.verdict == "not comparable"
    assert {c.field for c in a.conditions if c.status == "missing"} == {
        "power boundary",
        "power denominator (W)",
    }


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d["claims"][0].update(colour="red"), "claims.0.colour"),
        (lambda d: d["claims"][0].pop("unit"), "claims.0.unit"),
        (lambda d: d["claims"][0].update(metric="speed"), "claims.0.metric"),
        (lambda d: d["sides"]["a"].update(isl_tokens=0), "sides.a.isl_tokens"),
        (lambda d: d["claims"][0].update(baseline="zz"), "'zz'"),
    ],
)
def test_malformed_file_names_the_field(mutate: Any, field: str) -> None:
    doc = base_doc()
    mutate(doc)
    with pytest.raises(DataError, match=field.replace(".", r"\.")):
        parse_claims(doc)


def summary(tmp: Path, name: str, system: str, points: list[dict[str, Any]]) -> str:
    d = tmp / name
    d.mkdir()
    doc = {
        "schema": "scoville.summary/1",
        "run_id": name,
        "spec_hash": "x",
        "labels": {"system": system, "model": "M"},
        "points": points,
    }
    (d / "summary.json").write_text(json.dumps(doc))
    return name


def test_runs_reproduce_or_contradict(tmp_path: Path) -> None:
    doc = base_doc()
    doc["sides"]["a"]["runs"] = [
        summary(
            tmp_path,
            "ra",
            "A",
            [
                {"point_id": "c1", "valid": True, "tput_per_gpu": 140.0},  # 140 / 0.7 kW = 200 /kW
                {"point_id": "c2", "valid": False, "tput_per_gpu": 1400.0},
            ],
        )
    ]
    doc["sides"]["b"]["runs"] = [
        summary(tmp_path, "rb", "B", [{"point_id": "c1", "valid": True, "tput_per_gpu": 70.0}])
    ]
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump(doc))
    cf = load_claims(path)
    rows = load_side_rows(cf, tmp_path)
    a = audit(cf, rows).claims[0]
    assert a.verdict == "reproduced" and a.basis == "runs"
    assert [r.measured for r in a.runs] == pytest.approx([200.0, 100.0])
    doc["claims"][0]["system_value"] = 300
    doc["claims"][0]["stated_ratio"] = 3
    b = audit(parse_claims(doc), rows).claims[0]
    assert b.verdict == "inconsistent"
    assert [r.status for r in b.runs] == ["contradicts", "agrees", "contradicts"]


def test_iso_claims_read_at_the_baseline_edge_are_flagged() -> None:
    got = {a.claim_id: a for a in audit(load_claims(JALAPENO)).claims}
    assert any(
        "baseline's own maximum (dsr1-max-intvty)" in f for f in got["dsr1-iso-intvty"].findings
    )
    assert not any("own maximum" in f for f in got["dsr1-peak-tput-kw"].findings)


def test_audit_html_is_escaped_and_complete() -> None:
    from scoville.analysis.verdicts import audit_html

    doc = base_doc()
    doc["claims"][0]["statement"] = "<b>2x</b> & more"
    out = audit_html(audit(parse_claims(doc)))
    assert "&lt;b&gt;2x&lt;/b&gt; &amp; more" in out and "<b>2x</b>" not in out
    full = audit_html(audit(load_claims(JALAPENO)))
    assert full.count('class="verdict-') == 12 and "104.2x" in full
    assert "Verdict rules" in full


def test_a_side_stated_not_qualified_is_not_comparable() -> None:
    doc = base_doc()
    doc["sides"]["a"]["quality_status"] = "not qualified"
    a = one(doc)
    assert a.verdict == "not comparable"
    assert any("quality_status: differs" in f and "not qualified" in f for f in a.findings)
