"""A reference OpenAI-compatible SSE server with a known token-emission schedule.

It answers /v1/completions and /v1/chat/completions by streaming `max_tokens` tokens: the first
frame `ttft_s` after the request arrived, then one frame every `itl_s` (each frame carries
`tokens_per_chunk` tokens). It records the monotonic time at which each frame was written, so a
test can compare what the client measured with what was really sent (the monotonic clock is
system-wide on Linux: the times of two processes on one machine are comparable). Faults are
asked per request with the body field `x_fault` (or for all with `Schedule.fault`): "500",
"429" (with Retry-After), "cut:N" (close after N frames), "malformed:N" (a broken frame after
N), "stall:S" (pause S seconds mid-stream), "crlf" (CRLF line endings), "huge:N" (a first
frame of N bytes), "usage:str|neg|x10" (a lying usage count), "trickle:MS" (one byte every MS
ms), "hang" (never answer), "html" (an HTML 502 page), "echo" (a 401 echoing the request
headers), "json200" (a non-stream 200), "nodata" (frames without `data:`), "eos:N" (the model
ends its output after N tokens, finish_reason "stop"; "eos:0": no output token at all).
Run alone: `python -m scoville.targets.reference_server --port 8123 --ttft-ms 20 --itl-ms 10`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from scoville.client.seam import GenerateRequest


@dataclass
class Schedule:
    ttft_s: float = 0.020
    itl_s: float = 0.010
    tokens_per_chunk: int = 1
    model: str = "reference"
    fault: str = ""  # applied to every request that names no `x_fault` of its own
    tokenize_fault: str = ""  # "reset": /tokenize drops the connection (a server that died)
    one_request_per_connection: bool = False  # drop a reused connection unanswered


@dataclass
class _State:
    schedule: Schedule
    vocab: dict[str, int] = field(default_factory=dict)
    words: list[str] = field(default_factory=list)
    truth: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: int = 0
    connections: set[Any] = field(default_factory=set)

    def encode(self, text: str) -> list[int]:
        ids = []
        for w in text.split():
            if w not in self.vocab:
                self.vocab[w] = len(self.words)
                self.words.append(w)
            ids.append(self.vocab[w])
        return ids


STATE = web.AppKey("state", _State)


def _prompt_tokens(state: _State, body: dict[str, Any]) -> int:
    if "messages" in body:
        return sum(len(str(m.get("content", "")).split()) for m in body["messages"])
    return len(str(body.get("prompt", "")).split())


def _json(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj).encode()


def _choice(chat: bool, text: str, finish: str | None) -> dict[str, Any]:
    if chat:
        return {"index": 0, "delta": {"content": text}, "finish_reason": finish}
    return {"index": 0, "text": text, "finish_reason": finish}


async def _refuse(fault: str, request: web.Request) -> web.StreamResponse | None:
    """The faults that answer without a stream (None: stream as usual)."""
    if fault in ("500", "429"):
        headers = {"Retry-After": "2"} if fault == "429" else None
        msg = {"error": {"message": f"injected {fault}"}}
        return web.json_response(msg, status=int(fault), headers=headers)
    if fault == "html":
        page = "<html><body><h1>502 Bad Gateway</h1><p>nginx</p></body></html>"
        return web.Response(status=502, text=page, content_type="text/html")
    if fault == "echo":  # a proxy that echoes the request headers into its error
        return web.json_response({"error": dict(request.headers)}, status=401)
    if fault == "json200":
        body = {"object": "text_completion", "choices": [{"index": 0, "text": "all at once"}]}
        return web.json_response(body)
    if fault == "hang":  # accept the request and never answer (until the client leaves)
        while request.transport is not None and not request.transport.is_closing():
            await asyncio.sleep(0.05)
        return web.Response(status=204)
    return None


def _usage(state: _State, body: dict[str, Any], n_tokens: int, fault: str) -> dict[str, Any]:
    completion: Any = n_tokens
    if fault == "usage:str":
        completion = str(n_tokens)
    elif fault == "usage:neg":
        completion = -665
    elif fault == "usage:x10":
        completion = n_tokens * 10
    return {
        "prompt_tokens": _prompt_tokens(state, body),
        "completion_tokens": completion,
        "total_tokens": _prompt_tokens(state, body) + n_tokens,
        "prompt_tokens_details": {"cached_tokens": 0},
    }


class _Writer:
    """Writes frames in the stream's fault shape: CRLF or LF endings, with or without
    `data:`, whole or one byte every `trickle_s`."""

    def __init__(self, resp: web.StreamResponse, fault: str) -> None:
        self.resp, self.fault = resp, fault
        self.trickle_s = float(fault[8:]) / 1e3 if fault.startswith("trickle:") else 0.0

    async def event(self, payload: bytes) -> None:
        if self.fault == "crlf":
            data = b"data: " + payload + b"\r\n\r\n"
        elif self.fault == "nodata":
            data = payload + b"\n\n"
        else:
            data = b"data: " + payload + b"\n\n"
        if not self.trickle_s:
            await self.resp.write(data)
            return
        for i in range(len(data)):
            await self.resp.write(data[i : i + 1])
            await asyncio.sleep(self.trickle_s)


def _token_text(fault: str, i: int, k: int) -> str:
    if fault.startswith("huge:") and i == 0:
        return "x" * int(fault[5:])  # one frame of N bytes
    return " tok" * k


async def _generate(request: web.Request) -> web.StreamResponse:
    arrived_ns = time.monotonic_ns()
    state = request.app[STATE]
    state.requests += 1
    if state.schedule.one_request_per_connection and _seen_connection(state, request):
        request.transport.close() if request.transport else None  # the idle close, too late
        return web.Response(status=204)
    body = await request.json()
    fault = str(body.get("x_fault", state.schedule.fault))
    refused = await _refuse(fault, request)
    if refused is not None:
        return refused
    chat = request.path.endswith("chat/completions")
    n_tokens = int(body.get("max_completion_tokens") or body.get("max_tokens") or 16)
    finish = "length"
    if fault.startswith("eos:") and int(fault[4:]) < n_tokens:
        n_tokens, finish = int(fault[4:]), "stop"
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await resp.prepare(request)
    out = _Writer(resp, fault)
    emit_ns = await _tokens(request, out, n_tokens, chat)
    if emit_ns is None:  # the stream was cut
        return resp
    model = state.schedule.model
    last = {"object": "text_completion", "model": model, "choices": [_choice(chat, "", finish)]}
    await out.event(_json({**last, "usage": _usage(state, body, n_tokens, fault)}))
    done_ns = time.monotonic_ns()
    await out.event(b"[DONE]")
    user = body.get("user")
    if user:
        state.truth[str(user)] = {"arrived_ns": arrived_ns, "emit_ns": emit_ns, "done_ns": done_ns}
    return resp


async def _tokens(
    request: web.Request, out: _Writer, n_tokens: int, chat: bool
) -> list[int] | None:
    """Stream the token frames on schedule; their write times, or None if the fault cut."""
    sched, fault = request.app[STATE].schedule, out.fault
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    emit_ns: list[int] = []
    n_frames = -(-n_tokens // sched.tokens_per_chunk)
    for i in range(n_frames):
        if fault.startswith("cut:") and i == int(fault[4:]):
            request.transport.close() if request.transport else None
            return None
        if fault.startswith("malformed:") and i == int(fault[10:]):
            await out.resp.write(b"data: {not json\n\n")
        if fault.startswith("stall:") and i == n_frames // 2:
            t0 += float(fault[6:])
        await asyncio.sleep(max(0.0, t0 + sched.ttft_s + i * sched.itl_s - loop.time()))
        k = min(sched.tokens_per_chunk, n_tokens - i * sched.tokens_per_chunk)
        emit_ns.append(time.monotonic_ns())
        choice = _choice(chat, _token_text(fault, i, k), None)
        frame = {"object": "text_completion", "model": sched.model, "choices": [choice]}
        await out.event(_json(frame))
    return emit_ns


def _seen_connection(state: _State, request: web.Request) -> bool:
    """True when this connection already carried a request (keyed by the client's port)."""
    peer = request.transport.get_extra_info("peername") if request.transport else None
    if peer in state.connections:
        return True
    state.connections.add(peer)
    return False


async def _models(request: web.Request) -> web.Response:
    model = request.app[STATE].schedule.model
    return web.json_response({"object": "list", "data": [{"id": model, "object": "model"}]})


async def _tokenize(request: web.Request) -> web.Response:
    if request.app[STATE].schedule.tokenize_fault == "reset" and request.transport:
        request.transport.close()
        return web.Response(status=500)
    body = await request.json()
    return web.json_response({"tokens": request.app[STATE].encode(str(body.get("content", "")))})


async def _detokenize(request: web.Request) -> web.Response:
    body = await request.json()
    words = request.app[STATE].words
    return web.json_response({"content": " ".join(words[i] for i in body.get("tokens", []))})


async def _truth(request: web.Request) -> web.Response:
    return web.json_response(request.app[STATE].truth)


def tagged_requests(n: int, prefix: str, max_tokens: int) -> list[GenerateRequest]:
    """`n` 3-token completions requests, each carrying its id as `user`: the key under which
    this server logs its own write times, so a client's stamps can be checked per request."""
    return [
        GenerateRequest(
            request_id=f"{prefix}{i}",
            api="completions",
            input_tokens=3,
            max_tokens=max_tokens,
            prompt=f"{prefix}{i} hello world",
            extra_body={"user": f"{prefix}{i}"},
        )
        for i in range(n)
    ]


def make_app(schedule: Schedule) -> web.Application:
    app = web.Application()
    app[STATE] = _State(schedule)
    app.router.add_post("/v1/completions", _generate)
    app.router.add_post("/v1/chat/completions", _generate)
    app.router.add_get("/v1/models", _models)
    app.router.add_post("/tokenize", _tokenize)
    app.router.add_post("/detokenize", _detokenize)
    app.router.add_get("/_truth", _truth)
    return app


class ReferenceServer:
    """In-process start/stop: `async with ReferenceServer(Schedule()) as url: ...`."""

    def __init__(self, schedule: Schedule | None = None, port: int = 0) -> None:
        self.app = make_app(schedule or Schedule())
        self._port = port
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def __aenter__(self) -> str:
        self._runner = web.AppRunner(self.app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self._port)
        await site.start()
        port = int(self._runner.addresses[0][1])
        self.url = f"http://127.0.0.1:{port}"
        return self.url

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8123)
    ap.add_argument("--ttft-ms", type=float, default=20.0)
    ap.add_argument("--itl-ms", type=float, default=10.0)
    ap.add_argument("--tokens-per-chunk", type=int, default=1)
    ap.add_argument("--fault", default="", help="Fault for every request, e.g. cut:3 or 500.")
    a = ap.parse_args(argv)
    sched = Schedule(a.ttft_ms / 1e3, a.itl_ms / 1e3, a.tokens_per_chunk, fault=a.fault)
    web.run_app(make_app(sched), host="127.0.0.1", port=a.port, print=None, access_log=None)


if __name__ == "__main__":
    main()
