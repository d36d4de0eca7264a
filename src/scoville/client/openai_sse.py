"""The OpenAI-compatible streaming transport (aiohttp): one `Server` for every real endpoint.

Hot loop: each block of bytes read from the socket is stamped with the clock *before* it is
framed; the SSE frames it completes share that arrival time. Frames are kept raw and parsed
after the stream ends, so JSON parsing never delays the stamping of other streams. TTFT and
E2E start when the request's last byte was written (see `client/wire.py`).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from scoville.client.seam import ChunkCallback, Clock, Exchange, GenerateRequest
from scoville.client.sse import SSEParser
from scoville.client.wire import SendPacer, WireTiming, redact, trace_config
from scoville.records.model import ErrorKind

try:  # orjson is 3-5x faster on the small frames of an SSE stream; json is the fallback.
    import orjson

    _loads: Any = orjson.loads
except ImportError:  # pragma: no cover - orjson is a dependency, the fallback is for safety
    _loads = json.loads

_CONTEXT_WORDS = ("context length", "context_length", "maximum context", "exceeds the", "too long")


def request_body(req: GenerateRequest, model: str) -> dict[str, Any]:
    """The JSON body for /v1/completions or /v1/chat/completions."""
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": req.max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if req.api == "chat":
        body["messages"] = list(req.messages or ())
        body["max_completion_tokens"] = req.max_tokens
    else:
        body["prompt"] = req.prompt
    if req.ignore_eos:
        body["ignore_eos"] = True
    if req.min_tokens is not None:
        body["min_tokens"] = req.min_tokens
    body.update(req.extra_body)
    return body


def _frame_text(obj: dict[str, Any]) -> str:
    choices = obj.get("choices") or ()
    if not choices:
        return ""
    c0 = choices[0]
    if "text" in c0:
        return str(c0.get("text") or "")
    delta = c0.get("delta") or {}
    # Reasoning models stream thoughts separately; they are output tokens all the same.
    return str(delta.get("content") or "") + str(
        delta.get("reasoning_content") or delta.get("reasoning") or ""
    )


def _usage_count(usage: dict[str, Any], key: str, ex: Exchange) -> int | None:
    """usage[key] when it is a non-negative integer; else None and `ex.usage_issue` says why."""
    value = usage.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        ex.usage_issue = f"usage.{key} is not a non-negative integer: {value!r:.40}"
        return None
    return value


def _take_usage(usage: dict[str, Any], ex: Exchange) -> None:
    ex.prompt_tokens = _usage_count(usage, "prompt_tokens", ex)
    ex.completion_tokens = _usage_count(usage, "completion_tokens", ex)
    details = usage.get("prompt_tokens_details")
    if isinstance(details, dict):
        ex.cached_tokens = _usage_count(details, "cached_tokens", ex)


def check_usage(ex: Exchange, max_tokens: int) -> None:
    """Distrust a completion count no server could have produced: more than `max_tokens`,
    or fewer tokens than output-bearing frames. The count is dropped (the driver counts the
    text itself) and `usage_issue` flags the request."""
    n = ex.completion_tokens
    if n is None:
        return
    if n > max_tokens:
        ex.usage_issue = f"usage.completion_tokens {n} exceeds max_tokens {max_tokens}"
    elif n < len(ex.chunk_ns):
        ex.usage_issue = f"usage.completion_tokens {n} < {len(ex.chunk_ns)} output frames"
    else:
        return
    ex.completion_tokens = None


def parse_frames(frames: list[tuple[int, bytes]], ex: Exchange) -> bool:
    """Fill `ex` from raw `data:` payloads; True if the stream was properly terminated."""
    done = False
    for t_ns, payload in frames:
        if payload == b"[DONE]":
            done = True
            continue
        try:
            obj = _loads(payload)
        except ValueError:
            ex.error, ex.error_detail = ErrorKind.MALFORMED, f"bad JSON frame: {payload[:80]!r}"
            return done
        if not isinstance(obj, dict):
            ex.error = ErrorKind.MALFORMED
            ex.error_detail = f"frame is not an object: {payload[:80]!r}"
            return done
        if "error" in obj and not obj.get("choices"):
            ex.error = ErrorKind.HTTP_5XX
            ex.error_detail = f"error frame: {str(obj['error'])[:200]}"
            return done
        text = _frame_text(obj)
        if text:
            ex.chunk_ns.append(t_ns)
            ex.chunk_text.append(text)
        choices = obj.get("choices") or ()
        if choices and choices[0].get("finish_reason"):
            ex.finish_reason = str(choices[0]["finish_reason"])
        usage = obj.get("usage")
        if isinstance(usage, dict) and usage:
            _take_usage(usage, ex)
    return done


def _http_error(status: int, body: str) -> ErrorKind:
    if status == 429:
        return ErrorKind.RATE_LIMITED
    if status >= 500:
        return ErrorKind.HTTP_5XX
    if any(w in body.lower() for w in _CONTEXT_WORDS):
        return ErrorKind.CONTEXT_OVERFLOW
    return ErrorKind.HTTP_4XX


_STALE = (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError)
_FAILURES = (aiohttp.ClientError, OSError, TimeoutError, ValueError)


@dataclass(slots=True)
class _Stream:
    """One exchange in progress: the SSE parser and the stamps the transport keeps."""

    on_chunk: ChunkCallback | None
    parser: SSEParser = field(default_factory=SSEParser)
    last_frame_ns: int = 0
    done: bool = False
    deadline: asyncio.Timeout | None = None


class OpenAIStreamingServer:
    """A `Server` over HTTP: streams /v1/completions or /v1/chat/completions with aiohttp.

    Connections are kept alive and reused where the server allows it; a request that fails
    on a reused connection before any byte of its response arrived (the server had closed
    the idle connection) is sent again once, on a connection opened for it.
    `fresh_connections=True` opens a new connection for every request instead.
    `request_timeout_s` bounds the whole request (and so any silence within it)."""

    def __init__(
        self,
        base_url: str,
        model: str,
        clock: Clock,
        api_key: str | None = None,
        request_timeout_s: float = 600.0,
        fresh_connections: bool = False,
        sends_per_turn: int = 2,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.clock = clock
        self.fresh_connections = fresh_connections
        self._api_key = api_key
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._deadline_s = request_timeout_s
        # No per-read timer: re-arming it on every block costs CPU on the hot path, and the
        # total deadline below (the same length) bounds any silence anyway.
        self._timeout = aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=None)
        self._session: aiohttp.ClientSession | None = None
        self._retry_session: aiohttp.ClientSession | None = None
        self._pacer = SendPacer(sends_per_turn)  # see SendPacer; benchmarks compare others

    def _url(self, req: GenerateRequest) -> str:
        path = "/v1/chat/completions" if req.api == "chat" else "/v1/completions"
        return self.base_url + path

    def _new_session(self, force_close: bool) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0, force_close=force_close),
            timeout=self._timeout,
            headers=self._headers,
            trace_configs=[trace_config()],
        )

    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = self._new_session(self.fresh_connections)
        return self._session

    def _fresh_session(self) -> aiohttp.ClientSession:
        """Connections that are never pooled, for the retry after a stale one."""
        if self._retry_session is None:
            self._retry_session = self._new_session(force_close=True)
        return self._retry_session

    async def generate(
        self, request: GenerateRequest, on_chunk: ChunkCallback | None = None
    ) -> Exchange:
        body = json.dumps(request_body(request, self.model)).encode()
        send_ns = self.clock.now_ns()
        ex = Exchange(start_ns=send_ns, send_ns=send_ns)
        st = _Stream(on_chunk)
        try:
            async with asyncio.timeout(self._deadline_s) as st.deadline:
                await self._exchange(request, body, ex, st)
        except asyncio.CancelledError:
            ex.error, ex.error_detail = ErrorKind.CANCELLED, "run stopped"
            self._finish(ex, st, request)
            raise
        except _FAILURES as exc:  # every failure becomes a typed record, never a crash
            ex.error, ex.error_detail = self._failure(exc, st)
        await self._pacer.wait()  # parsing is work a burst of completions must spread too
        self._finish(ex, st, request)
        return ex

    async def _exchange(
        self, request: GenerateRequest, body: bytes, ex: Exchange, st: _Stream
    ) -> None:
        headers = {"Content-Type": "application/json"}
        await self._pacer.wait()
        while True:
            wire = WireTiming(now_ns=self.clock.now_ns)
            # The retry goes on a new connection: the other pooled ones may be stale too.
            session = self._fresh_session() if ex.retries else self.session()
            try:
                resp = await session.post(
                    self._url(request), data=body, headers=headers, trace_request_ctx=wire
                )
            except _STALE:
                if not wire.reused or ex.retries:
                    raise
                ex.retries += 1  # the server had closed an idle pooled connection
                continue
            break
        ex.start_ns = wire.written_ns or ex.start_ns
        ex.connect_ms = wire.connect_ms
        async with resp:
            ex.http_status = resp.status
            if resp.status >= 400 or _not_a_stream(resp):
                await self._refused(resp, ex)
                return
            await self._read(resp, st)

    async def _read(self, resp: aiohttp.ClientResponse, st: _Stream) -> None:
        parser, now_ns, on_chunk = st.parser, self.clock.now_ns, st.on_chunk
        read = resp.content.readany
        while block := await read():
            t_ns = now_ns()  # stamped before any parsing
            n_before = len(parser.frames)
            parser.feed(block, t_ns)
            if len(parser.frames) > n_before:
                st.last_frame_ns = t_ns
                if on_chunk is not None:
                    for _t, payload in parser.frames[n_before:]:
                        on_chunk(t_ns, payload.decode("utf-8", "replace"))

    async def _refused(self, resp: aiohttp.ClientResponse, ex: Exchange) -> None:
        """An HTTP error, or a 200 that is not an event stream: the body says why."""
        text = (await resp.text(errors="replace"))[:500]
        ex.end_ns = self.clock.now_ns()
        if resp.status < 400:
            ctype = resp.headers.get("Content-Type", "?")
            ex.error = ErrorKind.MALFORMED
            ex.error_detail = f"HTTP {resp.status} answered {ctype}, not an event stream: {text}"
            return
        ex.error, ex.error_detail = _http_error(resp.status, text), text
        retry_after = resp.headers.get("Retry-After")
        if retry_after is not None:
            ex.error_detail = f"Retry-After: {retry_after[:40]}; {text}"

    def _failure(self, exc: BaseException, st: _Stream) -> tuple[ErrorKind, str]:
        if isinstance(exc, TimeoutError) and st.deadline is not None and st.deadline.expired():
            return ErrorKind.TIMEOUT, f"no complete answer within {self._deadline_s:g} s"
        if isinstance(exc, aiohttp.ClientConnectorError | ConnectionRefusedError):
            return ErrorKind.CONNECT, str(exc)
        if isinstance(exc, TimeoutError | aiohttp.ServerTimeoutError):
            return ErrorKind.TIMEOUT, str(exc) or type(exc).__name__
        if isinstance(exc, (aiohttp.ClientPayloadError, *_STALE)):
            return ErrorKind.STREAM_CUT, str(exc) or type(exc).__name__
        return ErrorKind.CLIENT, f"{type(exc).__name__}: {exc}"

    def _finish(self, ex: Exchange, st: _Stream, request: GenerateRequest) -> None:
        """Parse the frames, set the end stamp and the error the stream itself shows."""
        if ex.end_ns == 0:
            st.done = parse_frames(st.parser.frames, ex)
            # E2E ends at the final frame ([DONE] or the finish frame), not at socket close.
            last = st.last_frame_ns
            ex.end_ns = last if (st.done and last) else self.clock.now_ns()
            check_usage(ex, request.max_tokens)
        if ex.error is None:
            ex.error, ex.error_detail = _stream_error(ex, st)
        ex.error_detail = redact(ex.error_detail, self._api_key)

    async def close(self) -> None:
        for session in (self._session, self._retry_session):
            if session is not None:
                await session.close()
        self._session = self._retry_session = None


def _not_a_stream(resp: aiohttp.ClientResponse) -> bool:
    ctype = resp.headers.get("Content-Type", "")
    return "json" in ctype or "html" in ctype


def _stream_error(ex: Exchange, st: _Stream) -> tuple[ErrorKind | None, str]:
    parser = st.parser
    if not parser.frames and parser.stray_lines:
        return ErrorKind.MALFORMED, f"no data: field in the stream: {parser.stray_sample!r}"
    if not st.done and ex.finish_reason is None:
        return ErrorKind.STREAM_CUT, "stream ended before [DONE]"
    if not ex.chunk_ns:
        return ErrorKind.EMPTY, "no output token in the stream"
    return None, ex.error_detail
