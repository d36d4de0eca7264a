"""The twin behind the client's `Server` seam: each `generate` becomes a sequence in the
simulated cluster, and its frames arrive at the simulated token times on the run's clock.

Used with `VirtualTimeLoop` + `VirtualClock` (scoville run --target twin:...), the driver,
records, metrics and report are exactly those of a real run, in simulated time.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from typing import Any

from scoville.client.seam import ChunkCallback, Exchange, GenerateRequest
from scoville.records.model import ErrorKind, PointWindow
from scoville.twin.cluster import Cluster, TwinConfig
from scoville.twin.engine import Seq
from scoville.twin.kernel import Kernel
from scoville.twin.power import window_power_extras
from scoville.twin.seq import TOKEN_TEXT


def make_seq(rid: int, request: GenerateRequest, t_ns: int) -> Seq:
    """A twin sequence for a client request (lengths, prefix blocks, session id)."""
    session = request.extra_body.get("session_id") if request.extra_body else None
    return Seq(
        rid=rid,
        arrival_ns=t_ns,
        prompt_tokens=max(request.input_tokens, 1),
        max_tokens=max(request.max_tokens, 1),  # the twin has no EOS: it always runs to max
        prefix_hashes=request.prefix_hashes,
        prefix_block_tokens=request.block_size_tokens,
        session=str(session) if session is not None else None,
    )


class TwinServer:
    """`Server` over a simulated cluster. Never raises for a request: a request the twin
    rejects (context or KV overflow) comes back as an `Exchange` with an error kind."""

    def __init__(self, cfg: TwinConfig, kernel: Kernel) -> None:
        self.cfg = cfg
        self.kernel = kernel
        self.cluster = Cluster(cfg, kernel)
        for r in self.cluster.replicas:
            r.step_log = []
        self._ids = itertools.count()

    async def generate(
        self, request: GenerateRequest, on_chunk: ChunkCallback | None = None
    ) -> Exchange:
        loop = asyncio.get_running_loop()
        t0 = self.kernel.now_ns()
        done: asyncio.Future[Seq] = loop.create_future()
        seq = make_seq(next(self._ids), request, t0)
        seq.on_done = lambda s: _resolve(done, s)
        if on_chunk is not None:
            seq.on_token = lambda t_ns, n: on_chunk(t_ns, TOKEN_TEXT * n)
        self.cluster.submit(seq, t0)
        try:
            await done
        except asyncio.CancelledError:
            return Exchange(start_ns=t0, end_ns=self.kernel.now_ns(), error=ErrorKind.CANCELLED)
        return exchange_of(seq, request)

    async def close(self) -> None:
        return None

    def point_extras(self, window: PointWindow) -> dict[str, Any]:
        """Bottleneck shares and KV occupancy of the steps that ended inside `window`
        (the same fields as the fast path's `PointResult.extras`)."""
        parts = [0.0, 0.0, 0.0, 0.0]
        occ_s = occ_max = 0.0
        for r in self.cluster.replicas:
            for t_end, c, m, comm, o, occ in r.step_log or ():
                if window.start_ns <= t_end <= window.end_ns:
                    for i, v in enumerate((c, m, comm, o)):
                        parts[i] += v
                    occ_s += occ * (c + m + comm + o)
                    occ_max = max(occ_max, occ)
        busy = sum(parts)
        names = ("compute", "memory", "comm", "overhead")
        shares = {n: (v / busy if busy > 0 else 0.0) for n, v in zip(names, parts, strict=True)}
        return {
            "bottleneck": max(shares, key=lambda k: shares[k]) if busy > 0 else "idle",
            **{f"busy_share_{k}": v for k, v in shares.items()},
            "kv_occupancy_mean": occ_s / busy if busy > 0 else 0.0,
            "kv_occupancy_max": occ_max,
            "n_accelerators": self.cfg.n_accelerators,
            **window_power_extras(
                self.cluster.replicas, window.start_ns, window.end_ns, self.cfg.hardware.tdp_w
            ),
        }


def twin_point_extras(server: object, windows: Sequence[PointWindow]) -> dict[str, dict[str, Any]]:
    """Per-point twin fields for `summarize_run(extra=...)`; empty for non-twin servers."""
    if not isinstance(server, TwinServer):
        return {}
    return {w.point_id: server.point_extras(w) for w in windows}


def _resolve(fut: asyncio.Future[Seq], seq: Seq) -> None:
    if not fut.done():
        fut.set_result(seq)


def exchange_of(
    seq: Seq, request: GenerateRequest, ones: dict[int, tuple[int, ...]] | None = None
) -> Exchange:
    """What a client would have observed for a finished sequence. With `ones` (length -> a
    tuple of 1s, shared by a whole point) the frames carry counts only, no text: the fast
    executor's compact form."""
    if seq.error is not None:
        over_budget = seq.error == "max_num_tokens"  # not the window: the deployment's budget
        return Exchange(
            start_ns=seq.arrival_ns,
            end_ns=seq.end_ns,
            error=ErrorKind.HTTP_4XX if over_budget else ErrorKind.CONTEXT_OVERFLOW,
            error_detail=f"twin rejected the request ({seq.error})",
            http_status=400,
        )
    times = seq.token_times()
    n = len(times)
    if ones is None:
        text, counts = [TOKEN_TEXT] * n, (1,) * n
    else:
        text, counts = [], ones.get(n) or ones.setdefault(n, (1,) * n)
    return Exchange(
        start_ns=seq.arrival_ns,
        end_ns=seq.end_ns,
        chunk_ns=times,
        chunk_text=text,
        chunk_tokens=counts,
        prompt_tokens=request.input_tokens,
        completion_tokens=len(times),
        cached_tokens=seq.cached_tokens,
        finish_reason="length",
        http_status=200,
    )
