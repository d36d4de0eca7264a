"""Three twin runs as a new user makes them: a baseline, an identical rerun and a slower one
(the twin's HBM efficiency lowered from 0.80 to 0.60, a memory-bound slowdown)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from scoville.pipeline import run_benchmark
from scoville.spec.load import load_spec

FAST = "twin:H200/gpt-oss-120b?tp=8"
SLOW = "twin:H200/gpt-oss-120b?tp=8&hbm_efficiency=0.6"


def twin_run(out: Path, target: str) -> Path:
    spec = load_spec(
        None,
        [
            f"target.url={target}",
            "shape.isl_tokens=1024",
            "shape.osl_tokens=256",
            "load.concurrency=1,4,16",
        ],
    )
    return run_benchmark(spec, out).run_dir


@pytest.fixture(scope="session")
def twin_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("runs")
    with pytest.MonkeyPatch.context() as mp:  # never into a store the developer configured
        mp.delenv("SCOVILLE_STORE", raising=False)
        mp.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
        return {
            "base": twin_run(out, FAST),
            "rerun": twin_run(out, FAST),
            "slow": twin_run(out, SLOW),
        }


@pytest.fixture
def run_on_twin() -> Callable[[Path, str], Path]:
    """`twin_run` for tests that run under their own environment."""
    return twin_run
