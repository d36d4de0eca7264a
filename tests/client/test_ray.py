"""A point on a local Ray instance (2 tasks) vs the single-process client. Ray runs inside a
network namespace with only a loopback interface (created here with `ip netns`), so none of its
traffic can leave the machine; where namespaces cannot be made the test is skipped, saying why."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from netns import loopback_netns

pytest.importorskip("ray", reason="Ray is an optional extra (pip install 'scoville[ray]')")

from scoville.client.scale.ray_workers import rebase, shift_record
from scoville.client.scale.workers import WorkerResult

HERE = Path(__file__).parent


def test_rebase_shifts_only_other_hosts() -> None:
    from scoville.client.selftest.integrity import ClientSeries
    from scoville.records.model import PointWindow, RequestRecord

    rec = RequestRecord("a", "c1", "measure", 100, 200, chunk_ns=(150,), scheduled_ns=90)
    assert shift_record(rec, 1000).chunk_ns == (1150,)
    w = PointWindow("c1", 100, 200, "concurrency", 1, 1)
    here = WorkerResult("0", "me", w, ClientSeries(0.02), 5_000, None, (rec,))
    there = WorkerResult("1", "other", w, ClientSeries(0.02), 7_000, None, (rec,))
    a, b = rebase([here, there], "me", offset_ns=5_500)
    assert a.records[0].start_ns == 100  # same host: one monotonic clock, untouched
    assert b.records[0].start_ns == 1_600 and b.window.end_ns == 1_700  # +7000-5500
    assert b.records[0].scheduled_ns == 1_590


def test_local_ray_matches_single_process() -> None:
    ns = loopback_netns("scoville-ray")
    try:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        proc = subprocess.run(
            ["ip", "netns", "exec", ns, sys.executable, str(HERE / "ray_netns_check.py")],
            capture_output=True,
            text=True,
            timeout=240,
            env=env,
        )
    finally:
        subprocess.run(["ip", "netns", "delete", ns], capture_output=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["interfaces"] == ["lo"]
    assert all(p in ("127.0.0.1", "[::1]", "[::ffff:127.0.0.1]") for p in out["tcp_peers"])
    assert out["ray_n"] == out["one_n"] == 20 and out["ray_ok"] == 20
    assert out["ray_sent"] == out["one_sent"] == 16
    assert out["ray_workers"] == ["0", "1"]
    assert out["ray_itl_ms"] == pytest.approx(5.0, abs=1.0)
    assert out["one_itl_ms"] == pytest.approx(5.0, abs=1.0)
