"""A prediction that rests on a fitted factor no dev row informs says so: in `simulate`, the run
manifest, and `twin validate`'s rows and regimes (scoville.twin.coverage)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from scoville.commands.twin import app
from scoville.twin.calibration import CalPoint, Published, regimes
from scoville.twin.coverage import UNCALIBRATED, uncalibrated
from scoville.twin.target import parse_twin_url, twin_info

# SGLang's MLA decode over a 16-bit latent cache: fitted on CDNA4 (DeepSeek-R1 and GLM-5 dev
# rows), never on CDNA3, where no dev row runs it; an FP8 cache takes another path
MI300X_16 = "twin:MI300X/DeepSeek-R1?tp=8&framework=sglang"
MI300X_FP8 = MI300X_16 + "&kv=fp8"
MI355X_16 = "twin:MI355X/DeepSeek-R1?tp=8&framework=sglang"


def test_a_path_no_dev_row_runs_is_named_with_the_value_it_holds() -> None:
    lines = uncalibrated(parse_twin_url(MI300X_16))
    names = [line.split(" = ")[0] for line in lines]
    assert names == [
        "vendors.CDNA3.mla16_head_layer_s.sglang",
        "vendors.CDNA3.mla16_rate.sglang",
    ]
    assert lines[1].startswith("vendors.CDNA3.mla16_rate.sglang = 1: no dev row")
    assert uncalibrated(parse_twin_url(MI300X_FP8)) == ()
    assert uncalibrated(parse_twin_url(MI355X_16)) == ()  # CDNA4's path was fitted


def test_the_fits_own_rule_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    import scoville.twin.coverage as coverage

    # with every parameter informed nothing is named; with none, every one the row touches
    monkeypatch.setattr(
        coverage, "_informed", lambda: frozenset(p.name for p in coverage.FREE_PARAMS)
    )
    assert uncalibrated(parse_twin_url(MI300X_16)) == ()
    monkeypatch.setattr(coverage, "_informed", lambda: frozenset())
    names = {line.split(" = ")[0] for line in uncalibrated(parse_twin_url(MI300X_FP8))}
    assert "frameworks.sglang.step_overhead_s" not in names  # not a free parameter
    assert {"vendors.CDNA3.gemm_scale", "frameworks.sglang.layer_overhead_s"} <= names
    assert not any(".mla16_" in n for n in names)  # an FP8 cache does not run that path


def test_simulate_and_the_manifest_say_so() -> None:
    r = CliRunner().invoke(
        app,
        ["simulate", "--hardware", "MI300X", "--model", "DeepSeek-R1", "--framework", "sglang",
         "--tp", "8", "--isl", "256", "--osl", "16", "--concurrency", "1", "--no-bundle"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "uncalibrated vendors.CDNA3.mla16_rate.sglang = 1: no dev row" in text
    info = twin_info(parse_twin_url(MI300X_16))
    assert [x.split(" = ")[0] for x in info["uncalibrated"]][
        -1
    ] == "vendors.CDNA3.mla16_rate.sglang"
    assert twin_info(parse_twin_url(MI300X_FP8))["uncalibrated"] == []


def test_validate_gives_such_rows_a_regime_of_their_own() -> None:
    pub = Published(tput_per_gpu=1.0, tpot_ms=1.0)
    row = CalPoint(id="x", url=MI300X_16, isl_tokens=1024, osl_tokens=1024, concurrency=4,
                   published=pub, split="dev", source="s")  # fmt: skip
    assert UNCALIBRATED in regimes(row, parse_twin_url(row.url))
    fp8 = row.model_copy(update={"url": MI300X_FP8})
    assert UNCALIBRATED not in regimes(fp8, parse_twin_url(fp8.url))
