"""A prediction that rests on a fitted factor no dev row informs says so: in `simulate`, the run
manifest, and `twin validate`'s rows and regimes (scoville.twin.coverage)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from scoville.commands.twin import app
from scoville.twin.calibration import CalPoint, Published, regimes
from scoville.twin.coverage import UNCALIBRATED, uncalibrated
from scoville.twin.target import parse_twin_url, twin_info

# ATOM's expert-parallel MoE path: every ATOM dev row runs TP-sliced experts, so no dev row
# informs the EP path's cost, which holds its prior (the TP path's value when it was set)
ATOM_EP = "twin:MI355X/DeepSeek-R1?tp=8&ep=8&precision=fp4&kv=fp8&framework=atom"
ATOM_TP = "twin:MI355X/DeepSeek-R1?tp=8&precision=fp4&kv=fp8&framework=atom"
# SGLang's MLA decode over a 16-bit latent cache on CDNA3: informed since blind19's MI300X and
# MI325X rows moved to dev (one model's rows inform that path, `FreeParam.stack_models`)
MI300X_16 = "twin:MI300X/DeepSeek-R1?tp=8&framework=sglang"


def test_a_path_no_dev_row_runs_is_named_with_the_value_it_holds() -> None:
    from scoville.twin.profiles import load_profiles

    lines = uncalibrated(parse_twin_url(ATOM_EP))
    held = load_profiles().frameworks["atom"].ep_moe_layer_overhead_s
    assert held is not None
    assert lines == (
        f"frameworks.atom.ep_moe_layer_overhead_s = {held:g}: no dev row of the calibration "
        "table informs it, so this prediction rests on the book's prior for it",
    )
    assert uncalibrated(parse_twin_url(ATOM_TP)) == ()
    assert uncalibrated(parse_twin_url(MI300X_16)) == ()


def test_the_fits_own_rule_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    import scoville.twin.coverage as coverage

    # with every parameter informed nothing is named; with none, every one the row touches
    monkeypatch.setattr(
        coverage, "_informed", lambda: frozenset(p.name for p in coverage.FREE_PARAMS)
    )
    assert uncalibrated(parse_twin_url(ATOM_EP)) == ()
    monkeypatch.setattr(coverage, "_informed", lambda: frozenset())
    names = {line.split(" = ")[0] for line in uncalibrated(parse_twin_url(MI300X_16 + "&kv=fp8"))}
    assert "frameworks.sglang.step_overhead_s" not in names  # not a free parameter
    assert {"vendors.CDNA3.gemm_scale", "frameworks.sglang.layer_overhead_s"} <= names
    assert not any(".mla16_" in n for n in names)  # an FP8 cache does not run that path


def test_simulate_and_the_manifest_say_so() -> None:
    r = CliRunner().invoke(
        app,
        ["simulate", "--hardware", "MI355X", "--model", "DeepSeek-R1", "--framework", "atom",
         "--tp", "8", "--ep", "8", "--precision", "fp4", "--kv", "fp8", "--isl", "256",
         "--osl", "16", "--concurrency", "1", "--no-bundle"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "uncalibrated frameworks.atom.ep_moe_layer_overhead_s = " in text
    info = twin_info(parse_twin_url(ATOM_EP))
    assert [x.split(" = ")[0] for x in info["uncalibrated"]] == [
        "frameworks.atom.ep_moe_layer_overhead_s"
    ]
    assert twin_info(parse_twin_url(ATOM_TP))["uncalibrated"] == []


def test_validate_gives_such_rows_a_regime_of_their_own() -> None:
    pub = Published(tput_per_gpu=1.0, tpot_ms=1.0)
    row = CalPoint(id="x", url=ATOM_EP, isl_tokens=1024, osl_tokens=1024, concurrency=4,
                   published=pub, split="dev", source="s")  # fmt: skip
    assert UNCALIBRATED in regimes(row, parse_twin_url(row.url))
    tp = row.model_copy(update={"url": ATOM_TP})
    assert UNCALIBRATED not in regimes(tp, parse_twin_url(tp.url))
