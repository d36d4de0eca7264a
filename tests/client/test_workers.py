"""Sharding rules (golden), and a point driven by 2 spawned worker processes against the
calibration emitter on loopback, compared with the single-process driver."""

from __future__ import annotations

import asyncio
import itertools
import statistics
from pathlib import Path

import pytest

import scoville.client.driver as driver
import scoville.client.scale.workers as workers
import scoville.client.selftest.calibrate as calibrate
from scoville.client.seam import GenerateRequest, MonotonicClock
from scoville.records.sink import MemorySink

PointPlan = driver.PointPlan


def reqs(n: int, prefix: str = "r", tokens: int = 10) -> list[GenerateRequest]:
    return [
        GenerateRequest(f"{prefix}{i}", "completions", 1, tokens, prompt="hi") for i in range(n)
    ]


def test_split_counts() -> None:
    assert workers.split_counts(10, 3) == [4, 3, 3]
    assert workers.split_counts(2, 4) == [1, 1, 0, 0]


def test_closed_loop_sharding_keeps_load_and_requests() -> None:
    plan = PointPlan("c10", "concurrency", 10, reqs(5, "w"), reqs(40), concurrency=10)
    shards = workers.shard_plan(plan, 3)
    assert [s.concurrency for s in shards] == [4, 3, 3]
    assert [len(s.measured) for s in shards] == [16, 12, 12]
    ids = sorted(r.request_id for s in shards for r in [*s.warmup, *s.measured])
    assert ids == sorted(r.request_id for r in [*plan.warmup, *plan.measured])
    # fewer lanes than workers: idle workers are not started
    assert len(workers.shard_plan(dataclass_replace(plan, concurrency=2), 4)) == 2


def dataclass_replace(plan: driver.PointPlan, **kw: object) -> driver.PointPlan:
    import dataclasses

    return dataclasses.replace(plan, **kw)  # type: ignore[arg-type]


def test_open_loop_sharding_keeps_the_schedule() -> None:
    arrivals = [k * 100 for k in range(7)]
    plan = PointPlan("r1", "rate", 1.0, reqs(2, "w"), reqs(5), concurrency=5, arrivals_ns=arrivals)
    shards = workers.shard_plan(plan, 2)
    assert [list(s.arrivals_ns or ()) for s in shards] == [[0, 200, 400, 600], [100, 300, 500]]
    assert [len(s.warmup) for s in shards] == [1, 1]
    assert [s.concurrency for s in shards] == [3, 2]
    merged = sorted(itertools.chain.from_iterable(s.arrivals_ns or () for s in shards))
    assert merged == arrivals


async def test_two_processes_match_one_process(tmp_path: Path) -> None:
    with calibrate.reference_process(ttft_s=0.010, itl_s=0.005) as url:
        plan = PointPlan("c4", "concurrency", 4, reqs(4, "w", 20), reqs(16, "m", 20), 4)
        target = workers.WorkerTarget(base_url=url, model="reference")
        records2, window2, results = await asyncio.to_thread(
            workers.run_point_processes, target, plan, 2, tmp_path
        )
        from scoville.client.openai_sse import OpenAIStreamingServer

        clock = MonotonicClock()
        server = OpenAIStreamingServer(url, "reference", clock)
        sink = MemorySink()
        window1 = await driver.run_point(server, clock, plan, sink)
        await server.close()
    records1 = sink.records
    assert len(records2) == len(records1) == 20
    assert all(r.ok for r in records2)
    assert {r.worker for r in records2} == {"0", "1"}
    assert window2.sent == window1.sent == 16
    assert window2.start_ns < window2.end_ns
    assert all(window2.start_ns <= r.start_ns for r in records2 if r.phase == "measure")

    def median_itl_ms(rs: list) -> float:  # type: ignore[type-arg]
        return statistics.median(
            (b - a) / 1e6
            for r in rs
            if r.phase == "measure"
            for a, b in itertools.pairwise(r.chunk_ns)
        )

    # both clients see the emitter's 5 ms inter-token interval
    assert median_itl_ms(records1) == pytest.approx(5.0, abs=1.0)
    assert median_itl_ms(records2) == pytest.approx(5.0, abs=1.0)
    assert len(results) == 2 and all(r.client.lag_ns for r in results)
