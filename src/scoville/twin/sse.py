"""One streamed OpenAI response of the HTTP twin (SSE frames written as the engine emits
tokens) and the faults it can inject mid-stream. Used by `scoville.twin.http`.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, get_args

from aiohttp import web

from scoville.twin.engine import Seq
from scoville.twin.seq import TOKEN_TEXT

if TYPE_CHECKING:
    from scoville.twin.http import TwinHttpServer

FaultMode = Literal["none", "reset", "5xx", "429", "stall", "malformed", "slow"]


@dataclass(frozen=True, slots=True)
class Faults:
    """Which fault to inject, on which requests (every `every_n`-th), and where."""

    mode: FaultMode = "none"
    every_n: int = 1
    after_tokens: int = 8  # reset / stall / malformed after this many tokens
    stall_s: float = 30.0
    slow_factor: float = 3.0

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Faults:
        unknown = set(d) - set(cls.__dataclass_fields__)
        if unknown or d.get("mode", "none") not in get_args(FaultMode):
            raise ValueError(
                f"fields {sorted(cls.__dataclass_fields__)}; modes {get_args(FaultMode)}"
            )
        f = cls(**d)
        if f.every_n < 1 or f.after_tokens < 0 or f.stall_s < 0 or f.slow_factor <= 0:
            raise ValueError("every_n >= 1, after_tokens >= 0, stall_s >= 0, slow_factor > 0")
        return f


def usage_of(seq: Seq, completion: int) -> dict[str, Any]:
    return {
        "prompt_tokens": seq.prompt_tokens,
        "completion_tokens": completion,
        "total_tokens": seq.prompt_tokens + completion,
        "prompt_tokens_details": {"cached_tokens": seq.cached_tokens},
    }


def error_response(
    status: int, message: str, headers: dict[str, str] | None = None
) -> web.Response:
    kind = "BadRequestError" if status == 400 else "ServerError"
    return web.json_response(
        {"error": {"message": message, "type": kind, "code": status}},
        status=status,
        headers=headers,
    )


class SseStream:
    """One SSE response: frames written as the engine emits tokens, faults applied."""

    def __init__(
        self,
        srv: TwinHttpServer,
        request: web.Request,
        seq: Seq,
        chat: bool,
        fault: Faults,
        body: dict[str, Any],
    ) -> None:
        self.srv, self.request, self.seq, self.chat, self.fault = srv, request, seq, chat, fault
        opts = body.get("stream_options") or {}
        self.include_usage = bool(opts.get("include_usage"))
        self.created = int(time.time())
        self.wall0 = time.monotonic()

    def _frame(self, text: str | None, finish: str | None, role: bool = False) -> bytes:
        seq = self.seq
        if self.chat:
            delta: dict[str, Any] = (
                {"role": "assistant", "content": ""} if role else {"content": text}
            )
            choice: dict[str, Any] = {"index": 0, "delta": delta, "finish_reason": finish}
            obj = "chat.completion.chunk"
        else:
            choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish}
            obj = "text_completion"
        d = {
            "id": f"twin-{seq.rid}",
            "object": obj,
            "created": self.created,
            "model": self.srv.model_name,
            "choices": [choice],
        }
        return b"data: " + json.dumps(d).encode() + b"\n\n"

    async def run(self, queue: asyncio.Queue[tuple[int, int] | None]) -> web.StreamResponse:
        resp = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await resp.prepare(self.request)
        sent = 0
        try:
            if self.chat:
                await resp.write(self._frame(None, None, role=True))
            while (item := await queue.get()) is not None:
                t_ns, k = item
                due = self.fault.mode != "none" and sent == self.fault.after_tokens
                if due and await self._inject(resp):
                    return resp
                if self.fault.mode == "slow":
                    await self._stretch(t_ns)
                sent += k
                finish = "length" if sent >= self.seq.max_tokens else None
                await resp.write(self._frame(TOKEN_TEXT * k, finish))
                self.srv.counters.generation_tokens += k
            if self.include_usage:
                d: dict[str, Any] = {
                    "id": f"twin-{self.seq.rid}",
                    "object": "chat.completion.chunk" if self.chat else "text_completion",
                    "created": self.created,
                    "model": self.srv.model_name,
                    "choices": [],
                    "usage": usage_of(self.seq, sent),
                }
                await resp.write(b"data: " + json.dumps(d).encode() + b"\n\n")
            await resp.write(b"data: [DONE]\n\n")
            self.srv.counters.request_success += 1
            await resp.write_eof()
        except (ConnectionResetError, asyncio.CancelledError):
            pass  # the client went away; the simulated request runs to its end regardless
        return resp

    async def _inject(self, resp: web.StreamResponse) -> bool:
        """Apply a mid-stream fault; True when the response is over."""
        mode = self.fault.mode
        if mode in ("reset", "stall", "malformed"):
            self.srv.counters.faults_injected += 1
        if mode == "reset":
            if self.request.transport is not None:
                self.request.transport.abort()
            return True
        if mode == "stall":
            await asyncio.sleep(self.fault.stall_s)
        elif mode == "malformed":
            await resp.write(b'data: {"choices": [{"text": \n\n')
        return False

    async def _stretch(self, t_ns: int) -> None:
        """Slow node: emit at wall0 + factor x (simulated gap since arrival)."""
        due = self.wall0 + (t_ns - self.seq.arrival_ns) / 1e9 / self.srv.speedup * (
            self.fault.slow_factor
        )
        delay = due - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
