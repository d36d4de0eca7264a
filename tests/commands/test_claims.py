"""`scoville claims plan`, `claims verify` and multi-file `claims audit` through the real CLI,
with small twin runs (virtual time, a few seconds)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

from clirun import scoville

ROOT = Path(__file__).resolve().parents[2]
JALAPENO = ROOT / "examples" / "claims" / "jalapeno-2026-08.yaml"


def claim_file(tmp_path: Path) -> Path:
    def side(system: str, watts: int) -> dict[str, object]:
        return {"system": system, "model": "gpt-oss-120b", "isl_tokens": 256, "osl_tokens": 32,
                "spec_decode": "none", "disagg": False, "parallelism": "tp8",
                "power": {"boundary": "package-tdp", "w_per_accelerator": watts}}  # fmt: skip

    doc = {
        "schema": "scoville.claims/1",
        "title": "B200 vs H200 (test)",
        "sides": {"b200": side("B200", 1000), "h200": side("H200", 700)},
        "claims": [{"id": "peak", "metric": "peak_tput_per_accelerator", "system": "b200",
                    "baseline": "h200", "unit": "tok/s/acc", "stated_ratio": 2.0}],
    }  # fmt: skip
    p = tmp_path / "claim.yaml"
    p.write_text(yaml.safe_dump(doc))
    return p


def test_plan_then_verify_with_twin_runs(tmp_path: Path) -> None:
    claim = claim_file(tmp_path)
    out = tmp_path / "plan"
    res = scoville("claims", "plan", str(claim), "--out", str(out), "--concurrency", "1,4",
                   "--requests-per-point", "4")  # fmt: skip
    assert res.returncode == 0, res.stderr
    plan = json.loads((out / "plan.json").read_text())
    for sid in ("b200", "h200"):
        entry = plan["sides"][sid]
        assert Path(entry["spec"]).is_file() and Path(entry["twin"]["run"]).is_dir()
        assert entry["commands"][0].startswith("scoville run --spec")
        assert entry["twin"]["url"].endswith("?tp=8")
    res = scoville("claims", "verify", str(claim), str(out), "--json")
    assert res.returncode == 0, res.stderr
    (v,) = json.loads(res.stdout)
    assert v["evidence"] == "modelled" and v["ratio"] > 0
    assert v["outcome"] in ("reproduced", "not reproduced") and "modelled" in v["label"]


def test_verify_without_runs_is_unverifiable_and_audit_takes_a_directory(tmp_path: Path) -> None:
    claim = claim_file(tmp_path)
    res = scoville("claims", "verify", str(claim), str(tmp_path / "nothing"), "--json")
    assert res.returncode == 2 and "does not exist" in res.stderr
    d = tmp_path / "claims"
    d.mkdir()
    shutil.copy(JALAPENO, d / "a.yaml")
    shutil.copy(claim, d / "b.yaml")
    res = scoville("claims", "audit", str(d), str(JALAPENO), "--json")
    assert res.returncode == 0, res.stderr
    assert [r["title"][:8] for r in json.loads(res.stdout)] == ["OpenAI J", "B200 vs ", "OpenAI J"]
