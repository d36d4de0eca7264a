"""`scoville run --target twin:...` through the foundation's pipeline (skipped on a build
without it): the bundle's numbers equal the fast path's for the same sweep."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from scoville.twin.frontier import frontier_rows
from scoville.twin.simulate import sweep
from scoville.twin.target import parse_twin_url


def test_run_with_a_twin_target_matches_simulate(tmp_path: Path) -> None:
    from scoville.spec.model import BenchmarkSpec

    pipeline = importlib.import_module("scoville.pipeline")  # absent on a build without it
    url = "twin:H200/Llama-3.1-8B"
    spec = BenchmarkSpec.model_validate(
        {
            "target": {"url": url, "tokenizer": "tiktoken:o200k_base"},
            "shape": {"isl_tokens": 256, "osl_tokens": 16},
            "load": {"concurrency": [2], "requests_per_point": 6, "warmup_requests": 0},
        }
    )
    rows = pipeline.run_benchmark(spec, tmp_path).summary["points"]
    (pred,) = frontier_rows(sweep(parse_twin_url(url), 256, 16, [2], 6, 0))
    assert rows[0]["n_ok"] == 6
    assert rows[0]["median_tpot"] == pytest.approx(pred.median_tpot_s, rel=1e-6)
