"""A round-robin reverse proxy on loopback in front of a fleet's replicas.

It streams responses through unchanged, tags each with `X-Scoville-Replica`, retries a refused
connect on the next replica (marking the refusing one down until its /health answers), and
applies the router-side faults of a soak: extra latency before the first byte, a replica slowed
`factor` times (each frame is held until `start + factor x (its arrival - start)`), and cut
connections. Each request it forwards is one line of `replicas.jsonl` (who served it, when).
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO

import aiohttp
from aiohttp import web

REPLICA_HEADER = "X-Scoville-Replica"
_PATHS = ("/v1/completions", "/v1/chat/completions")


@dataclass(slots=True)
class ReplicaFaults:
    """Router-side faults now in force on one replica (neutral values: none)."""

    slow_factor: float = 1.0
    add_ms: float = 0.0
    drop_fraction: float = 0.0


@dataclass(frozen=True, slots=True)
class Routed:
    """One forwarded request, as the router saw it (monotonic ns, the client's clock too)."""

    request_id: str
    replica: int  # the replica that served it last (-1: none was up)
    start_ns: int
    end_ns: int
    attempts: int  # 1 + connects retried on another replica
    outcome: str  # "ok", "http_<status>", "upstream_cut", "dropped", "no_replica"


@dataclass
class Router:
    """`await router.start()` serves on 127.0.0.1; `faults[i]` is changed by the scheduler."""

    urls: list[str]
    log_path: Path
    retries: int = 1
    seed: int = 0
    faults: list[ReplicaFaults] = field(default_factory=list)
    up: list[bool] = field(default_factory=list)
    url: str = ""

    def __post_init__(self) -> None:
        self.faults = [ReplicaFaults() for _ in self.urls]
        self.up = [True for _ in self.urls]
        self._next = 0
        self._rng = random.Random(self.seed)
        self._log: IO[str] | None = None
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self._prober: asyncio.Task[None] | None = None

    async def start(self) -> str:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        for path in _PATHS:
            app.router.add_post(path, self._forward)
        app.router.add_get("/health", self._health)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        port = int(self._runner.addresses[0][1])
        self.url = f"http://127.0.0.1:{port}"
        self._log = self.log_path.open("a", encoding="utf-8")
        connector = aiohttp.TCPConnector(limit=0, force_close=True)
        self._session = aiohttp.ClientSession(
            connector=connector, timeout=aiohttp.ClientTimeout(total=None, sock_connect=5)
        )
        self._prober = asyncio.create_task(self._probe_down())
        return self.url

    async def stop(self) -> None:
        if self._prober is not None:
            self._prober.cancel()
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()
        if self._log is not None:
            self._log.close()
            self._log = None

    async def _health(self, _: web.Request) -> web.Response:
        return web.Response(text="ok" if any(self.up) else "down", status=200)

    def _pick(self, tried: set[int]) -> int | None:
        """The next replica in round-robin order that is up and not yet tried."""
        n = len(self.urls)
        for k in range(n):
            i = (self._next + k) % n
            if self.up[i] and i not in tried:
                self._next = (i + 1) % n
                return i
        return None

    async def _probe_down(self) -> None:
        """Every 0.25 s, ask each replica marked down for /health; 200 brings it back."""
        assert self._session is not None
        while True:
            await asyncio.sleep(0.25)
            for i, url in enumerate(self.urls):
                if self.up[i]:
                    continue
                try:
                    timeout = aiohttp.ClientTimeout(total=1)
                    async with self._session.get(url + "/health", timeout=timeout) as r:
                        self.up[i] = r.status == 200
                except (aiohttp.ClientError, OSError, TimeoutError):
                    pass

    def _record(self, entry: Routed) -> None:
        if self._log is not None:
            self._log.write(json.dumps(asdict(entry), separators=(",", ":")) + "\n")
            self._log.flush()

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        rid = _request_id(body)
        start_ns = time.monotonic_ns()
        tried: set[int] = set()
        outcome, replica = "no_replica", -1
        resp: web.StreamResponse = web.json_response(
            {"error": {"message": "no replica is up"}}, status=503
        )
        while len(tried) <= self.retries:
            pick = self._pick(tried)
            if pick is None:
                break
            tried.add(pick)
            replica = pick
            try:
                resp, outcome = await self._relay(request, body, pick)
                break
            except (aiohttp.ClientConnectorError, ConnectionRefusedError):
                self.up[pick] = False  # refused: down until its /health answers
            except (aiohttp.ClientError, OSError, TimeoutError) as exc:
                self.up[pick] = False  # accepted, then failed before answering: no retry
                outcome = "upstream_error"
                resp = web.json_response({"error": {"message": f"replica: {exc}"}}, status=502)
                break
        entry = Routed(rid, replica, start_ns, time.monotonic_ns(), len(tried), outcome)
        self._record(entry)
        return resp

    async def _relay(
        self, request: web.Request, body: bytes, i: int
    ) -> tuple[web.StreamResponse, str]:
        """Send `body` to replica `i` and stream its answer back under its faults."""
        assert self._session is not None
        f = self.faults[i]
        drop = f.drop_fraction > 0 and self._rng.random() < f.drop_fraction
        t0 = time.monotonic()
        async with self._session.post(
            self.urls[i] + request.path, data=body, headers={"Content-Type": "application/json"}
        ) as up:
            if f.add_ms > 0:
                await asyncio.sleep(f.add_ms / 1e3)
            out = web.StreamResponse(status=up.status)
            out.content_type = up.content_type
            out.headers[REPLICA_HEADER] = str(i)
            await out.prepare(request)
            blocks: asyncio.Queue[tuple[float, bytes] | None] = asyncio.Queue()
            reader = asyncio.create_task(_read_stamped(up, blocks))
            try:
                while (item := await blocks.get()) is not None:
                    if f.slow_factor > 1:  # hold until start + factor x (arrival - start)
                        due_s = t0 + f.slow_factor * (item[0] - t0)
                        await asyncio.sleep(max(0.0, due_s - time.monotonic()))
                    if not await _send(out, item[1]):
                        return out, "client_gone"
                    if drop:
                        _cut(request)
                        return out, "dropped"
                await reader  # re-raises an upstream cut
            except (aiohttp.ClientError, OSError):
                self.up[i] = False  # the replica died mid-stream
                _cut(request)
                return out, "upstream_cut"
            finally:
                reader.cancel()
            if not await _send(out, b"", eof=True):
                return out, "client_gone"
        return out, "ok" if up.status < 400 else f"http_{up.status}"


async def _send(out: web.StreamResponse, data: bytes, eof: bool = False) -> bool:
    """Write to the client; False when the client has gone (its failure, not the replica's)."""
    try:
        await (out.write_eof() if eof else out.write(data))
    except (ConnectionResetError, aiohttp.ClientConnectionResetError):
        return False
    return True


async def _read_stamped(
    up: aiohttp.ClientResponse, blocks: asyncio.Queue[tuple[float, bytes] | None]
) -> None:
    """Read the upstream body, stamping each block's arrival (monotonic s); None ends it."""
    try:
        async for block in up.content.iter_any():
            blocks.put_nowait((time.monotonic(), block))
    finally:
        blocks.put_nowait(None)


def _cut(request: web.Request) -> None:
    """Close the client's connection without finishing the stream (it sees a cut)."""
    if request.transport is not None:
        request.transport.abort()


def _request_id(body: bytes) -> str:
    """The client's request id, carried in the OpenAI `user` field ("" when absent)."""
    try:
        obj = json.loads(body)
    except ValueError:
        return ""
    return str(obj.get("user", "")) if isinstance(obj, dict) else ""
