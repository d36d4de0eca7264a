"""`scoville cost`, `cost silicon` and compare's like-for-like refusals, through the real CLI
(a subprocess, so exit codes and stderr are what a user sees)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from clirun import scoville

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "analysis" / "data"
TCO = ROOT / "examples" / "economics" / "tco.yaml"


def summary(tmp_path: Path, system: str, isl: int) -> Path:
    d = tmp_path / f"{system}-{isl}"
    d.mkdir()
    points = [
        {"point_id": f"c{c}", "valid": True, "median_intvty": x, "tput_per_gpu": y,
         "output_tput_per_gpu": y / 2, "input_tput_per_gpu": y / 2, "median_e2e": 100 / x,
         "power_w_per_accelerator": 700, "power_boundary": "package-tdp"}
        for c, x, y in ((1, 120, 500), (8, 60, 2000), (32, 15, 4000))
    ]  # fmt: skip
    labels = {"system": system, "model": "m", "isl": isl, "osl": 128, "framework": "scoville-twin"}
    doc = {"schema": "scoville.summary/1", "run_id": d.name, "labels": labels, "points": points}
    (d / "summary.json").write_text(json.dumps(doc))
    return d


def test_cost_runs_json_reads_tiers_off_the_frontier(tmp_path: Path) -> None:
    run = summary(tmp_path, "H200", 1024)
    res = scoville("cost", str(run), "--tco", str(TCO), "--json")
    assert res.returncode == 0, res.stderr
    own, rental = json.loads(res.stdout)
    assert own["basis"] == "TCO" and rental["basis"] == "neocloud"
    at50 = rental["tiers"][1]
    # 50 tok/s/user lies between the 15 and 60 points: interpolated, never extrapolated.
    assert at50["tier_tok_s_user"] == 50 and at50["status"] == "interpolated"
    at100 = rental["tiers"][2]  # between 60 and 120
    assert at100["status"] == "interpolated" and 500 < at100["tput_per_acc"] < 2000


def test_bad_tco_file_exits_2_naming_the_field(tmp_path: Path) -> None:
    doc = yaml.safe_load(TCO.read_text())
    doc["systems"]["H200"]["pue"] = 0.8
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(doc))
    res = scoville("cost", str(summary(tmp_path, "H200", 1024)), "--tco", str(bad))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "systems.H200.pue" in res.stderr


def test_cost_silicon_prints_the_chain_and_tornado() -> None:
    res = scoville("cost", "silicon", "--chip", "H200", "--json")
    assert res.returncode == 0, res.stderr
    (doc,) = json.loads(res.stdout)
    assert doc["gross_dies_per_wafer"] == 60 and len(doc["tornado"]) == 3
    bad = scoville("cost", "silicon", "--chip", "H200", "--set", "packaging_yield=1.5")
    assert bad.returncode == 2 and "packaging_yield" in bad.stderr


def test_compare_refuses_unlike_and_one_system(tmp_path: Path) -> None:
    a, b = summary(tmp_path, "H200", 1024), summary(tmp_path, "GB200", 8192)
    res = scoville("compare", str(a), str(b), "-b", "GB200")
    assert res.returncode == 0 and "isl_tokens differs: 1024 vs 8192" in res.stdout
    assert "not like for like" in res.stdout
    one = scoville("compare", str(a), "-b", "H200")
    assert one.returncode == 2 and "at least two configurations" in one.stderr
    twin = scoville("compare", str(a), str(b), "-b", "GB200", "--boundary", "board-measured")
    assert twin.returncode == 2 and "twin run" in twin.stderr
