"""The reference emitter in its own process, measured through the real client, and the rule by
which one quiet stream's stamps say this machine is too busy to judge the client's clocks."""

from __future__ import annotations

import asyncio

from scoville.client.selftest.calibrate import LevelResult, measure_level, reference_process

BUSY_STAMP_P99_MS = 2.0  # one stream at a frame every 10 ms stamped later than this at p99


def reference_level(streams: int, itl_s: float, tokens: int) -> LevelResult:
    """`streams` closed-loop lanes of `tokens` frames every `itl_s` against the emitter."""
    with reference_process(ttft_s=0.02, itl_s=itl_s) as url:
        return asyncio.run(
            measure_level(url, streams, tokens, requests_per_stream=2, ttft_s=0.02, itl_s=itl_s)
        )


def too_busy(quiet: LevelResult) -> bool:
    """Whether one quiet stream's true stamp error (against the emitter's write times) shows
    other processes delaying this one: then no figure here is the client's own."""
    return quiet.ts_err_p99_ms is None or quiet.ts_err_p99_ms > BUSY_STAMP_P99_MS
