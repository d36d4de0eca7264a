"""Default matrices per target kind, declared once: `defaults_for(kind)` is the partial spec
(a nested dict) that sits under a spec file and the command line for that kind of target.

`run`, `spec` and `simulate` all read it; the model defaults in spec/model.py hold for a
remote endpoint (kind "http"), which has no entry of its own.
"""

from __future__ import annotations

import copy
from typing import Any, Literal

TargetKind = Literal["embedded", "http", "twin"]

# The embedded matrix, sized to finish in about two minutes on 2 CPU cores: llama.cpp is
# compute-bound there, so long prompts make every point prefill-bound and the frontier flat;
# 64 in / 64 out shows the batching trade-off. Concurrency 2 gains nothing over 1 (measured:
# TPOT doubles), so the sweep skips it. 16 measured requests a point support the medians of
# per-request metrics (TTFT, E2E) and, with 63 gaps each, the p99 of ITL (1,008 gaps); not the
# p99 of per-request metrics (docs/DESIGN.md). Two warmup requests a point absorb llama.cpp's
# first-batch set-up without re-running a whole wave at 16 streams.
_EMBEDDED: dict[str, Any] = {
    "name": "embedded-smollm2",
    "shape": {"isl_tokens": 64, "osl_tokens": 64},
    "load": {"concurrency": [1, 4, 8, 16], "requests_per_point": 16, "warmup_requests": 2},
}

# The twin predicts a datacentre accelerator in virtual time, so a sweep costs seconds: the
# matrix follows InferenceX's long-input shape (8k/1k) up to 256 requests in flight.
_TWIN: dict[str, Any] = {
    "shape": {"isl_tokens": 8192, "osl_tokens": 1024},
    "load": {"concurrency": [1, 2, 4, 8, 16, 32, 64, 128, 256]},
}

DEFAULTS_BY_KIND: dict[TargetKind, dict[str, Any]] = {
    "embedded": _EMBEDDED,
    "http": {},  # the model defaults of spec/model.py: 512/128, concurrency 1,2,4,8
    "twin": _TWIN,
}


# Agentic replay scales contexts to fit the target's window; only the embedded server's is known
# without asking (it is started with this many context tokens per slot).
AGENTIC_WINDOW_TOKENS: dict[TargetKind, int | None] = {
    "embedded": 2048,
    "http": None,
    "twin": None,
}


def target_kind(url: str) -> TargetKind:
    """The kind of target a `target.url` names: 'embedded', 'twin:...' or an HTTP URL."""
    if url.partition("?")[0] == "embedded":  # also embedded?kv=q4_0, embedded?spec=ngram
        return "embedded"
    if url.startswith("twin:"):
        return "twin"
    return "http"


def defaults_for(kind: TargetKind) -> dict[str, Any]:
    """A fresh copy of the partial spec (nested dict) that kind `kind` of target starts from."""
    return copy.deepcopy(DEFAULTS_BY_KIND[kind])
