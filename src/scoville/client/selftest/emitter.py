"""A cheap SSE emitter for calibration: one ticker writes pre-encoded frames to every stream.

`scoville.targets.reference_server` formats and schedules each frame per stream (a timer and a
json.dumps per frame), which costs about what the client spends receiving it: on a 2-core
machine it caps before the client does. This emitter writes the same OpenAI completion frames
from a single ticker at a global period, so the client saturates first. It records, per
request, the intended and the actual write time of every frame (GET /_truth).
Run alone: `python -m scoville.client.selftest.emitter --port 8124 --itl-ms 10 --ttft-ms 20`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

FRAME = b'data: {"object":"text_completion","choices":[{"index":0,"text":" tok","finish_reason":null}]}\n\n'  # noqa: E501


def _final(n_tokens: int) -> bytes:
    usage = {"prompt_tokens": 1, "completion_tokens": n_tokens, "total_tokens": n_tokens + 1}
    obj = {
        "object": "text_completion",
        "choices": [{"index": 0, "text": "", "finish_reason": "length"}],
        "usage": usage,
    }
    return b"data: " + json.dumps(obj).encode() + b"\n\ndata: [DONE]\n\n"


@dataclass(slots=True)
class _Stream:
    resp: web.StreamResponse
    first_ns: int  # frames start at the first tick at or after this time
    remaining: int
    n_tokens: int
    done: asyncio.Future[None]
    intended_ns: list[int] = field(default_factory=list)
    emit_ns: list[int] = field(default_factory=list)


@dataclass(slots=True)
class _State:
    ttft_ns: int
    itl_ns: int
    streams: list[_Stream] = field(default_factory=list)
    truth: dict[str, dict[str, Any]] = field(default_factory=dict)


STATE = web.AppKey("state", _State)


async def _tick_once(st: _State, tick_ns: int) -> None:
    live: list[_Stream] = []
    for s in st.streams:
        if s.first_ns > tick_ns:
            live.append(s)
            continue
        s.intended_ns.append(tick_ns)
        s.emit_ns.append(time.monotonic_ns())
        try:
            await s.resp.write(FRAME)
            s.remaining -= 1
            if s.remaining == 0:
                await s.resp.write(_final(s.n_tokens))
        except ConnectionError:
            s.remaining = 0
        if s.remaining > 0:
            live.append(s)
        elif not s.done.done():
            s.done.set_result(None)
    st.streams = live


async def _ticker(app: web.Application) -> AsyncIterator[None]:
    st = app[STATE]

    async def run() -> None:
        t0 = time.monotonic_ns()
        k = 0
        while True:
            k = max(k + 1, (time.monotonic_ns() - t0) // st.itl_ns)
            tick_ns = t0 + k * st.itl_ns
            await asyncio.sleep(max(0.0, (tick_ns - time.monotonic_ns()) / 1e9))
            if st.streams:
                await _tick_once(st, tick_ns)

    task = asyncio.create_task(run())
    yield
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def _completions(request: web.Request) -> web.StreamResponse:
    arrived_ns = time.monotonic_ns()
    st = request.app[STATE]
    body = await request.json()
    n = max(1, int(body.get("max_tokens") or 16))
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await resp.prepare(request)
    s = _Stream(resp, arrived_ns + st.ttft_ns, n, n, asyncio.get_running_loop().create_future())
    st.streams.append(s)
    await s.done
    user = body.get("user")
    if user:
        st.truth[str(user)] = {
            "arrived_ns": arrived_ns,
            "intended_ns": s.intended_ns,
            "emit_ns": s.emit_ns,
        }
    return resp


async def _models(request: web.Request) -> web.Response:
    return web.json_response({"object": "list", "data": [{"id": "reference"}]})


async def _truth(request: web.Request) -> web.Response:
    return web.json_response(request.app[STATE].truth)


def make_app(ttft_s: float = 0.020, itl_s: float = 0.010) -> web.Application:
    app = web.Application()
    app[STATE] = _State(ttft_ns=round(ttft_s * 1e9), itl_ns=round(itl_s * 1e9))
    app.cleanup_ctx.append(_ticker)
    app.router.add_post("/v1/completions", _completions)
    app.router.add_get("/v1/models", _models)
    app.router.add_get("/_truth", _truth)
    return app


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="scoville calibration SSE emitter")
    ap.add_argument("--port", type=int, default=8124)
    ap.add_argument("--ttft-ms", type=float, default=20.0)
    ap.add_argument("--itl-ms", type=float, default=10.0)
    a = ap.parse_args(argv)
    app = make_app(a.ttft_ms / 1e3, a.itl_ms / 1e3)
    web.run_app(app, host="127.0.0.1", port=a.port, print=None, access_log=None)


if __name__ == "__main__":
    main()
