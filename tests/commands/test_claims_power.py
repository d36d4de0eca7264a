"""`--power-profile` on `claims plan` and `claims verify` through the real CLI: plans freeze the
profile into every spec and twin run, and a per-kW claim is judged at the boundary it states
(re-expressed as `compare --boundary` does), refused where a run cannot be expressed there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from clirun import scoville

ROOT = Path(__file__).resolve().parents[2]
PROFILE = ROOT / "examples" / "economics" / "power-profile.yaml"


def claim_file(tmp_path: Path, boundary: str, watts: tuple[float, float]) -> Path:
    """GB200 vs H200 on gpt-oss-120b, 1k/256 at TP1: one peak-per-kW claim at `boundary`."""

    def side(system: str, w: float) -> dict[str, object]:
        return {"system": system, "model": "gpt-oss-120b", "isl_tokens": 1024,
                "osl_tokens": 256, "spec_decode": "none", "disagg": False, "parallelism": "tp1",
                "power": {"boundary": boundary, "w_per_accelerator": w}}  # fmt: skip

    doc = {
        "schema": "scoville.claims/1",
        "title": f"GB200 vs H200 per kW at {boundary} (test)",
        "sides": {"gb200": side("GB200", watts[0]), "h200": side("H200", watts[1])},
        "claims": [{"id": "kw", "metric": "peak_tput_per_kw", "system": "gb200",
                    "baseline": "h200", "unit": "tok/s/kW", "stated_ratio": 1.45}],
    }  # fmt: skip
    p = tmp_path / f"claim-{boundary}.yaml"
    p.write_text(yaml.safe_dump(doc))
    return p


def test_plan_freezes_the_profile_into_specs_and_twin_runs(tmp_path: Path) -> None:
    claim = claim_file(tmp_path, "facility", (1180, 860))
    out = tmp_path / "plan"
    res = scoville("claims", "plan", claim, "--out", out, "--concurrency", "1,4",
                   "--requests-per-point", "4", "--power-profile", PROFILE)  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "claim kw: per kW judged at the facility boundary" in res.stdout
    assert "gb200: power profile entry 'GB200'" in res.stdout
    plan = json.loads((out / "plan.json").read_text())
    assert plan["claims"][0]["boundary"] == "facility"
    for sid, tdp_w in (("gb200", 1200), ("h200", 700)):
        entry = plan["sides"][sid]
        spec = yaml.safe_load(Path(entry["spec"]).read_text())
        assert spec["power_profile"]["accelerators"]["GB200"]["tdp_w"] == 1200
        assert spec["accelerators"]["power_boundary"] == "facility"
        assert f"--power-profile {PROFILE}" in entry["commands"][1]
        (run,) = (out / sid / "twin").iterdir()
        point = json.loads((run / "summary.json").read_text())["points"][0]
        assert point["power_w_package_tdp"] == tdp_w
        assert point["power_how_facility"].startswith("estimate: twin chip draw")

    # The runs recorded facility power, so verify needs no profile to judge at facility.
    res = scoville("claims", "verify", claim, out, "--json")
    assert res.returncode == 0, res.stderr
    (v,) = json.loads(res.stdout)
    assert v["boundary"] == "facility" and v["evidence"] == "modelled"
    assert all(s["power"].startswith("facility ") and "(estimate)" in s["power"]
               for s in v["sides"])  # fmt: skip


def twin_run(tmp_path: Path, hardware: str, tput_per_gpu: float) -> Path:
    """A twin run of one point whose throughput and active fraction are set by hand, so the
    per-kW figures below can be worked out on paper."""
    out = tmp_path / hardware
    res = scoville("simulate", "--hardware", hardware, "--model", "gpt-oss-120b", "--tp", "1",
                   "--isl", "1024", "--osl", "256", "--concurrency", "8", "--out", out)  # fmt: skip
    assert res.returncode == 0, res.stderr
    (run,) = out.iterdir()
    doc = json.loads((run / "summary.json").read_text())
    (point,) = doc["points"]
    point.update(tput_per_gpu=tput_per_gpu, twin_active_fraction=0.5)
    (run / "summary.json").write_text(json.dumps(doc))
    return run


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("runs")
    return twin_run(tmp, "GB200", 2000.0), twin_run(tmp, "H200", 1000.0)


def verify(claim: Path, runs: tuple[Path, Path], *extra: str | Path) -> dict[str, object]:
    res = scoville("claims", "verify", claim, *runs, "--json", *extra)
    assert res.returncode == 0, res.stderr
    (v,) = json.loads(res.stdout)
    assert isinstance(v, dict)
    return v


def test_a_per_kw_claim_is_judged_at_the_boundary_it_states(
    tmp_path: Path, runs: tuple[Path, Path]
) -> None:
    # Package TDP: 2000 tok/s / 1.2 kW = 1666.7 vs 1000 / 0.7 = 1428.6 tok/s/kW -> 7/6 = 1.1667x.
    tdp = verify(claim_file(tmp_path, "package-tdp", (1200, 700)), runs, "--power-profile", PROFILE)
    assert tdp["boundary"] == "package-tdp"
    assert tdp["ratio"] == pytest.approx(7 / 6, rel=1e-9)
    assert tdp["outcome"] == "not reproduced"  # 1.167 vs the stated 1.45
    # Facility (twin estimate at active fraction 0.5, idle 20 % of TDP):
    # GB200: 240 + (1200 - 240) x 0.5 = 720 W chip, + 250 host + 60 net = 1030, x 1.15 = 1184.5 W
    # H200:  140 + (700 - 140) x 0.5 = 420 W chip, + 200 + 40 = 660, x 1.3 = 858 W
    # -> (2000 / 1.1845) / (1000 / 0.858) = 1688.5 / 1165.5 = 1.4487x.
    fac = verify(claim_file(tmp_path, "facility", (1184.5, 858)), runs, "--power-profile", PROFILE)
    assert fac["boundary"] == "facility"
    assert fac["ratio"] == pytest.approx(1.448712, rel=1e-6)
    assert fac["outcome"] == "reproduced" and "modelled" in str(fac["label"])
    sides = fac["sides"]
    assert isinstance(sides, list)
    assert [s["power"] for s in sides] == [
        "facility 1184.5 W (estimate)",
        "facility 858 W (estimate)",
    ]
    assert any("per kW at the claim's facility boundary" in r for r in fac["reasons"])  # type: ignore[attr-defined]


def test_a_boundary_the_runs_cannot_reach_is_refused_with_the_reason(
    tmp_path: Path, runs: tuple[Path, Path]
) -> None:
    board = verify(
        claim_file(tmp_path, "board-measured", (900, 600)), runs, "--power-profile", PROFILE
    )
    assert board["outcome"] == "not like-for-like" and board["ratio"] is None
    why = " ".join(board["reasons"])  # type: ignore[arg-type]
    assert "is a twin run: it has no measured power" in why and "board-measured" in why
    # No profile, and these runs recorded no facility power: no TDP stands in for it.
    fac = verify(claim_file(tmp_path, "facility", (1184.5, 858)), runs)
    assert fac["outcome"] == "unverifiable" and fac["ratio"] is None
    assert "cannot be expressed at the claim's facility boundary" in " ".join(fac["reasons"])  # type: ignore[arg-type]


def test_a_bad_profile_is_refused_naming_the_field(tmp_path: Path, runs: tuple[Path, Path]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("accelerators:\n  GB200: {tdp_w: 1200, pue: 0.9}\n")
    claim = claim_file(tmp_path, "facility", (1184.5, 858))
    res = scoville("claims", "verify", claim, *runs, "--power-profile", bad)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "accelerators.GB200.pue" in res.stderr
    res = scoville("claims", "plan", claim, "--out", tmp_path / "p", "--power-profile", bad)
    assert res.returncode == 2 and "accelerators.GB200.pue" in res.stderr
