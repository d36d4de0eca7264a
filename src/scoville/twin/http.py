"""The twin over HTTP: an OpenAI-compatible streaming server on 127.0.0.1 that emits tokens at
the simulated times (wall clock, optionally compressed by `speedup`), with vLLM-named
Prometheus metrics and switchable faults. Real clients (scoville's own, or any other) and
the reliability tests talk to it as to a real server.

Faults (`Faults.mode`): reset (connection dropped mid-stream), 5xx, 429, stall (no bytes for
`stall_s` mid-stream), malformed (a broken SSE frame mid-stream), slow (token gaps stretched
by `slow_factor`). Set per server, at run time with POST /admin/faults, or per request with
the header `X-Scoville-Fault: MODE` (optionally `X-Scoville-Fault-After: TOKENS`).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from dataclasses import asdict, dataclass, replace
from typing import Any, get_args

from aiohttp import web

from scoville.twin.clock import LoopKernel
from scoville.twin.cluster import Cluster, TwinConfig
from scoville.twin.engine import Seq
from scoville.twin.seq import TOKEN_TEXT
from scoville.twin.sse import FaultMode, Faults, SseStream, error_response, usage_of
from scoville.workload.tokenizers import Tokenizer, local_tokenizer


@dataclass(slots=True)
class _Counters:
    prompt_tokens: int = 0
    generation_tokens: int = 0
    request_success: int = 0
    faults_injected: int = 0


class TwinHttpServer:
    """`async with TwinHttpServer(cfg) as url:` serves the twin at `url` (127.0.0.1)."""

    def __init__(
        self,
        cfg: TwinConfig,
        *,
        speedup: float = 1.0,
        host: str = "127.0.0.1",
        port: int = 0,
        faults: Faults | None = None,
        model_name: str | None = None,
        tokenizer: Tokenizer | None = None,
    ) -> None:
        if speedup <= 0:
            raise ValueError("speedup must be > 0")
        self.cfg, self.speedup, self.host, self.port = cfg, speedup, host, port
        self.faults = faults or Faults()
        self.model_name = model_name or cfg.model.name
        self.tokenizer = (
            tokenizer
            or local_tokenizer("auto", cfg.model.hf_repo)
            or (local_tokenizer("tiktoken:o200k_base"))
        )
        self.kernel = LoopKernel(None, speedup)
        self.cluster = Cluster(cfg, self.kernel)
        self.counters = _Counters()
        self._ids = itertools.count()
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def __aenter__(self) -> str:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> str:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/completions", self._completions)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/health", self._health)
        app.router.add_post("/tokenize", self._tokenize)
        app.router.add_post("/detokenize", self._detokenize)
        app.router.add_get("/admin/faults", self._get_faults)
        app.router.add_post("/admin/faults", self._set_faults)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        port = self.port
        for addr in self._runner.addresses:  # the bound (host, port), port 0 resolved
            port = int(addr[1])
        self.url = f"http://{self.host}:{port}"
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # -- plain endpoints -----------------------------------------------------------------------

    async def _health(self, _: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def _models(self, _: web.Request) -> web.Response:
        return web.json_response(
            {
                "object": "list",
                "data": [
                    {
                        "id": self.model_name,
                        "object": "model",
                        "owned_by": "scoville-twin",
                        "max_model_len": self.cfg.model.max_position_embeddings,
                    }
                ],
            }
        )

    async def _tokenize(self, request: web.Request) -> web.Response:
        body = await request.json()
        ids = self._encode(body)
        return web.json_response(
            {
                "tokens": ids,
                "count": len(ids),
                "max_model_len": self.cfg.model.max_position_embeddings,
            }
        )

    async def _detokenize(self, request: web.Request) -> web.Response:
        body = await request.json()
        ids = [int(t) for t in body.get("tokens", [])]
        text = self.tokenizer.decode(ids) if self.tokenizer is not None else ""
        return web.json_response({"prompt": text})

    async def _get_faults(self, _: web.Request) -> web.Response:
        return web.json_response(asdict(self.faults))

    async def _set_faults(self, request: web.Request) -> web.Response:
        try:
            self.faults = Faults.from_json(await request.json())
        except (ValueError, TypeError) as e:
            return web.json_response({"error": {"message": str(e)}}, status=400)
        return web.json_response(asdict(self.faults))

    async def _metrics(self, _: web.Request) -> web.Response:
        reps = self.cluster.replicas
        running = sum(len(r.running) + len(r.prefilling) for r in reps)
        waiting = sum(len(r.waiting) + len(r.inbox) for r in reps)
        used = sum(r.kv_used for r in reps)
        cap = sum(r.kv_capacity for r in reps)
        c = self.counters
        rows = [
            ("vllm:num_requests_running", "gauge", running),
            ("vllm:num_requests_waiting", "gauge", waiting),
            ("vllm:gpu_cache_usage_perc", "gauge", used / cap if cap else 0.0),
            ("vllm:kv_cache_usage_perc", "gauge", used / cap if cap else 0.0),
            (
                "vllm:prefix_cache_queries_total",
                "counter",
                sum(r.prefix.query_tokens for r in reps),
            ),
            ("vllm:prefix_cache_hits_total", "counter", sum(r.prefix.hit_tokens for r in reps)),
            ("vllm:prompt_tokens_total", "counter", c.prompt_tokens),
            ("vllm:generation_tokens_total", "counter", c.generation_tokens),
            ("vllm:num_preemptions_total", "counter", sum(r.stats.preemptions for r in reps)),
            ("vllm:request_success_total", "counter", c.request_success),
            ("scoville_twin:faults_injected_total", "counter", c.faults_injected),
        ]
        label = f'{{model_name="{self.model_name}"}}'
        lines = []
        for name, kind, value in rows:
            lines += [
                f"# HELP {name} scoville twin",
                f"# TYPE {name} {kind}",
                f"{name}{label} {value}",
            ]
        return web.Response(text="\n".join(lines) + "\n", content_type="text/plain")

    # -- generation ----------------------------------------------------------------------------

    def _encode(self, body: dict[str, Any]) -> list[int]:
        """Prompt token ids: a list of ints is taken as ids (OpenAI allows it; no tokenizer
        cost), text is tokenized (about 1.5 ms per 1k tokens with tiktoken o200k)."""
        if "content" in body and "prompt" not in body:  # llama.cpp dialect of /tokenize
            body = {"prompt": body["content"]}
        if "messages" in body:
            text = "".join(str(m.get("content", "")) for m in body["messages"])
        else:
            prompt = body.get("prompt", "")
            if isinstance(prompt, list) and all(isinstance(x, int) for x in prompt):
                return list(prompt)
            text = prompt if isinstance(prompt, str) else "".join(map(str, prompt))
        if self.tokenizer is None:
            return list(range(len(text.split())))
        return self.tokenizer.encode(text)

    def _fault_for(self, request: web.Request, n: int) -> Faults:
        mode = request.headers.get("X-Scoville-Fault")
        if mode is not None:
            chosen: FaultMode = mode if mode in get_args(FaultMode) else "none"  # type: ignore[assignment]
            f = replace(self.faults, mode=chosen, every_n=1)
            after = request.headers.get("X-Scoville-Fault-After")
            return replace(f, after_tokens=int(after)) if after and after.isdigit() else f
        f = self.faults
        return f if f.mode != "none" and n % f.every_n == 0 else Faults()

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        return await self._generate(request, chat=False)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        return await self._generate(request, chat=True)

    async def _generate(self, request: web.Request, chat: bool) -> web.StreamResponse:
        n = next(self._ids)
        t_arrival_ns = self.kernel.now_ns()  # before parsing and tokenizing: their CPU time
        try:  # is the twin's, not the simulated server's
            body = await request.json()
        except json.JSONDecodeError:
            return error_response(400, "request body is not JSON")
        fault = self._fault_for(request, n + 1)
        if fault.mode in ("5xx", "429"):
            self.counters.faults_injected += 1
            status = 500 if fault.mode == "5xx" else 429
            return error_response(status, f"injected fault {fault.mode}", {"Retry-After": "1"})
        ids = self._encode(body)
        max_tokens = int(body.get("max_tokens") or body.get("max_completion_tokens") or 16)
        seq = Seq(
            rid=n,
            arrival_ns=t_arrival_ns,
            prompt_tokens=max(len(ids), 1),
            max_tokens=max(max_tokens, 1),
            prefix_hashes=self._block_hashes(ids),
            prefix_block_tokens=self.cfg.engine.block_size_tokens,
            session=_session(body),
        )
        queue: asyncio.Queue[tuple[int, int] | None] = asyncio.Queue()
        seq.on_token = lambda t_ns, k: queue.put_nowait((t_ns, k))
        seq.on_done = lambda _s: queue.put_nowait(None)
        self.cluster.submit(seq, seq.arrival_ns)
        if seq.error == "max_num_tokens":  # TensorRT-LLM's words for it
            return error_response(
                400,
                f"The sum of prompt length ({seq.prompt_tokens}), query length (0) should not "
                f"exceed max_num_tokens ({self.cluster.entry[0].prompt_limit():.0f})",
            )
        if seq.error is not None:
            return error_response(
                400,
                f"This model's maximum context length or KV cache is exceeded "
                f"({seq.prompt_tokens} + {seq.max_tokens} tokens; {seq.error})",
            )
        self.counters.prompt_tokens += seq.prompt_tokens
        if not body.get("stream"):
            return await self._whole(seq, queue, chat)
        stream = SseStream(self, request, seq, chat, fault, body)
        return await stream.run(queue)

    def _block_hashes(self, ids: list[int]) -> tuple[int, ...]:
        """Chained hashes of full blocks (vLLM style): equal prefixes give equal hashes."""
        if not self.cfg.engine.prefix_caching:
            return ()
        bs = self.cfg.engine.block_size_tokens
        out: list[int] = []
        h = 0
        for i in range(0, len(ids) - bs + 1, bs):
            h = hash((h, tuple(ids[i : i + bs])))
            out.append(h)
        return tuple(out)

    async def _whole(
        self, seq: Seq, queue: asyncio.Queue[tuple[int, int] | None], chat: bool
    ) -> web.Response:
        k = 0
        while (item := await queue.get()) is not None:
            k += item[1]
        self.counters.generation_tokens += k
        self.counters.request_success += 1
        text = TOKEN_TEXT * k
        choice: dict[str, Any] = (
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "length",
            }
            if chat
            else {"index": 0, "text": text, "finish_reason": "length"}
        )
        return web.json_response(
            {
                "id": f"twin-{seq.rid}",
                "object": "chat.completion" if chat else "text_completion",
                "created": int(time.time()),
                "model": self.model_name,
                "choices": [choice],
                "usage": usage_of(seq, k),
            }
        )


def _session(body: dict[str, Any]) -> str | None:
    sid = body.get("session_id") or (body.get("extra_body") or {}).get("session_id")
    return str(sid) if sid is not None else None
