"""A short soak as a user runs it: three HTTP twin replica processes behind scoville's router,
one killed and restarted, one slowed; the recovery, the slowed replica and the accounting."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# Three closed-loop streams a replica (not two): with replica 2 slowed 3x, most streams wait on
# it, and with two a replica the killed one sometimes held no stream at the kill
SPEC = """
replicas: 3
duration_s: 40
streams_per_replica: 3
isl_tokens: 16
twin_speedup: 0.25
osl_tokens: 16
rules: {window_s: 2, warmup_s: 2, baseline_s: 6}
faults:
  - {kind: kill, at_s: 10, replica: 1, restart_after_s: 3}
  - {kind: slow, at_s: 4, replica: 2, factor: 3}
"""


def _scoville(*args: str, timeout_s: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scoville.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )


@pytest.fixture(scope="module")
def soak_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("soak")
    (tmp / "soak.yaml").write_text(SPEC, encoding="utf-8")
    res = _scoville("soak", "--spec", str(tmp / "soak.yaml"), "--out", str(tmp / "runs"))
    assert res.returncode == 0, res.stdout + res.stderr
    (run,) = (tmp / "runs").iterdir()
    return run


def test_the_kill_is_recovered_from_and_timed(soak_dir: Path) -> None:
    s = json.loads((soak_dir / "soak.json").read_text())
    kill = s["faults"][0]
    assert kill["kind"] == "kill" and kill["started_s"] == pytest.approx(10, abs=0.5)
    # The streams cut by the kill put at least one window over the 1 % error budget; the
    # replica is back 3 s later plus its start (seconds to tens on a loaded machine).
    assert kill["out_of_band_windows"] >= 1
    assert kill["recovery_s"] is not None and 0 < kill["recovery_s"] <= 28
    assert kill["cleared_s"] > kill["started_s"] + 3
    events = [(e["fault"], e["action"]) for e in s["events"]]
    assert (0, "start") in events and (0, "restart") in events and (0, "ready") in events
    # The slowed replica never clears: it is never recovered from (it has a baseline).
    assert s["faults"][1]["baseline"]["n_windows"] == 1 and s["faults"][1]["recovery_s"] is None


def test_the_slowed_replica_is_named(soak_dir: Path) -> None:
    s = json.loads((soak_dir / "soak.json").read_text())
    assert s["degraded"] == [2]
    slow = s["replicas"][2]
    assert slow["effect_a"] > 0.9 and slow["median_ms"] > 2 * s["replicas"][0]["median_ms"]


def test_every_request_is_accounted_for(soak_dir: Path) -> None:
    s = json.loads((soak_dir / "soak.json").read_text())
    a = s["accounting"]
    assert a["adds_up"] and a["sent"] == a["ok"] + a["failed"] + a["cancelled"]
    # The kill reached the traffic on replica 1: a stream it cut mid-answer fails, and a request
    # whose connection the dead replica refused is retried by the router on another one. Which
    # of the two happens depends on where the closed-loop streams stood at that instant (a CI
    # run saw only the retry: failed 0, router_retried 1); without the kill both are 0.
    assert a["failed"] + a["router_retried"] >= 1
    lines = (soak_dir / "records.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]  # every line is valid JSON
    records = [r for r in rows if r["type"] == "record"]
    assert len(records) == a["sent"] and len(lines) == a["sent"] + 1  # + the soak's window
    served = [json.loads(x) for x in (soak_dir / "replicas.jsonl").read_text().splitlines()]
    by_id = {r["request_id"]: r["replica"] for r in served}
    assert all(by_id.get(r["request_id"], -1) in (0, 1, 2) for r in records if not r["error"])


def test_the_page_shows_the_timeline_and_the_health_table(soak_dir: Path) -> None:
    page = (soak_dir / "soak.html").read_text()
    assert page.count("<svg") == 2 and "stroke-dasharray" in page  # fault markers
    assert "DEGRADED" in page and "<script" not in page


def test_a_fault_on_a_replica_the_fleet_lacks_is_exit_2(tmp_path: Path) -> None:
    res = _scoville(
        "soak",
        "--set",
        "replicas=2",
        "--set",
        "faults=[{kind: kill, at_s: 1, replica: 2}]",
        "--out",
        str(tmp_path),
        timeout_s=60,
    )
    assert res.returncode == 2, res.stdout + res.stderr
    assert "faults" in res.stderr and "Traceback" not in res.stderr
