"""House style gates: ruff on src and tests, mypy --strict on src."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which(cmd[0])
    assert exe, f"{cmd[0]} is a test dependency"
    return subprocess.run([exe, *cmd[1:]], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff() -> None:
    res = _run("ruff", "check", "src", "tests", "benchmarks")
    assert res.returncode == 0, res.stdout[-4000:]


def test_mypy_strict() -> None:
    res = _run("mypy", "src")
    assert res.returncode == 0, res.stdout[-4000:]


def test_ruff_format() -> None:
    res = _run("ruff", "format", "--check", "src", "tests", "benchmarks")
    assert res.returncode == 0, res.stdout[-4000:]
