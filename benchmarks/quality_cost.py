"""What a quality pass costs (prints figures, no asserts).

Against one server (the embedded llama.cpp server by default, or a URL), the same items run as
reference and candidate: once without logprobs and once with top-5 logprobs and continuations
along the reference's tokens. Prints requests, generated tokens and wall time of each, and the
time the statistics take on 10,000 synthetic paired items.
Run: PYTHONPATH=src python benchmarks/quality_cost.py [ITEMS_PER_TASK] [URL]
"""

from __future__ import annotations

import asyncio
import sys
import time

from scoville.quality.datasets import resolve_tasks
from scoville.quality.items import Item
from scoville.quality.outcome import build_report
from scoville.quality.passes import Endpoint, PassConfig, Passes, run_passes
from scoville.quality.stats import accuracy_verdict


def _endpoint(url: str) -> Endpoint:
    from scoville.client.openai_sse import OpenAIStreamingServer
    from scoville.client.seam import MonotonicClock
    from scoville.targets.http import ServerTokenizer, discover, model_ids

    facts = discover(url, None)
    model = model_ids(facts)[0]
    server = OpenAIStreamingServer(url, model, MonotonicClock())
    return Endpoint(url, server, model, ServerTokenizer(url, model), facts)


async def _pass(url: str, items: list[Item], top_k: int) -> Passes:
    ref, cand = _endpoint(url), _endpoint(url)
    try:
        return await run_passes(ref, cand, items, PassConfig(top_k=top_k))
    finally:
        await ref.server.close()
        await cand.server.close()


def _print(label: str, p: Passes) -> None:
    n_cont = sum(len(s) - 1 for s in p.segments.values())
    tokens = sum(len(g.tokens or ()) for g in [*p.reference, *p.candidate])
    n_req = 2 * len(p.items) + n_cont
    print(
        f"{label:<22} {len(p.items):>5} items {n_req:>5} requests ({n_cont} continuations) "
        f"{tokens:>6} tokens {p.wall_s:>8.1f} s  {p.wall_s / len(p.items):.2f} s/item"
    )


def main(items_per_task: int = 4, url: str | None = None) -> None:
    items = resolve_tasks("copy,kv,arith,json,free", items_per_task)
    server = None
    if url is None:
        from scoville.targets.embedded import EmbeddedConfig, EmbeddedServer

        server = EmbeddedServer(EmbeddedConfig(parallel=1, ctx_per_slot=1024))
        url = server.start()
    try:
        plain = asyncio.run(_pass(url, items, top_k=0))
        _print("no logprobs", plain)
        full = asyncio.run(_pass(url, items, top_k=5))
        _print("top-5 + continuations", full)
        t0 = time.perf_counter()
        doc = build_report(full, {"reference": url, "candidate": url})
        print(f"quality.json assembly: {time.perf_counter() - t0:.3f} s, verdict {doc['verdict']}")
    finally:
        if server is not None:
            server.stop()
    ref = [i % 3 != 0 for i in range(10_000)]
    cand = [i % 3 != 0 or i % 7 == 0 for i in range(10_000)]
    t0 = time.perf_counter()
    v = accuracy_verdict(ref, cand, failed_share=0.0)
    print(f"statistics on 10,000 paired items: {time.perf_counter() - t0:.3f} s ({v.verdict})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 4, sys.argv[2] if len(sys.argv) > 2 else None)
