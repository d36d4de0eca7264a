"""The target registry: `spec.target.url` -> an opened `Target`.

An explicit dict of URL schemes; the only place in the core that knows the twin exists.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from scoville.errors import TargetError
from scoville.quality.inrun import context_tokens, items_of
from scoville.spec.model import AcceleratorSpec, BenchmarkSpec
from scoville.targets.base import Target
from scoville.targets.embedded import (
    MODEL_ALIAS,
    EmbeddedConfig,
    EmbeddedServer,
    server_threads,
    with_url_options,
)
from scoville.targets.http import open_http_target


def open_embedded(spec: BenchmarkSpec) -> Target:
    """Start llama.cpp + SmolLM2 sized for the spec (slots = the largest concurrency; a
    quality pass adds its concurrency and the context its longest item needs)."""
    open_loop = 8 if spec.load.request_rates_per_s else 1  # rate points need spare slots
    quality = items_of(spec)
    q_slots = spec.quality.concurrency if quality else 0
    slots = max([*spec.load.concurrency, spec.load.max_concurrency or 0, open_loop, q_slots])
    ctx = max(spec.shape.isl_tokens + spec.shape.osl_tokens + 64, context_tokens(quality))
    cfg = EmbeddedConfig(parallel=slots, ctx_per_slot=ctx)
    server = EmbeddedServer(with_url_options(cfg, spec.target.url))  # 'embedded?kv=q4_0'
    url = server.start()
    try:
        target = open_http_target(spec, url, kind="embedded")
    except Exception:
        server.stop()
        raise
    facts: dict[str, object] = {
        "server": "llama.cpp (xllamacpp)",
        "slots": server.cfg.parallel,
        "ctx_per_slot": ctx,
        "threads": server_threads(server.cfg.threads),
        "cache_ram_mib": server.cfg.cache_ram_mib,
        "url": url,
        "kv_cache": server.cfg.kv_cache,
        "speculative": server.cfg.speculative,
    }
    target.info["embedded"] = facts

    def stop() -> None:
        server.stop()  # the log in the temp directory goes with it
        facts["peak_rss_mb"] = server.peak_rss_mb  # written to the manifest after the run

    target.on_close.append(stop)
    # Facts the spec may leave "unknown": used as labels, and said so in the summary notes.
    return replace(
        target, labels={"precision": "Q4_1", "framework": "llama.cpp", "model": MODEL_ALIAS}
    )


def context_window_tokens(url: str) -> int | None:
    """The context window of the target `url` names, when known without asking it: the twin
    model's `max_position_embeddings`; None for anything else (an endpoint must be told)."""
    if not url.startswith("twin:"):
        return None
    from scoville.twin.target import parse_twin_url

    return int(parse_twin_url(url).model.max_position_embeddings)


def _open_http(spec: BenchmarkSpec) -> Target:
    return open_http_target(spec, spec.target.url)


def _open_twin(spec: BenchmarkSpec) -> Target:
    from scoville.twin.target import open_twin_target

    target: Target = open_twin_target(spec.target.url, spec)
    twin = target.info.get("twin", {})
    return replace(
        target,
        labels=target.info.get("label_defaults", {}),
        accelerators=AcceleratorSpec(kind=twin["hardware"], count=twin.get("n_accelerators", 1)),
        wants_text=False,  # the twin simulates token counts; it never reads the text
        has_telemetry=False,  # virtual time: nothing here measures its power or metrics
    )


OPENERS: dict[str, Callable[[BenchmarkSpec], Target]] = {
    "embedded": open_embedded,
    "http": _open_http,
    "https": _open_http,
    "twin": _open_twin,
}


def open_target(spec: BenchmarkSpec) -> Target:
    url = spec.target.url
    scheme = "embedded" if url.partition("?")[0] == "embedded" else url.split(":", 1)[0]
    opener = OPENERS.get(scheme)
    if opener is None:
        raise TargetError(
            f"Unknown target '{url}'. Use 'embedded', 'http://HOST:PORT' "
            "(any OpenAI-compatible server) or 'twin:HARDWARE/MODEL'."
        )
    return opener(spec)
