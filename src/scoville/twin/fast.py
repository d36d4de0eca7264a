"""The twin's fast path: sweep points simulated directly on the event kernel (no asyncio),
producing the same `RequestRecord`s and `PointWindow`s a real run's driver would.

`sweep` is what `scoville simulate` calls; the records then go through the normal metrics,
bundle and report (`scoville.pipeline.finish_run`). Per-point twin facts (bottleneck shares,
KV occupancy) come back in `PointResult.extras` for the summary.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from scoville.client.seam import GenerateRequest
from scoville.records.model import ErrorKind, PointWindow, RequestRecord
from scoville.twin.cluster import Cluster, TwinConfig
from scoville.twin.engine import Seq
from scoville.twin.kernel import EventKernel


@dataclass(frozen=True, slots=True)
class PointResult:
    records: list[RequestRecord]
    window: PointWindow
    extras: dict[str, Any]
    end_ns: int  # when the last request of the point (warmup included) ended


def fixed_requests(
    n: int,
    isl_tokens: int,
    osl_tokens: int,
    tag: str = "",
    range_ratio: float = 1.0,
    seed: int = 0,
) -> list[GenerateRequest]:
    """`n` requests (the twin needs lengths, not text). With `range_ratio` < 1 each length is
    a uniform integer in [ratio * L, L] (the InferenceX convention), seeded."""
    if range_ratio >= 1.0:
        return [
            GenerateRequest(f"{tag}{i}", "completions", isl_tokens, osl_tokens, prompt="")
            for i in range(n)
        ]
    rng = random.Random(seed)

    def draw(length: int) -> int:
        return rng.randint(max(1, int(range_ratio * length)), length)

    return [
        GenerateRequest(f"{tag}{i}", "completions", draw(isl_tokens), draw(osl_tokens), prompt="")
        for i in range(n)
    ]


def _seq(i: int, req: GenerateRequest, t_ns: int, on_done: Callable[[Seq], None]) -> Seq:
    session = req.extra_body.get("session_id") if req.extra_body else None
    return Seq(
        rid=i,
        arrival_ns=t_ns,
        prompt_tokens=req.input_tokens,
        max_tokens=req.max_tokens,
        prefix_hashes=req.prefix_hashes,
        prefix_block_tokens=req.block_size_tokens,
        session=str(session) if session is not None else None,
        on_done=on_done,
    )


def seq_record(
    seq: Seq,
    req: GenerateRequest,
    point_id: str,
    phase: str,
    tokens_per_chunk: int = 1,
    ones: dict[int, tuple[int, ...]] | None = None,
) -> RequestRecord:
    """The record a client would have written for this sequence. `ones` (length -> a tuple
    of 1s) lets a whole point share its chunk_tokens tuples instead of one per record."""
    if seq.error is not None:
        return RequestRecord(
            request_id=req.request_id,
            point_id=point_id,
            phase=phase,  # type: ignore[arg-type]
            start_ns=seq.arrival_ns,
            end_ns=seq.end_ns,
            input_tokens=req.input_tokens,
            expected_input_tokens=req.input_tokens,
            expected_output_tokens=req.max_tokens,
            error=ErrorKind.CONTEXT_OVERFLOW,
            http_status=400,
            error_detail=f"twin rejected the request ({seq.error})",
        )
    times = seq.token_times()
    if tokens_per_chunk > 1:
        m = tokens_per_chunk
        chunk_ns = tuple(times[min(i + m, len(times)) - 1] for i in range(0, len(times), m))
        chunk_tokens = tuple(min(m, len(times) - i) for i in range(0, len(times), m))
    else:
        chunk_ns = tuple(times)
        cache = ones if ones is not None else {}
        chunk_tokens = cache.get(len(times)) or cache.setdefault(len(times), (1,) * len(times))
    return RequestRecord(
        request_id=req.request_id,
        point_id=point_id,
        phase=phase,  # type: ignore[arg-type]
        start_ns=seq.arrival_ns,
        end_ns=seq.end_ns,
        chunk_ns=chunk_ns,
        chunk_tokens=chunk_tokens,
        input_tokens=req.input_tokens,
        output_tokens=len(times),
        expected_input_tokens=req.input_tokens,
        expected_output_tokens=req.max_tokens,
        cached_tokens=seq.cached_tokens,
        token_source="usage",
        finish_reason="length",
        tags=({"session_id": seq.session} if seq.session is not None else {}),
    )


def run_point(
    cfg: TwinConfig,
    requests: Sequence[GenerateRequest],
    point_id: str,
    *,
    concurrency: int | None = None,
    arrival_ns: Sequence[int] | None = None,
    warmup: int = 0,
    start_ns: int = 0,
    tokens_per_chunk: int = 1,
) -> PointResult:
    """One sweep point on a fresh deployment: closed loop with `concurrency` lanes (the next
    request is sent when one ends), or open loop at `arrival_ns` (offsets from `start_ns`).
    The first `warmup` requests are sent but not measured."""
    if (concurrency is None) == (arrival_ns is None):
        raise ValueError("give exactly one of concurrency or arrival_ns")
    kernel = EventKernel(start_ns)
    cluster = Cluster(cfg, kernel)
    done: list[Seq] = []
    pending = iter(enumerate(requests))

    def send(t_ns: int) -> None:
        nxt = next(pending, None)
        if nxt is not None:
            cluster.submit(_seq(nxt[0], nxt[1], t_ns, finished), t_ns)

    def finished(seq: Seq) -> None:
        done.append(seq)
        if concurrency is not None:
            kernel.schedule(seq.end_ns, send)

    if concurrency is not None:
        for _ in range(min(concurrency, len(requests))):
            kernel.schedule(start_ns, send)
    else:
        assert arrival_ns is not None
        for t in arrival_ns:
            kernel.schedule(start_ns + t, send)
    end_ns = kernel.run()
    return _result(
        cfg,
        cluster,
        requests,
        done,
        point_id,
        warmup,
        concurrency,
        arrival_ns,
        tokens_per_chunk,
        end_ns,
    )


def _result(
    cfg: TwinConfig,
    cluster: Cluster,
    requests: Sequence[GenerateRequest],
    done: list[Seq],
    point_id: str,
    warmup: int,
    concurrency: int | None,
    arrival_ns: Sequence[int] | None,
    tokens_per_chunk: int,
    end_ns: int,
) -> PointResult:
    done.sort(key=lambda s: s.rid)
    ones: dict[int, tuple[int, ...]] = {}
    records = [
        seq_record(
            s,
            requests[s.rid],
            point_id,
            "warmup" if s.rid < warmup else "measure",
            tokens_per_chunk,
            ones,
        )
        for s in done
    ]
    measured = [r for r in records if r.phase == "measure"]
    start = min((r.start_ns for r in measured), default=end_ns)
    stop = max((r.end_ns for r in measured), default=end_ns)
    if concurrency is not None:
        mode, level = "concurrency", float(concurrency)
    else:
        span_s = (max(arrival_ns or [0]) - min(arrival_ns or [0])) / 1e9
        mode, level = "rate", (len(requests) - 1) / span_s if span_s > 0 else 0.0
    window = PointWindow(point_id, start, stop, mode, level, len(measured))  # type: ignore[arg-type]
    extras = cluster.point_extras()
    extras["n_accelerators"] = cfg.n_accelerators
    return PointResult(records, window, extras, end_ns)


def sweep(
    cfg: TwinConfig,
    isl_tokens: int,
    osl_tokens: int,
    concurrencies: Sequence[int],
    requests_per_point: int | None = None,
    warmup_per_point: int | None = None,
    tokens_per_chunk: int = 1,
    range_ratio: float = 1.0,
    seed: int = 0,
) -> list[PointResult]:
    """Closed-loop points one after another on one timeline (each on a fresh deployment).
    Defaults follow the spec: 10 x concurrency measured, 2 x concurrency warmup requests."""
    out: list[PointResult] = []
    t_ns = 0
    for c in concurrencies:
        n = requests_per_point or 10 * c
        w = 2 * c if warmup_per_point is None else warmup_per_point
        reqs = fixed_requests(n + w, isl_tokens, osl_tokens, f"c{c}-", range_ratio, seed + c)
        res = run_point(
            cfg,
            reqs,
            f"c{c}",
            concurrency=c,
            warmup=w,
            start_ns=t_ns,
            tokens_per_chunk=tokens_per_chunk,
        )
        out.append(res)
        t_ns = res.end_ns + 1_000_000_000  # a second between points, as a real sweep idles
    return out
