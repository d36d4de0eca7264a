"""`scoville run --workers ray:2` leaves no Ray process behind: Ray's own shutdown leaves
DashboardAgent and RuntimeEnvAgent running, so scoville stops what its local instance started.
Ray runs in a loopback-only network namespace (as in test_ray.py) with its own temporary
directory, and every process that still holds a file in that directory after the run fails
the test.

The run's exit code is 0, or 3 (a point flagged) only when every reason is the client's own
load: Ray's daemons share the two cores with the client, and the tool rightly flags a client
loop that lagged. Any other reason (a failed request, a missing record) still fails."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from netns import loopback_netns

from scoville.commands._result import EXIT_INVALID

pytest.importorskip("ray", reason="Ray is an optional extra (pip install 'scoville[ray]')")

HERE = Path(__file__).parent


def _holding(directory: str) -> list[str]:
    """Processes with a file open under `directory` (pid and name)."""
    found = []
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        try:
            targets = [os.readlink(fd) for fd in fd_dir.iterdir()]
        except OSError:
            continue
        if any(t.startswith(directory) for t in targets):
            pid = fd_dir.parent.name
            name = (fd_dir.parent / "comm").read_text().strip() if fd_dir.parent.exists() else ""
            found.append(f"{pid} {name}")
    return found


def test_no_ray_process_outlives_the_run(tmp_path: Path) -> None:
    ns = loopback_netns("scoville-rayoff")
    ray_tmp = tempfile.mkdtemp(prefix="sr", dir="/tmp")  # short: Ray's socket paths are long
    try:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), RAY_TMPDIR=ray_tmp)
        proc = subprocess.run(
            ["ip", "netns", "exec", ns, sys.executable, str(HERE / "ray_shutdown_check.py"),
             str(tmp_path)],
            capture_output=True, text=True, timeout=480, env=env,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-3000:]
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        client_only = bool(out["reasons"]) and all(r.startswith("client:") for r in out["reasons"])
        assert out["rc"] == 0 or (out["rc"] == EXIT_INVALID and client_only), (
            out["reasons"],
            out["stderr"],
        )
        assert out["records"] == 8 + 4  # measured + warmup: Ray ran the point
        time.sleep(1.0)
        assert _holding(ray_tmp) == []
    finally:
        subprocess.run(["ip", "netns", "delete", ns], capture_output=True)
        leftover = _holding(ray_tmp)
        for entry in leftover:  # never leave them running, even when the test fails
            subprocess.run(["kill", "-9", entry.split()[0]], capture_output=True)
        shutil.rmtree(ray_tmp, ignore_errors=True)
