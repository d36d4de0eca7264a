"""`--power-profile` end to end through the real CLI: twin runs whose summary rows carry per-kW
figures named by boundary, a report with the power and economics sections, `compare
--boundary` on twin runs, and bad profiles refused with exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from clirun import scoville

ROOT = Path(__file__).resolve().parents[2]
PROFILE = ROOT / "examples" / "economics" / "power-profile.yaml"
TCO = ROOT / "examples" / "economics" / "tco.yaml"


def simulate(tmp_path: Path, hardware: str) -> Path:
    out = tmp_path / hardware
    res = scoville("simulate", "--hardware", hardware, "--model", "gpt-oss-120b", "--tp", "1",
                   "--isl", "1024", "--osl", "256", "--concurrency", "1,8,64",
                   "--power-profile", PROFILE, "--out", out)  # fmt: skip
    assert res.returncode == 0, res.stderr
    (run,) = out.iterdir()
    return run


def test_simulate_with_a_profile_reaches_summary_report_and_compare(tmp_path: Path) -> None:
    gb200, h200 = simulate(tmp_path, "GB200"), simulate(tmp_path, "H200")
    point = json.loads((gb200 / "summary.json").read_text())["points"][0]
    for boundary in ("package_tdp", "provisioned_all_in", "facility"):
        assert point[f"tput_per_kw_{boundary}"] > 0 and point[f"power_w_{boundary}"] > 0
    assert point["power_how_facility"].startswith("estimate: twin chip draw")
    assert "tput_per_kw_board_measured" not in point  # never for a twin
    spec = json.loads((gb200 / "spec.json").read_text())["spec"]
    assert spec["power_profile"]["accelerators"]["GB200"]["tdp_w"] == 1200  # frozen with it

    res = scoville("report", gb200, "--tco", TCO)
    assert res.returncode == 0, res.stderr
    page = (gb200 / "report.html").read_text()
    assert "<h2>Power at each boundary</h2>" in page and "facility W (estimate)" in page
    assert "<h2>Economics</h2>" in page and "per accelerator-hour" in page
    assert "$/M output" in page and "tokens per MW at facility power 1,736 W" in page

    cmp = scoville("compare", gb200, h200, "-b", "H200", "--boundary", "facility")
    assert cmp.returncode == 0, cmp.stderr
    assert "facility" in cmp.stdout and "(estimate)" in cmp.stdout
    refused = scoville("compare", gb200, h200, "-b", "H200", "--boundary", "measured_board")
    assert refused.returncode == 2 and "twin run" in refused.stderr
    assert "Traceback" not in refused.stderr


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d.pop("accelerators"), "accelerators: Field required"),
        (lambda d: d["accelerators"]["H200"].update(host_w=-5), "accelerators.H200.host_w"),
        (lambda d: d.update(pue=0.95), "pue: Input should be greater than or equal to 1"),
    ],
)
def test_a_bad_profile_is_one_paragraph_and_exit_2(
    tmp_path: Path, mutate: object, field: str
) -> None:
    doc = yaml.safe_load(PROFILE.read_text())
    mutate(doc)  # type: ignore[operator]
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(doc))
    res = scoville("spec", "--power-profile", bad)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert f"Power profile {bad}" in " ".join(res.stderr.split()) and field in res.stderr


def test_simulate_refuses_a_bad_profile_before_running(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("accelerators:\n  GB200: {tdp_w: 1200, pue: 0.5}\n")
    res = scoville("simulate", "--hardware", "GB200", "--power-profile", bad, "--no-bundle")
    assert res.returncode == 2 and "accelerators.GB200.pue" in res.stderr


def test_run_on_the_twin_target_takes_the_profile(tmp_path: Path) -> None:
    """`run --target twin:...` (the asyncio path, the twin's step log) fills the same
    columns and prints the per-kW table."""
    res = scoville("run", "--target", "twin:H200/gpt-oss-120b?tp=1", "--concurrency", "1,4",
                   "--requests-per-point", "8", "--isl", "256", "--osl", "32",
                   "--power-profile", PROFILE, "--out", tmp_path)  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "tok/s per kW at each power boundary" in res.stdout
    (run,) = tmp_path.iterdir()
    low, high = json.loads((run / "summary.json").read_text())["points"]
    assert 0 < low["twin_active_fraction"] < high["twin_active_fraction"] <= 1
    assert low["power_w_facility"] < high["power_w_facility"]  # a busier chip draws more
    assert low["power_w_package_tdp"] == high["power_w_package_tdp"] == 700
