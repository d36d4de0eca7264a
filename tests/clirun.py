"""The command line as a user runs it: `python -m scoville.cli ARGS` in a child process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def scoville(*args: str | Path, timeout_s: float = 300) -> subprocess.CompletedProcess[str]:
    """Run scoville with output captured, 200 columns wide so rich keeps table cells whole."""
    return subprocess.run(
        [sys.executable, "-m", "scoville.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
        env={**os.environ, "COLUMNS": "200"},
    )
