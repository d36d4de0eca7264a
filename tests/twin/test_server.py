"""The twin behind the Server seam, in a virtual-time event loop: same timings as the fast
path, exact virtual sleeps, URL parsing and its errors."""

from __future__ import annotations

import asyncio
import time

import pytest

from scoville.client.plan import length_requests
from scoville.client.seam import Clock, Exchange, Server
from scoville.errors import TargetError
from scoville.records.model import ErrorKind
from scoville.twin.clock import VirtualClock, VirtualTime, VirtualTimeLoop
from scoville.twin.fast import run_point
from scoville.twin.seq import TOKEN_TEXT
from scoville.twin.target import open_twin_target, parse_twin_url


def _run(vt: VirtualTime, coro_fn: object) -> object:
    with asyncio.Runner(loop_factory=lambda: VirtualTimeLoop(vt)) as runner:
        return runner.run(coro_fn())  # type: ignore[operator]


def test_virtual_loop_sleeps_take_no_wall_time_and_land_exactly() -> None:
    vt = VirtualTime()
    clock = VirtualClock(vt)
    seen: list[int] = []

    async def main() -> None:
        await clock.sleep_until_ns(3_600 * 10**9)  # an hour
        seen.append(clock.now_ns())
        await asyncio.sleep(0.5)  # plain asyncio sleeps are virtual too
        seen.append(clock.now_ns())
        await asyncio.wait_for(clock.sleep_until_ns(clock.now_ns() + 7), timeout=1)
        seen.append(clock.now_ns())

    t0 = time.perf_counter()
    _run(vt, main)
    assert time.perf_counter() - t0 < 1.0
    assert seen[0] == 3_600 * 10**9
    assert seen[1] - seen[0] == pytest.approx(5e8, abs=2)
    assert seen[2] == seen[1] + 7


def _closed_loop(target_url: str, n: int, conc: int, isl: int, osl: int) -> list[Exchange]:
    target = open_twin_target(target_url)
    assert isinstance(target.server, Server) and isinstance(target.clock, Clock)
    reqs = iter(length_requests(n, isl, osl))
    out: list[Exchange] = []
    streamed: list[int] = []

    async def lane() -> None:
        for req in reqs:
            # a chunk may carry several tokens (a disaggregated first token comes with the 2nd)
            out.append(
                await target.server.generate(
                    req, lambda t, s: streamed.extend([t] * (len(s) // len(TOKEN_TEXT)))
                )
            )

    async def main() -> None:
        await asyncio.gather(*(lane() for _ in range(conc)))
        await target.close()

    assert target.loop_factory is not None
    with asyncio.Runner(loop_factory=target.loop_factory) as runner:
        runner.run(main())
    assert len(streamed) == sum(len(e.chunk_ns) for e in out)
    assert sorted(streamed) == sorted(t for e in out for t in e.chunk_ns)
    return out


@pytest.mark.parametrize(
    "url",
    [
        "twin:H200/gpt-oss-120b?tp=1&precision=fp4",
        "twin:H200/gpt-oss-120b?replicas=2",
        "twin:B200/gpt-oss-120b?disagg=1P1D",
    ],
)
def test_server_seam_reproduces_the_fast_path_timings(url: str) -> None:
    ex = _closed_loop(url, 24, 8, 2048, 64)
    fast = run_point(parse_twin_url(url), length_requests(24, 2048, 64), "c8", concurrency=8)
    assert all(e.error is None and e.completion_tokens == 64 for e in ex)
    assert sorted(e.end_ns - e.start_ns for e in ex) == sorted(
        r.end_ns - r.start_ns for r in fast.records
    )
    assert max(e.end_ns for e in ex) == fast.window.end_ns


def test_server_reports_rejections_as_exchanges() -> None:
    (e,) = _closed_loop("twin:H200/Qwen3-30B-A3B", 1, 1, 40000, 2000)
    assert e.error == ErrorKind.CONTEXT_OVERFLOW and e.http_status == 400


def test_a_prompt_over_the_step_budget_is_refused_where_prompts_are_not_chunked() -> None:
    """TensorRT-LLM without chunked prefill refuses a prompt over max_num_tokens (a 400, "The
    sum of prompt length ... should not exceed max_num_tokens"): it never runs it alone."""
    trt = "twin:H100/Llama-3.1-8B?framework=trt&max_batched_tokens=2048"
    over = _closed_loop(trt, 2, 1, 3000, 8)
    assert all(e.error == ErrorKind.HTTP_4XX and e.http_status == 400 for e in over)
    assert all("max_num_tokens" in (e.error_detail or "") for e in over)
    # within the budget it runs, and a chunking engine takes the long prompt in pieces
    assert all(e.error is None for e in _closed_loop(trt, 2, 1, 2000, 8))
    vllm = "twin:H100/Llama-3.1-8B?framework=vllm&max_batched_tokens=2048"
    assert all(e.error is None for e in _closed_loop(vllm, 2, 1, 3000, 8))
    # under attention DP the budget is each rank's: a prompt lands on one rank
    dep = "twin:B200/Qwen3-30B-A3B?tp=2&ep=2&dp_attention=1&framework=trt&max_batched_tokens=2048"
    (e,) = _closed_loop(dep, 1, 1, 3000, 8)
    assert e.error == ErrorKind.HTTP_4XX


def test_target_carries_labels_and_sources() -> None:
    t = open_twin_target("twin:GB200/gpt-oss-120b?tp=2&disagg=1P1D")
    assert t.kind == "twin" and t.tokenizer is not None
    assert t.info["twin"]["n_accelerators"] == 4
    assert "nvidia.com" in t.info["twin"]["hardware_source"]
    assert t.info["labels"]["disagg"] == "1P1D"
    assert t.info["labels"]["precision"] == "MXFP4"
    assert t.info["label_defaults"]["framework"] == "scoville-twin"


@pytest.mark.parametrize(
    ("url", "needle"),
    [
        ("http://x", "Cannot read twin URL"),
        ("twin:H900/gpt-oss-120b", "Unknown hardware 'H900'. Known: "),
        ("twin:H200/gpt-9", "Unknown model 'gpt-9'"),
        ("twin:H200/gpt-oss-120b?tpp=2", "Unknown twin option(s) tpp"),
        ("twin:H200/gpt-oss-120b?tp=zero", "tp='zero' must be a positive integer"),
        ("twin:H200/gpt-oss-120b?precision=fp2", "must be one of native, bf16"),
        ("twin:H200/gpt-oss-120b?tp=4&ep=2", "ep=2 must be 1 or equal to tp=4"),
        ("twin:H200/gpt-oss-120b?disagg=P1", "disagg='P1' must look like 1P1D"),
        ("twin:H200/DeepSeek-R1?tp=1", "raise tp"),
    ],
)
def test_bad_urls_say_what_to_do(url: str, needle: str) -> None:
    with pytest.raises(TargetError) as e:
        open_twin_target(url)
    assert needle in str(e.value)


def test_server_point_extras_match_the_fast_path_for_the_same_window() -> None:
    from scoville.records.model import PointWindow
    from scoville.twin.server import twin_point_extras

    url = "twin:H200/gpt-oss-120b"
    target = open_twin_target(url)
    ex = []
    reqs = iter(length_requests(16, 4096, 32))

    async def lane() -> None:
        for req in reqs:
            ex.append(await target.server.generate(req))

    async def main() -> None:
        await asyncio.gather(*(lane() for _ in range(8)))

    assert target.loop_factory is not None
    with asyncio.Runner(loop_factory=target.loop_factory) as runner:
        runner.run(main())
    w = PointWindow("c8", 0, max(e.end_ns for e in ex), "concurrency", 8.0, 16)
    got = twin_point_extras(target.server, [w])["c8"]
    fast = run_point(parse_twin_url(url), length_requests(16, 4096, 32), "c8", concurrency=8).extras
    for k in ("bottleneck", "busy_share_memory", "kv_occupancy_mean", "kv_occupancy_max"):
        assert got[k] == pytest.approx(fast[k])
    assert twin_point_extras(object(), [w]) == {}


@pytest.mark.parametrize(
    ("concurrency", "arrivals_ns"),
    [(4, None), (None, [i * 20_000_000 for i in range(12)]), (3, [0] * 12)],
)
def test_fast_and_driver_executors_write_the_same_records(
    concurrency: int | None, arrivals_ns: list[int] | None
) -> None:
    """One plan through both executors: the same records (fields, order of sends) and the
    same window, in closed loop, open loop, and open loop behind an in-flight cap."""
    from scoville.client.driver import PointPlan
    from scoville.records.sink import MemorySink

    reqs = length_requests(12, 1024, 16, tag="p-")
    mode = "concurrency" if arrivals_ns is None else "rate"
    plan = PointPlan("p", mode, 4.0, reqs[:2], reqs[2:], concurrency, arrivals_ns)
    url = "twin:H200/Llama-3.1-8B"
    sinks = {}
    for executor in ("driver", "fast"):
        target = open_twin_target(f"{url}?executor={executor}")
        sink = MemorySink()

        async def main(t: object = target, s: MemorySink = sink) -> None:
            await t.point_executor().run_point(plan, s)  # type: ignore[attr-defined]

        assert target.loop_factory is not None
        with asyncio.Runner(loop_factory=target.loop_factory) as runner:
            runner.run(main())
        sinks[executor] = sink
    driver, fast = sinks["driver"], sinks["fast"]

    def key(s: MemorySink) -> list[tuple[object, ...]]:
        t0 = s.windows[0].start_ns  # each executor's own timeline origin
        return sorted(
            (r.request_id, r.phase, r.start_ns - t0, r.end_ns - t0, r.output_tokens, r.chunk_tokens)
            for r in s.records
        )

    assert len(fast.records) == 12 and key(fast) == key(driver)
    (wd,), (wf,) = driver.windows, fast.windows
    assert (wf.sent, wf.end_ns - wf.start_ns) == (10, wd.end_ns - wd.start_ns)
    if arrivals_ns == [0] * 12:  # all arrive at once; the cap keeps 3 in flight
        recs = fast.records
        in_flight = [sum(o.start_ns <= r.start_ns < o.end_ns for o in recs) for r in recs]
        assert max(in_flight) == 3 and sum(r.start_ns == recs[0].start_ns for r in recs) == 3
