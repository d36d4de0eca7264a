"""A small fake `Server` for lane-driver tests: sleeps through the clock, caches prefixes.

TTFT = `base_s + uncached_tokens * prefill_s_per_token`, then one frame per output token every
`tpot_s`. Its prefix cache is unlimited and keyed by `GenerateRequest.prefix_hashes`; it reports
the cached tokens in usage like a real server. It counts requests in flight.
"""

from __future__ import annotations

from scoville.client.seam import ChunkCallback, Clock, Exchange, GenerateRequest
from scoville.records.model import ErrorKind


class FakeAgentServer:
    def __init__(
        self,
        clock: Clock,
        base_s: float = 0.005,
        prefill_s_per_token: float = 0.0,
        tpot_s: float = 0.002,
        window_tokens: int | None = None,
    ) -> None:
        self.clock = clock
        self.base_s, self.prefill_s, self.tpot_s = base_s, prefill_s_per_token, tpot_s
        self.window_tokens = window_tokens
        self.seen: set[int] = set()
        self.in_flight = 0
        self.max_in_flight = 0
        self.requests: list[GenerateRequest] = []

    async def generate(
        self, request: GenerateRequest, on_chunk: ChunkCallback | None = None
    ) -> Exchange:
        start = self.clock.now_ns()
        self.requests.append(request)
        if self.window_tokens is not None and (
            request.input_tokens + request.max_tokens > self.window_tokens
        ):
            return Exchange(
                start_ns=start,
                end_ns=start,
                error=ErrorKind.CONTEXT_OVERFLOW,
                error_detail="too long",
                http_status=400,
            )
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            hit = 0
            for h in request.prefix_hashes:
                if h not in self.seen:
                    break
                hit += 1
            self.seen.update(request.prefix_hashes)
            cached = min(hit * request.block_size_tokens, request.input_tokens)
            t = start + int((self.base_s + (request.input_tokens - cached) * self.prefill_s) * 1e9)
            ex = Exchange(
                start_ns=start,
                prompt_tokens=request.input_tokens,
                completion_tokens=request.max_tokens,
                cached_tokens=cached,
                finish_reason="length",
            )
            for _ in range(request.max_tokens):
                await self.clock.sleep_until_ns(t)
                now = self.clock.now_ns()
                ex.chunk_ns.append(now)
                ex.chunk_text.append(" tok")
                if on_chunk is not None:
                    on_chunk(now, " tok")
                t += int(self.tpot_s * 1e9)
            ex.end_ns = self.clock.now_ns()
            return ex
        finally:
            self.in_flight -= 1

    async def close(self) -> None:
        pass
