"""Run inside a loopback-only network namespace (see test_ray_shutdown.py): a reference server,
then `scoville run --workers ray:2` against it; prints one JSON line with the run's exit code,
its records and the points' invalid reasons. Ray's temporary directory is RAY_TMPDIR."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def main(out: Path) -> None:
    port = 18000 + (int(time.time()) % 1000)
    server = subprocess.Popen(
        [sys.executable, "-m", "scoville.targets.reference_server", "--port", str(port),
         "--ttft-ms", "5", "--itl-ms", "2"]
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(url + "/v1/models", timeout=1).read()
                break
            except OSError:
                time.sleep(0.05)
        res = subprocess.run(
            [sys.executable, "-m", "scoville.cli", "run", "--target", url, "--concurrency", "2",
             "--isl", "16", "--osl", "8", "--set", "load.requests_per_point=8",
             "--workers", "ray:2", "--out", str(out)],
            capture_output=True, text=True, timeout=400,
        )  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=10)
    (run,) = [p for p in out.iterdir() if p.is_dir()]
    lines = (run / "records.jsonl").read_text().splitlines()
    n = sum('"type":"record"' in x for x in lines)
    points = json.loads((run / "summary.json").read_text())["points"]
    reasons = [r for p in points for r in p.get("invalid_reasons", [])]
    print(json.dumps({"rc": res.returncode, "records": n, "reasons": reasons,
                      "stderr": res.stderr[-2000:]}))  # fmt: skip


if __name__ == "__main__":
    main(Path(sys.argv[1]))
