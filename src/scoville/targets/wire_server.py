"""A light ground-truth SSE server for wire benchmarks at hundreds of streams: raw asyncio
protocol, frames encoded once, one timer per stream, and several processes on one port
(SO_REUSEPORT) so the source of truth is never the bottleneck the client is blamed for.

Each POST /v1/completions (or /v1/chat/completions) streams `max_tokens` one-token frames
(chunked HTTP/1.1, keep-alive): the first `ttft_ms` after the request's last byte was read,
then one every `itl_ms`. The schedule is absolute (frame i at arrival + ttft + i*itl), so a
late wake-up delays one frame, never the ones after it. Each process logs, per request id
(the body field `user`, else the `X-Request-ID` header), the arrival and every frame's write
time (monotonic ns), and writes them to `truth-<pid>.json` in `--truth-dir` when stopped.

    python -m scoville.targets.wire_server --port 8124 --processes 2 --ttft-ms 40 --itl-ms 8
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

_HEADERS_END = b"\r\n\r\n"
_CONTENT_LENGTH = re.compile(rb"(?im)^content-length:\s*(\d+)\s*$")
_CLOSE = re.compile(rb"(?im)^connection:\s*close\s*$")
_REQUEST_ID = re.compile(rb"(?im)^x-request-id:\s*(\S+)\s*$")
_STREAM_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n"
)


def _chunk(payload: bytes) -> bytes:
    """One SSE event as one HTTP chunk (the chunk framing encoded with it)."""
    event = b"data: " + payload + b"\n\n"
    return b"%x\r\n%s\r\n" % (len(event), event)


def _plain(status: str, body: bytes, content_type: str = "application/json") -> bytes:
    head = f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}"
    return head.encode() + b"\r\n\r\n" + body


@dataclass(frozen=True, slots=True)
class Frames:
    """Every byte string a stream sends, encoded once per process."""

    token: bytes
    tail: bytes  # the usage frame without its count, [DONE] and the last chunk follow it

    @staticmethod
    def make(model: str, chat: bool) -> Frames:
        obj = "chat.completion.chunk" if chat else "text_completion"
        choice: dict[str, Any] = {"index": 0, "finish_reason": None}
        choice.update({"delta": {"content": " tok"}} if chat else {"text": " tok"})
        base = {"id": "ref-0", "object": obj, "created": 0, "model": model}
        token = _chunk(json.dumps({**base, "choices": [choice]}).encode())
        return Frames(token, json.dumps({**base, "choices": []}).encode())

    def end(self, prompt_tokens: int, n_tokens: int) -> bytes:
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": n_tokens}
        usage["total_tokens"] = prompt_tokens + n_tokens
        last = self.tail[:-1] + b', "usage": ' + json.dumps(usage).encode() + b"}"
        return _chunk(last) + _chunk(b"[DONE]") + b"0\r\n\r\n"


@dataclass(slots=True)
class Truth:
    """What this process really did, per request id: arrival and frame write times."""

    arrived_ns: dict[str, int] = field(default_factory=dict)
    emit_ns: dict[str, list[int]] = field(default_factory=dict)

    def to_json_dict(self) -> dict[str, dict[str, Any]]:
        return {
            user: {"arrived_ns": self.arrived_ns[user], "emit_ns": emit}
            for user, emit in self.emit_ns.items()
        }


@dataclass(frozen=True, slots=True)
class Config:
    ttft_ms: float = 40.0
    itl_ms: float = 8.0
    model: str = "reference"


class _Stream:
    """One response on a schedule: frame i at `t0 + i*itl`, where `t0` = arrival + ttft
    (loop time, seconds)."""

    __slots__ = ("cfg", "conn", "emit", "end", "frames", "i", "n", "t0")

    def __init__(self, conn: _Conn, n: int, emit: list[int], end: bytes, chat: bool) -> None:
        self.conn, self.n, self.i, self.emit, self.end = conn, n, 0, emit, end
        self.cfg, self.frames = conn.cfg, conn.frames[chat]
        self.t0 = conn.loop.time() + self.cfg.ttft_ms / 1e3

    def step(self) -> None:
        transport = self.conn.transport
        if transport is None or transport.is_closing():
            return
        self.emit.append(time.monotonic_ns())
        transport.write(self.frames.token)
        self.i += 1
        if self.i < self.n:
            self.conn.loop.call_at(self.t0 + self.i * self.cfg.itl_ms / 1e3, self.step)
            return
        transport.write(self.end)
        self.conn.done()


class _Conn(asyncio.Protocol):
    """HTTP/1.1 keep-alive, one request at a time (no pipelining), just enough for POSTs."""

    def __init__(self, cfg: Config, truth: Truth, frames: dict[bool, Frames]) -> None:
        self.cfg, self.truth, self.frames = cfg, truth, frames
        self.loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.busy = self.closing = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None

    def data_received(self, data: bytes) -> None:
        self.buf += data
        if not self.busy:
            self._next()

    def _next(self) -> None:
        end = self.buf.find(_HEADERS_END)
        if end < 0 or self.transport is None:
            return
        head = bytes(self.buf[:end])
        m = _CONTENT_LENGTH.search(head)
        size = int(m.group(1)) if m else 0
        if len(self.buf) < end + 4 + size:
            return
        body = bytes(self.buf[end + 4 : end + 4 + size])
        del self.buf[: end + 4 + size]
        self.closing = _CLOSE.search(head) is not None
        self._answer(head, body, time.monotonic_ns())

    def _answer(self, head: bytes, body: bytes, arrived_ns: int) -> None:
        assert self.transport is not None
        line = head.split(b" ", 2)
        path = line[1] if len(line) > 1 else b""
        if line[0] == b"GET" and path == b"/v1/models":
            models = {"object": "list", "data": [{"id": self.cfg.model, "object": "model"}]}
            self.transport.write(_plain("200 OK", json.dumps(models).encode()))
            return self.done()
        if line[0] != b"POST" or path not in (b"/v1/completions", b"/v1/chat/completions"):
            self.transport.write(_plain("404 Not Found", b'{"error": "not found"}'))
            return self.done()
        try:
            req = json.loads(body or b"{}")
        except ValueError:
            self.transport.write(_plain("400 Bad Request", b'{"error": "body is not JSON"}'))
            return self.done()
        n = int(req.get("max_completion_tokens") or req.get("max_tokens") or 16)
        emit: list[int] = []
        if user := req.get("user") or _header_id(head):
            self.truth.arrived_ns[str(user)], self.truth.emit_ns[str(user)] = arrived_ns, emit
        chat = path.endswith(b"chat/completions")
        self.busy = True
        self.transport.write(_STREAM_HEAD)
        stream = _Stream(self, n, emit, self.frames[chat].end(_prompt_tokens(req), n), chat)
        self.loop.call_at(stream.t0, stream.step)
        return None

    def done(self) -> None:
        self.busy = False
        if self.closing and self.transport is not None:
            self.transport.close()
        elif self.buf:
            self._next()


def _header_id(head: bytes) -> str | None:
    m = _REQUEST_ID.search(head)
    return m.group(1).decode() if m else None


def _prompt_tokens(req: dict[str, Any]) -> int:
    if "messages" in req:
        return sum(len(str(m.get("content", "")).split()) for m in req["messages"])
    return len(str(req.get("prompt", "")).split())


def listening_socket(port: int, host: str = "127.0.0.1") -> socket.socket:
    """A socket bound with SO_REUSEPORT: every process binds its own, the kernel spreads
    new connections over them."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.listen(4096)
    return sock


async def _serve(cfg: Config, port: int, truth: Truth, stopped: asyncio.Event) -> None:
    frames = {chat: Frames.make(cfg.model, chat) for chat in (False, True)}
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: _Conn(cfg, truth, frames), sock=listening_socket(port)
    )
    async with server:
        await stopped.wait()


def serve_process(cfg: Config, port: int, truth_dir: str | None) -> None:
    """One server process until SIGTERM/SIGINT; then its truth file (when asked for)."""
    truth = Truth()

    async def main() -> None:
        stopped = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            asyncio.get_running_loop().add_signal_handler(sig, stopped.set)
        await _serve(cfg, port, truth, stopped)

    _run(main)
    if truth_dir:
        path = Path(truth_dir) / f"truth-{os.getpid()}.json"
        path.write_text(json.dumps(truth.to_json_dict()))


def _run(main: Callable[[], Any]) -> None:
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency where it installs
        asyncio.run(main())
        return
    uvloop.run(main())


def read_truth(truth_dir: Path) -> dict[str, dict[str, Any]]:
    """Every process's truth files merged: request id -> arrived_ns, emit_ns."""
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(truth_dir.glob("truth-*.json")):
        out.update(json.loads(path.read_text()))
    return out


def start(
    port: int, ttft_ms: float, itl_ms: float, processes: int, truth_dir: Path
) -> subprocess.Popen[bytes]:
    """This server as a child process on `port`, returned once it answers `/v1/models`."""
    cmd = [sys.executable, "-m", "scoville.targets.wire_server", "--port", str(port)]
    cmd += ["--ttft-ms", str(ttft_ms), "--itl-ms", str(itl_ms)]
    proc = subprocess.Popen([*cmd, "--processes", str(processes), "--truth-dir", str(truth_dir)])
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=1).read()
            return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("wire server did not start")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8124)
    ap.add_argument("--processes", type=int, default=1, help="server processes on the port")
    ap.add_argument("--ttft-ms", type=float, default=40.0)
    ap.add_argument("--itl-ms", type=float, default=8.0)
    ap.add_argument("--truth-dir", default=None, help="write truth-<pid>.json here on stop")
    a = ap.parse_args(argv)
    cfg = Config(a.ttft_ms, a.itl_ms)
    ctx = mp.get_context("fork")
    procs = [
        ctx.Process(target=serve_process, args=(cfg, a.port, a.truth_dir))
        for _ in range(max(1, a.processes))
    ]
    for p in procs:
        p.start()

    def forward(sig: int, _frame: object) -> None:
        for p in procs:
            if p.pid is not None:
                os.kill(p.pid, sig)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    for p in procs:
        p.join()


if __name__ == "__main__":
    main()
