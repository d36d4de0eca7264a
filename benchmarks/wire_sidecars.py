"""Do the other things in the measuring process delay its stamps? The client's TTFT and ITL
against a loopback capture at 64 streams, alone and with what `scoville run` keeps beside the
measuring loop: the rich progress display (the run's own, redrawn to a terminal, in this
process or drawn by its child process as `scoville run` does on a terminal) fed once per
completed request, and the power sampler's thread (10 Hz, reading a RAPL-shaped powercap
tree made in a temporary directory, as on a machine with RAPL).

Conditions alternate (`--rounds` times each) so machine load hits them alike. Prints, per
run: the median and p99 of the per-request difference client TTFT - wire TTFT, and the
median and p99 of |client ITL - wire ITL| per frame gap, in ms. Needs tcpdump and root.

    python benchmarks/wire_sidecars.py [--streams 64] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import statistics
import tempfile
from contextlib import AbstractContextManager
from functools import partial
from pathlib import Path
from typing import Any

from rich.console import Console
from wire_ttft import TOKENS, captured

from scoville.client.driver import PointPlan, run_point
from scoville.client.openai_sse import OpenAIStreamingServer
from scoville.client.ports import free_port
from scoville.client.seam import MonotonicClock, real_loop_factory
from scoville.client.wirecheck import WireTimes
from scoville.commands._progress import ProgressProcess, RunProgress
from scoville.records.model import RequestRecord
from scoville.records.sink import MemorySink
from scoville.spec.model import BenchmarkSpec
from scoville.targets.reference_server import tagged_requests
from scoville.telemetry.rapl import RaplSource
from scoville.telemetry.sampler import PowerSampler


def fake_powercap(root: Path) -> Path:
    """Two package zones and a DRAM zone laid out as /sys/class/powercap lays them out."""
    for i, name in enumerate(["package-0", "package-1"]):
        z = root / f"intel-rapl:{i}"
        (z / f"intel-rapl:{i}:0").mkdir(parents=True)
        (z / "name").write_text(name + "\n")
        (z / "energy_uj").write_text("123456789\n")
        (z / "max_energy_range_uj").write_text("262143328850\n")
        (z / f"intel-rapl:{i}:0" / "name").write_text("dram\n")
        (z / f"intel-rapl:{i}:0" / "energy_uj").write_text("2345678\n")
    return root


MODES = ("alone", "display here", "display in child")


def _display(mode: str, spec: BenchmarkSpec) -> AbstractContextManager[Any]:
    """Nothing, the run's display in this process, or drawn by its child process; both
    redraw a terminal (to /dev/null)."""
    if mode == "alone":
        return contextlib.nullcontext(None)
    if mode == "display here":
        tty = Console(file=open(os.devnull, "w"), force_terminal=True, width=100)  # noqa: SIM115
        return RunProgress(tty, spec)
    return ProgressProcess(spec, os.devnull, force_terminal=True, width=100)


def drive(url: str, streams: int, mode: str, work: Path) -> list[RequestRecord]:
    clock = MonotonicClock()
    server = OpenAIStreamingServer(url, "reference", clock)
    sink = MemorySink()
    plan = PointPlan(
        f"c{streams}",
        "concurrency",
        streams,
        [],
        tagged_requests(4 * streams, "w", TOKENS),
        streams,
    )
    spec = BenchmarkSpec.model_validate({"load": {"concurrency": [1, 2, 4, 8, streams]}})
    sampler = PowerSampler([RaplSource(fake_powercap(work / f"rapl-{free_port()}"))], 10.0)

    async def go() -> None:
        done = 0
        with _display(mode, spec) as progress:
            if progress is not None:  # a late point of a sweep: earlier points' bars drawn too
                for c in (1, 2, 4, 8):
                    n = spec.requests_for(c) + spec.warmup_for(c)
                    progress.point(f"c{c}", n, n, n * TOKENS)
                sampler.start()
                await asyncio.sleep(2.0)  # a child display has started and drawn

            def tick(_r: RequestRecord) -> None:
                nonlocal done
                done += 1
                if progress is not None:
                    progress.point(plan.point_id, done, len(plan.measured), done * TOKENS)

            try:
                await run_point(server, clock, plan, sink, on_record=tick)
            finally:
                await server.close()
                if progress is not None:
                    sampler.stop()

    with asyncio.Runner(loop_factory=real_loop_factory()) as runner:
        runner.run(go())
    return list(sink.records)


def errors_ms(records: list[RequestRecord], wire: WireTimes) -> tuple[list[float], list[float]]:
    """Per request: client TTFT - wire TTFT; per frame gap: |client ITL - wire ITL| (ms)."""
    ttft, itl = [], []
    for r in records:
        if not r.ok or r.request_id not in wire.ttft_ns:
            continue
        ttft.append((r.chunk_ns[0] - r.start_ns - wire.ttft_ns[r.request_id]) / 1e6)
        gaps = [b - a for a, b in itertools.pairwise(r.chunk_ns)]
        itl += [abs(c - w) / 1e6 for c, w in zip(gaps, wire.itl_ns[r.request_id], strict=False)]
    return ttft, itl


def _q(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100)[q - 1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--streams", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ttft-ms", type=float, default=40.0)
    ap.add_argument("--itl-ms", type=float, default=8.0)
    ap.add_argument("--server-processes", type=int, default=2)
    a = ap.parse_args()
    load = os.getloadavg()[0]
    head = f"{'condition':>22} {'ttft_err_p50':>12} {'ttft_err_p99':>12} {'itl_err_p50':>11}"
    print(f"{head} {'itl_err_p99':>11} {'reqs':>5}  (ms; load average {load:.2f})")
    with tempfile.TemporaryDirectory() as tmp:
        for _round, mode in itertools.product(range(a.rounds), MODES):
            records, wire, _truth, dropped = captured(
                free_port(),
                a,
                Path(tmp),
                partial(drive, streams=a.streams, mode=mode, work=Path(tmp)),
            )
            ttft, itl = errors_ms(records, wire)
            name = mode if mode == "alone" else f"{mode}+sampler"
            print(
                f"{name:>22} {statistics.median(ttft):12.3f} {_q(ttft, 99):12.3f} "
                f"{statistics.median(itl):11.3f} {_q(itl, 99):11.3f} {len(ttft):>5}"
                + (f"  dropped {dropped}" if dropped else ""),
                flush=True,
            )


if __name__ == "__main__":
    main()
