"""Greedy generations with their tokens and top-k logprobs, through the project's SSE client.

Requests go through any `Server` (the OpenAI streaming client for real endpoints) with
temperature 0 and a fixed seed; the raw SSE payloads are collected with the client's
`on_chunk` hook and read for logprobs in both dialects: llama.cpp / chat (`logprobs.content`
entries with `id`, `token`, `top_logprobs`) and legacy completions (`tokens`,
`top_logprobs` as token -> logprob maps, as vLLM sends).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scoville.client.seam import GenerateRequest, Server
from scoville.quality.items import Item
from scoville.records.model import ErrorKind

Token = int | str
TopK = dict[Token, float]


@dataclass(frozen=True, slots=True)
class Generation:
    """One greedy generation. `tokens`/`top` come from the server's logprobs (None when it
    sent none); `error` is set for a failed request (its partial text is kept)."""

    text: str
    tokens: tuple[Token, ...] | None
    top: tuple[TopK, ...] | None
    completion_tokens: int | None
    error: str | None
    latency_ns: int

    @property
    def ok(self) -> bool:
        return self.error is None


def _entries_content(lp: dict[str, Any]) -> list[tuple[Token, TopK]]:
    out: list[tuple[Token, TopK]] = []
    for e in lp.get("content") or ():
        key: Token = int(e["id"]) if "id" in e else str(e.get("token", ""))
        top: TopK = {}
        for t in e.get("top_logprobs") or ():
            tk: Token = int(t["id"]) if "id" in t else str(t.get("token", ""))
            top[tk] = float(t["logprob"])
        out.append((key, top))
    return out


def _entries_legacy(lp: dict[str, Any]) -> list[tuple[Token, TopK]]:
    tokens = lp.get("tokens") or []
    tops = lp.get("top_logprobs") or [None] * len(tokens)
    return [
        (str(tok), {str(k): float(v) for k, v in (top or {}).items()})
        for tok, top in zip(tokens, tops, strict=False)
    ]


def read_logprobs(payloads: Sequence[str]) -> tuple[list[Token], list[TopK]] | None:
    """Tokens and per-position top-k from raw SSE payloads; None when no frame had logprobs."""
    tokens: list[Token] = []
    tops: list[TopK] = []
    seen = False
    for raw in payloads:
        if raw == "[DONE]":
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        for choice in obj.get("choices") or () if isinstance(obj, dict) else ():
            lp = choice.get("logprobs")
            if not isinstance(lp, dict):
                continue
            seen = True
            entries = _entries_content(lp) if "content" in lp else _entries_legacy(lp)
            for tok, top in entries:
                tokens.append(tok)
                tops.append(top)
    return (tokens, tops) if seen else None


def build_request(
    item: Item, request_id: str, seed: int, top_k: int, prompt_ids: Sequence[int] | None = None
) -> GenerateRequest:
    """A greedy completions request for `item`; `prompt_ids` replaces the text prompt with
    token ids (used to continue along another target's tokens)."""
    extra: dict[str, Any] = {"temperature": 0, "seed": seed}
    if top_k > 0:
        extra["logprobs"] = top_k
    if item.stop:
        extra["stop"] = list(item.stop)
    if prompt_ids is not None:
        extra["prompt"] = list(prompt_ids)
    return GenerateRequest(
        request_id=request_id,
        api="completions",
        input_tokens=0,
        max_tokens=item.max_tokens,
        prompt=item.prompt,
        ignore_eos=False,
        extra_body=extra,
    )


async def generate_one(server: Server, request: GenerateRequest) -> Generation:
    """Send one request; never raises for a failed request (the error is in the result)."""
    payloads: list[str] = []
    ex = await server.generate(request, lambda _t, p: payloads.append(p))
    text = "".join(ex.chunk_text)
    # An answer that is empty by the model's choice (stop string first) is an answer.
    empty_answer = ex.error is ErrorKind.EMPTY and ex.finish_reason is not None
    error = None if ex.error is None or empty_answer else f"{ex.error.value}: {ex.error_detail}"
    lp = read_logprobs(payloads)
    return Generation(
        text=text,
        tokens=tuple(lp[0]) if lp else None,
        top=tuple(lp[1]) if lp else None,
        completion_tokens=ex.completion_tokens,
        error=error,
        latency_ns=max(0, ex.end_ns - ex.start_ns),
    )


async def generate_all(
    server: Server,
    requests: Sequence[GenerateRequest],
    concurrency: int = 1,
) -> list[Generation]:
    """All requests with at most `concurrency` in flight; results in request order."""
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(req: GenerateRequest) -> Generation:
        async with gate:
            return await generate_one(server, req)

    return list(await asyncio.gather(*(one(r) for r in requests)))
