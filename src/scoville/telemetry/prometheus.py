"""Server metrics: parse Prometheus text exposition and map vLLM / SGLang / llama.cpp names.

`parse_exposition` turns a /metrics body into samples; `extract_canonical` sums each known
metric over its label sets and names it in one vocabulary (`CANONICAL`), so a report can plot
running/waiting requests, KV usage, prefix-cache hits and generation throughput for any server.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

# canonical name -> candidates in priority order; a candidate is a tuple of exposed names
# whose sums are added (llama.cpp's prefix-cache queries = uncached + cached prompt tokens).
CANONICAL: dict[str, tuple[tuple[str, ...], ...]] = {
    "running_requests": (
        ("vllm:num_requests_running",),
        ("sglang:num_running_reqs",),
        ("llamacpp:requests_processing",),
    ),
    "waiting_requests": (
        ("vllm:num_requests_waiting",),
        ("sglang:num_queue_reqs",),
        ("llamacpp:requests_deferred",),
    ),
    "kv_cache_usage_ratio": (
        ("vllm:kv_cache_usage_perc",),  # v1: a 0-1 fraction despite the name
        ("vllm:gpu_cache_usage_perc",),  # v0
        ("sglang:token_usage",),
        ("llamacpp:kv_cache_usage_ratio",),
    ),
    "prefix_cache_hits_total": (
        ("vllm:prefix_cache_hits_total",),
        ("vllm:gpu_prefix_cache_hits_total",),
        ("llamacpp:prompt_tokens_cached_total",),
    ),
    "prefix_cache_queries_total": (
        ("vllm:prefix_cache_queries_total",),
        ("vllm:gpu_prefix_cache_queries_total",),
        ("llamacpp:prompt_tokens_total", "llamacpp:prompt_tokens_cached_total"),
    ),
    "prefix_cache_hit_ratio": (("sglang:cache_hit_rate",),),
    "prompt_tokens_total": (
        ("vllm:prompt_tokens_total",),
        ("sglang:prompt_tokens_total",),
        ("llamacpp:prompt_tokens_total",),
    ),
    "generation_tokens_total": (
        ("vllm:generation_tokens_total",),
        ("sglang:generation_tokens_total",),
        ("llamacpp:tokens_predicted_total",),
    ),
    "generation_tok_per_s": (  # the server's own gauge, where it has one
        ("sglang:gen_throughput",),
        ("llamacpp:predicted_tokens_seconds",),
    ),
}
COUNTERS = frozenset(
    {
        "prefix_cache_hits_total",
        "prefix_cache_queries_total",
        "prompt_tokens_total",
        "generation_tokens_total",
    }
)

_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_LINE = re.compile(rf"^(?P<name>{_NAME})(?:\{{(?P<labels>.*)\}})?\s+(?P<value>\S+)(?:\s+\S+)?$")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?')
_UNESCAPE = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}


@dataclass(frozen=True, slots=True)
class PromSample:
    name: str
    labels: tuple[tuple[str, str], ...]
    value: float


def _parse_value(text: str) -> float:
    low = text.lower()
    if low in ("+inf", "inf"):
        return math.inf
    if low == "-inf":
        return -math.inf
    return float(text)  # "NaN" parses too


def _parse_labels(text: str) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = _LABEL.match(text, pos)
        if m is None:
            if text[pos:].strip(" ,"):
                raise ValueError(f"bad label set {text!r}")
            break
        value = re.sub(r"\\[\\\"n]", lambda x: _UNESCAPE[x.group(0)], m.group(2))
        out.append((m.group(1), value))
        pos = m.end()
    return tuple(out)


def parse_exposition(text: str) -> list[PromSample]:
    """Samples of a Prometheus text-format body (version 0.0.4; OpenMetrics' `# EOF` is a
    comment). Lines that do not parse are skipped: a scrape never fails on one odd line."""
    out: list[PromSample] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = _LINE.match(line)
        if m is None:
            continue
        try:
            labels = _parse_labels(m.group("labels") or "")
            value = _parse_value(m.group("value"))
        except ValueError:
            continue
        out.append(PromSample(m.group("name"), labels, value))
    return out


def extract_canonical(samples: list[PromSample]) -> dict[str, float]:
    """Canonical name -> value (summed over label sets, e.g. over engines or models), for
    every canonical metric whose first complete candidate is present."""
    sums: dict[str, float] = {}
    for s in samples:
        if math.isfinite(s.value):
            sums[s.name] = sums.get(s.name, 0.0) + s.value
    out: dict[str, float] = {}
    for canon, candidates in CANONICAL.items():
        for names in candidates:
            if all(n in sums for n in names):
                out[canon] = sum(sums[n] for n in names)
                break
    return out
