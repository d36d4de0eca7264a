"""Statistical stopping through the unchanged driver on the twin: a point stops once the
chosen statistics' 95 % margins are within the target, or runs to its cap."""

from __future__ import annotations

import asyncio

from scoville.client.driver import run_point
from scoville.client.plan import build_plans
from scoville.metrics.samples import MarginTracker, StopRule
from scoville.records.model import PointWindow
from scoville.records.sink import MemorySink
from scoville.spec.load import load_spec
from scoville.targets.registry import open_target

CAP = 400  # measured requests planned for the point


def drive(rule: StopRule | None) -> tuple[MemorySink, PointWindow]:
    spec = load_spec(
        None,
        [
            "target.url=twin:H200/gpt-oss-120b?tp=8",
            "shape.isl_tokens=1024",
            "shape.osl_tokens=64",
            "load.concurrency=4",
            f"load.requests_per_point={CAP}",
        ],
    )
    target = open_target(spec)
    (plan,) = build_plans(spec, None)
    sink = MemorySink()
    tracker = MarginTracker(rule) if rule is not None else None

    async def go() -> PointWindow:
        try:
            return await run_point(
                target.server,
                target.clock,
                plan,
                sink,
                on_record=tracker.observe if tracker else None,
                stop=tracker.reached if tracker else None,
            )
        finally:
            await target.close()

    with asyncio.Runner(loop_factory=target.loop_factory) as runner:
        return sink, runner.run(go())


def measured(sink: MemorySink) -> int:
    return sum(r.phase == "measure" for r in sink.records)


def test_a_loose_margin_stops_early_and_the_window_counts_only_what_was_sent() -> None:
    sink, window = drive(StopRule(target_margin=0.10, stats=("median_e2e",), cap=CAP))
    n = measured(sink)
    assert 6 <= n < CAP // 4  # a median needs 6 samples; the twin's E2E barely varies
    assert window.sent == n
    assert sum(r.phase == "warmup" for r in sink.records) == 8  # warmup runs in full


def test_an_unreachable_margin_runs_to_the_cap() -> None:
    # A p99.9 has no upper bound below 3,688 samples: the margin is never reached.
    sink, window = drive(StopRule(target_margin=0.01, stats=("p999_ttft",), cap=10_000))
    assert measured(sink) == CAP and window.sent == CAP


def test_without_a_rule_the_point_runs_its_plan() -> None:
    sink, _ = drive(None)
    assert measured(sink) == CAP
