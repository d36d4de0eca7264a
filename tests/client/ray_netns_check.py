"""Run inside a network namespace that has only a loopback interface (see test_ray.py): a
local Ray instance drives one point with 2 Ray tasks against the calibration emitter, the
single-process driver drives the same point, and the figures are printed as one JSON line.
Ray cannot reach or advertise any non-loopback address here, whatever it tries."""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import statistics
import subprocess
import sys
import time

from scoville.client.driver import PointPlan, run_point
from scoville.client.openai_sse import OpenAIStreamingServer
from scoville.client.scale.ray_workers import run_point_ray
from scoville.client.scale.workers import WorkerTarget
from scoville.client.seam import GenerateRequest, MonotonicClock
from scoville.client.selftest.calibrate import reference_process
from scoville.records.model import RequestRecord
from scoville.records.sink import MemorySink


def median_itl_ms(records: list[RequestRecord]) -> float:
    return statistics.median(
        (b - a) / 1e6
        for r in records
        if r.phase == "measure"
        for a, b in itertools.pairwise(r.chunk_ns)
    )


def main() -> None:
    import ray

    ifaces = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    reqs = [GenerateRequest(f"m{i}", "completions", 1, 20, prompt="hi") for i in range(16)]
    warm = [GenerateRequest(f"w{i}", "completions", 1, 20, prompt="hi") for i in range(4)]
    plan = PointPlan("c4", "concurrency", 4, warm, reqs, concurrency=4)
    with reference_process(ttft_s=0.010, itl_s=0.005) as url:
        t0 = time.monotonic()
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            _node_ip_address="127.0.0.1",
            log_to_driver=False,
            configure_logging=False,
        )
        init_s = time.monotonic() - t0
        records_r, window_r, results = run_point_ray(WorkerTarget(url, "reference"), plan, 2)
        ss = subprocess.run(["ss", "-tnH"], capture_output=True, text=True).stdout
        ray.shutdown()
        clock = MonotonicClock()
        server = OpenAIStreamingServer(url, "reference", clock)
        sink = MemorySink()
        window_1 = asyncio.run(run_point(server, clock, plan, sink))
        asyncio.run(server.close())
    peers = sorted({line.split()[-1].rsplit(":", 1)[0] for line in ss.splitlines() if line})
    print(
        json.dumps(
            {
                "interfaces": [x.split(":")[1].strip() for x in ifaces.splitlines()],
                "ray_init_s": init_s,
                "ray_n": len(records_r),
                "ray_ok": sum(r.ok for r in records_r),
                "ray_workers": sorted({r.worker for r in records_r}),
                "ray_hosts": sorted({r.host for r in results}),
                "host": socket.gethostname(),
                "ray_sent": window_r.sent,
                "ray_itl_ms": median_itl_ms(records_r),
                "one_n": len(sink.records),
                "one_sent": window_1.sent,
                "one_itl_ms": median_itl_ms(sink.records),
                "tcp_peers": peers,
            }
        )
    )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
