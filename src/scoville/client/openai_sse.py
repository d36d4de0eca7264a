"""The OpenAI-compatible streaming transport (aiohttp): one `Server` for every real endpoint.

Hot loop: each block of bytes read from the socket is stamped with the clock *before* it is
parsed; the SSE frames it holds share that arrival time. Frames are kept raw and parsed after
the stream ends, so parsing never delays the stamping of other streams.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp

from scoville.client.seam import ChunkCallback, Clock, Exchange, GenerateRequest
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
        if usage:
            ex.prompt_tokens = usage.get("prompt_tokens")
            ex.completion_tokens = usage.get("completion_tokens")
            details = usage.get("prompt_tokens_details") or {}
            if details.get("cached_tokens") is not None:
                ex.cached_tokens = int(details["cached_tokens"])
    return done


def split_sse(buffer: bytes, t_ns: int, frames: list[tuple[int, bytes]]) -> bytes:
    """Append complete `data:` payloads in `buffer` to `frames`; return the unfinished tail."""
    *events, tail = buffer.split(b"\n\n")
    for event in events:
        for line in event.split(b"\n"):
            if line.startswith(b"data:"):
                frames.append((t_ns, line[5:].strip()))
    return tail


def _http_error(status: int, body: str) -> ErrorKind:
    if status == 429:
        return ErrorKind.RATE_LIMITED
    if status >= 500:
        return ErrorKind.HTTP_5XX
    if any(w in body.lower() for w in _CONTEXT_WORDS):
        return ErrorKind.CONTEXT_OVERFLOW
    return ErrorKind.HTTP_4XX


class OpenAIStreamingServer:
    """A `Server` over HTTP: streams /v1/completions or /v1/chat/completions with aiohttp."""

    def __init__(
        self,
        base_url: str,
        model: str,
        clock: Clock,
        api_key: str | None = None,
        request_timeout_s: float = 600.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.clock = clock
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=30, sock_read=request_timeout_s
        )
        self._session: aiohttp.ClientSession | None = None

    def _url(self, req: GenerateRequest) -> str:
        path = "/v1/chat/completions" if req.api == "chat" else "/v1/completions"
        return self.base_url + path

    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            connector = aiohttp.TCPConnector(limit=0, force_close=True)
            self._session = aiohttp.ClientSession(
                connector=connector, timeout=self._timeout, headers=self._headers
            )
        return self._session

    async def generate(  # noqa: C901  (split when the transport is reworked)
        self, request: GenerateRequest, on_chunk: ChunkCallback | None = None
    ) -> Exchange:
        body = json.dumps(request_body(request, self.model)).encode()
        ex = Exchange(start_ns=self.clock.now_ns())
        frames: list[tuple[int, bytes]] = []
        done = False
        last_frame_ns = 0
        try:
            async with self.session().post(
                self._url(request), data=body, headers={"Content-Type": "application/json"}
            ) as resp:
                ex.http_status = resp.status
                if resp.status >= 400:
                    text = (await resp.text())[:500]
                    ex.error, ex.error_detail = _http_error(resp.status, text), text
                    ex.end_ns = self.clock.now_ns()
                    return ex
                tail = b""
                read = resp.content.readany
                while block := await read():
                    t_ns = self.clock.now_ns()  # stamped before any parsing
                    n_before = len(frames)
                    tail = split_sse(tail + block, t_ns, frames)
                    if len(frames) > n_before:
                        last_frame_ns = t_ns
                    if on_chunk is not None:
                        for _t, payload in frames[n_before:]:
                            on_chunk(t_ns, payload.decode("utf-8", "replace"))
                done = parse_frames(frames, ex)
        except asyncio.CancelledError:
            ex.error, ex.error_detail = ErrorKind.CANCELLED, "run stopped"
            parse_frames(frames, ex)
            raise
        except (aiohttp.ClientConnectorError, ConnectionRefusedError) as exc:
            ex.error, ex.error_detail = ErrorKind.CONNECT, str(exc)
        except (TimeoutError, aiohttp.ServerTimeoutError) as exc:
            ex.error, ex.error_detail = ErrorKind.TIMEOUT, str(exc) or "read timeout"
            parse_frames(frames, ex)
        except (
            aiohttp.ClientPayloadError,
            aiohttp.ServerDisconnectedError,
            aiohttp.ClientOSError,
        ) as exc:
            ex.error, ex.error_detail = ErrorKind.STREAM_CUT, str(exc) or type(exc).__name__
            parse_frames(frames, ex)
        except aiohttp.ClientError as exc:
            ex.error, ex.error_detail = ErrorKind.CLIENT, f"{type(exc).__name__}: {exc}"
        finally:
            # E2E ends at the final frame ([DONE] or the finish frame), not at socket close.
            ex.end_ns = last_frame_ns if (done and last_frame_ns) else self.clock.now_ns()
        if ex.error is None:
            if not done and ex.finish_reason is None:
                ex.error, ex.error_detail = ErrorKind.STREAM_CUT, "stream ended before [DONE]"
            elif not ex.chunk_ns:
                ex.error, ex.error_detail = ErrorKind.EMPTY, "no output token in the stream"
        return ex

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
