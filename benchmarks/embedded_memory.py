"""Soak the embedded llama.cpp server with short, fresh prompts and print its memory.

Each request carries a prompt never seen before (as every benchmark prompt is), so a host-side
prompt cache can only grow. Prints the server's resident memory every `--every` requests and
the growth over the second half of the soak (MB per 100 requests).

    python benchmarks/embedded_memory.py --requests 320
    python benchmarks/embedded_memory.py --requests 320 --cache-ram-mib 8192   # llama.cpp's default
"""

from __future__ import annotations

import argparse
import json
import secrets
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from scoville.targets.embedded import MODEL_ALIAS, EmbeddedConfig, EmbeddedServer


def one_request(url: str, max_tokens: int) -> None:
    """One streamed completion of a fresh ~60-token prompt, read to the end."""
    words = " ".join(f"word{secrets.randbelow(10_000)}" for _ in range(20))
    body = json.dumps(
        {
            "model": MODEL_ALIAS,
            "prompt": f"{secrets.token_hex(4)} {words}",
            "max_tokens": max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
    )
    req = urllib.request.Request(
        url + "/v1/completions", body.encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=120) as resp:
        resp.read()


def soak(
    requests: int, every: int, cache_ram_mib: int, streams: int, max_tokens: int
) -> list[tuple[int, float, float]]:
    """(requests done, RSS MB, seconds) after every `every` requests."""
    server = EmbeddedServer(
        EmbeddedConfig(parallel=streams, ctx_per_slot=192, cache_ram_mib=cache_ram_mib)
    )
    url = server.start()
    t0 = time.monotonic()
    samples: list[tuple[int, float, float]] = []
    try:
        with ThreadPoolExecutor(streams) as pool:
            for done in range(every, requests + 1, every):
                list(pool.map(lambda _i: one_request(url, max_tokens), range(every)))
                rss = server.rss_mb()
                samples.append((done, rss[0] if rss else float("nan"), time.monotonic() - t0))
                print(f"{done:5d} requests  RSS {samples[-1][1]:7.1f} MB  {samples[-1][2]:6.1f} s")
    finally:
        server.stop()
    print(f"peak RSS {server.peak_rss_mb:.1f} MB")
    return samples


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--every", type=int, default=32)
    ap.add_argument("--cache-ram-mib", type=int, default=EmbeddedConfig.cache_ram_mib)
    ap.add_argument("--streams", type=int, default=16)
    ap.add_argument("--max-tokens", type=int, default=16)
    a = ap.parse_args()
    s = soak(a.requests, a.every, a.cache_ram_mib, a.streams, a.max_tokens)
    half = s[len(s) // 2 :]
    if len(half) >= 2:
        per_100 = (half[-1][1] - half[0][1]) / (half[-1][0] - half[0][0]) * 100
        print(f"growth over the second half: {per_100:+.1f} MB per 100 requests")


if __name__ == "__main__":
    main()
