"""Claim -> matrix -> verdict on hand-built runs: each outcome, the evidence cap, the plan."""

from __future__ import annotations

from typing import Any

import pytest

from scoville.analysis.claims import parse_claims, weaker
from scoville.analysis.claims_plan import plan_claims, tp_of
from scoville.analysis.claims_verify import verify_claim


def side(system: str, **kw: Any) -> dict[str, Any]:
    return {"system": system, "model": "m", "isl_tokens": 1024, "osl_tokens": 128,
            "power": {"boundary": "package-tdp", "w_per_accelerator": 1000}, **kw}  # fmt: skip


def doc(**claim: Any) -> dict[str, Any]:
    return {
        "schema": "scoville.claims/1",
        "title": "t",
        "sides": {"a": side("A", evidence="observed-on-site"), "b": side("B")},
        "claims": [{"id": "c", "metric": "peak_tput_per_accelerator", "system": "a",
                    "baseline": "b", "unit": "tok/s/acc", "stated_ratio": 2.0, **claim}],
    }  # fmt: skip


def rows(system: str, peak: float, isl: int = 1024, twin: bool = False) -> list[dict[str, Any]]:
    base = {"system": system, "model": "m", "isl": isl, "osl": 128, "valid": True,
            "framework": "scoville-twin" if twin else "vllm"}  # fmt: skip
    return [
        {**base, "point_id": "c1", "median_intvty": 100.0, "tput_per_gpu": peak / 4},
        {**base, "point_id": "c8", "median_intvty": 50.0, "tput_per_gpu": peak},
    ]


def test_outcomes() -> None:
    cf = parse_claims(doc())
    (c,) = cf.claims
    got = verify_claim(c, cf, {"a": rows("A", 2000), "b": rows("B", 1000)})
    assert got.outcome == "reproduced" and got.ratio == pytest.approx(2.0)
    assert got.evidence == "reproduced" and got.claim_evidence == "vendor-stated"
    far = verify_claim(c, cf, {"a": rows("A", 3000), "b": rows("B", 1000)})
    assert far.outcome == "not reproduced" and far.ratio == pytest.approx(3.0)
    assert verify_claim(c, cf, {"a": rows("A", 2000)}).outcome == "unverifiable"
    unlike = verify_claim(c, cf, {"a": rows("A", 2000, isl=8192), "b": rows("B", 1000)})
    assert unlike.outcome == "not like-for-like"
    assert "run of a: isl_tokens differs: 8192 vs 1024" in unlike.reasons
    allowed = verify_claim(
        c, cf, {"a": rows("A", 2000, isl=8192), "b": rows("B", 1000)}, allow_unlike=True
    )
    assert allowed.outcome == "reproduced" and allowed.reasons[-1].startswith("UNLIKE PAIR")


def test_twin_runs_cap_the_verdict_at_modelled() -> None:
    cf = parse_claims(doc())
    got = verify_claim(cf.claims[0], cf, {"a": rows("A", 2000, twin=True), "b": rows("B", 1000)})
    assert got.outcome == "reproduced" and got.evidence == "modelled"
    assert got.label() == "reproduced (modelled: twin runs, not a measurement)"


def test_plan_freezes_what_is_stated_and_lists_assumptions() -> None:
    d = doc()
    d["sides"]["a"]["spec_decode"], d["sides"]["b"]["spec_decode"] = "none", "mtp"
    sides, claims = plan_claims(parse_claims(d), (1, 4))
    spec = sides["a"].spec
    assert (spec.shape.isl_tokens, spec.shape.osl_tokens) == (1024, 128)
    assert spec.accelerators.power_w_per_accelerator == 1000 and spec.load.concurrency == (1, 4)
    assert "parallelism: not stated; TP=8 assumed" in sides["a"].assumed
    assert sides["b"].spec.serving.speculative_decoding == "mtp"
    (c,) = claims
    assert not c.like and "speculative decoding differs" in c.reasons[0]
    assert tp_of("TP4 EP4") == 4 and tp_of("8-way tensor parallel") == 8 and tp_of(None) is None
    assert weaker("reproduced", "observed-on-site") == "observed-on-site"


def test_a_run_that_is_not_qualified_is_not_like_for_like() -> None:
    cf = parse_claims(doc())
    (c,) = cf.claims
    bad = [{**r, "quality_status": "not qualified"} for r in rows("A", 2000)]
    good = [{**r, "quality_status": "qualified"} for r in rows("B", 1000)]
    got = verify_claim(c, cf, {"a": bad, "b": good})
    assert got.outcome == "not like-for-like"
    (why,) = [r for r in got.reasons if "quality" in r]  # said once, run against run
    assert why.startswith("runs: quality differs (not qualified vs qualified)")
    allowed = verify_claim(c, cf, {"a": bad, "b": good}, allow_unlike=True)
    assert allowed.outcome == "reproduced" and any("UNLIKE PAIR" in r for r in allowed.reasons)
