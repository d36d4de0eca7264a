"""The documented architecture is the real one: named modules exist, layers hold."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_modules_named_in_architecture_exist() -> None:
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    names = set(re.findall(r"`(scoville/[\w/]+(?:\.py)?/?)`", text))
    assert len(names) > 15
    for name in names:
        assert (ROOT / "src" / name).exists(), name


def test_import_layers() -> None:
    exe = shutil.which("lint-imports")
    assert exe, "import-linter is a test dependency"
    res = subprocess.run(
        [exe, str(ROOT / "pyproject.toml")], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0, res.stdout[-3000:]
