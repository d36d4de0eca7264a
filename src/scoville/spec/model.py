"""The frozen test matrix: what is measured, against what, under which declared conditions.

Model, precision, sequence shape, quality target, latency target and power boundary are fixed
here before anything is compared. Every result carries `BenchmarkSpec.content_hash()`.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from scoville.spec.limits import (
    MAX_CONCURRENCY,
    MAX_RATE_PER_S,
    MAX_REQUESTS_PER_POINT,
    MAX_SEQUENCE_TOKENS,
)
from scoville.spec.power import PowerProfileFile

SCHEMA_VERSION: Literal[1] = 1

# Statistical stopping: the statistics a target margin may name (`<stat>_<latency>`), and the
# cap on a point's measured requests when a margin is set and requests_per_point is not.
MARGIN_STATS = ("mean", "median", "p90", "p99", "p999")
MARGIN_LATENCIES = ("ttft", "tpot", "e2e")
MARGIN_CAP_REQUESTS = 1_000

PowerBoundary = Literal[
    "package-tdp",  # declared package TDP per accelerator (datasheet)
    "provisioned-all-in",  # provisioned kW per accelerator incl. host, network, facility share
    "board-measured",  # measured accelerator board power (telemetry)
    "node-wall",  # measured node wall power
    "facility",  # node wall x PUE
]


class FrozenModel(BaseModel):
    """The base of every declared input (specs, claim files): immutable, unknown keys refused,
    every number finite (NaN and infinity are refused where they are read)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class TargetSpec(FrozenModel):
    url: str = Field(
        "embedded",
        description="What to benchmark: 'embedded' (llama.cpp + SmolLM2 on 127.0.0.1), "
        "'http://host:port' (any OpenAI-compatible server) or 'twin:HARDWARE/MODEL?opts'.",
    )
    model: str | None = Field(
        None, description="Model name sent in requests; default: the first of /v1/models."
    )
    api: Literal["completions", "chat"] = Field(
        "completions", description="OpenAI API to call: /v1/completions or /v1/chat/completions."
    )
    api_key_env: str | None = Field(
        None, description="Name of the environment variable holding the API key (never the key)."
    )
    tokenizer: str = Field(
        "auto",
        description="'auto' (server /tokenize, else by model name), 'server', "
        "'tiktoken:o200k_base' / 'tiktoken:o200k_harmony' / 'tiktoken:cl100k_base', or a "
        "path to a tokenizer.json.",
    )

    @field_validator("url")
    @classmethod
    def _url_parses(cls, v: str) -> str:
        """An http(s) URL needs a host and, when given, a numeric port in 1..65535."""
        if v.startswith(("http://", "https://")):
            try:
                parts = urlsplit(v)
                port = parts.port  # raises for a port that is not a number in range
            except ValueError as exc:
                raise ValueError(f"not a usable URL ({exc}); e.g. http://127.0.0.1:8000") from None
            if not parts.hostname or port == 0:
                raise ValueError("give a host and a port, e.g. http://127.0.0.1:8000")
        return v

    ignore_eos: bool = Field(True, description="Ask the server to ignore EOS so OSL is exact.")
    request_timeout_s: float = Field(
        600.0,
        gt=0,
        le=1_000_000,
        description="Give up on a request not answered completely within this many seconds.",
    )
    fresh_connections: bool = Field(
        False,
        description="Open a new connection for every request instead of reusing keep-alive "
        "connections (TTFT excludes connection set-up either way; `connect` reports it).",
    )


class SequenceShape(FrozenModel):
    isl_tokens: int = Field(
        512,
        ge=1,
        le=MAX_SEQUENCE_TOKENS,
        description="Input sequence length (tokens), the maximum.",
    )
    osl_tokens: int = Field(
        128,
        ge=1,
        le=MAX_SEQUENCE_TOKENS,
        description="Output sequence length (tokens), the maximum.",
    )
    range_ratio: float = Field(
        1.0,
        gt=0.0,
        le=1.0,
        description="Lengths are uniform integers in [ratio*L, L] (InferenceX convention); "
        "1.0 = fixed lengths.",
    )


class LoadSpec(FrozenModel):
    concurrency: tuple[int, ...] = Field(
        (1, 2, 4, 8), description="Closed-loop sweep: requests kept in flight, one point each."
    )
    request_rates_per_s: tuple[float, ...] = Field(
        (), description="Open-loop sweep: mean arrival rates (req/s), one point each."
    )
    burstiness: float = Field(
        1.0, gt=0, description="Gamma shape of inter-arrival times; 1.0 = Poisson, <1 burstier."
    )
    max_concurrency: int | None = Field(
        None,
        ge=1,
        le=MAX_CONCURRENCY,
        description="Cap on in-flight requests in open-loop mode (None = no cap).",
    )
    requests_per_point: int | None = Field(
        None,
        ge=1,
        le=MAX_REQUESTS_PER_POINT,
        description="Measured requests per point; default 10 x concurrency.",
    )
    warmup_requests: int | None = Field(
        None,
        ge=0,
        le=MAX_REQUESTS_PER_POINT,
        description="Unmeasured requests before each point; default 2 x concurrency.",
    )
    target_margin: float | None = Field(
        None,
        gt=0,
        lt=1,
        description="Statistical stopping: run each point until the relative margin of error "
        "at 95 % of every `margin_stats` statistic is at most this (0.05 = +-5 %); "
        "requests_per_point is then the cap (default max(10 x concurrency, "
        f"{MARGIN_CAP_REQUESTS:,})). None = a fixed requests_per_point.",
    )
    margin_stats: tuple[str, ...] = Field(
        ("median_e2e", "p99_ttft"),
        description="Statistics the target margin applies to, <stat>_<latency> with stat "
        "mean/median/p90/p99/p999 and latency ttft/tpot/e2e (a p99 needs 368 samples).",
    )

    @field_validator("concurrency", "request_rates_per_s", mode="before")
    @classmethod
    def _one_is_a_list(cls, v: Any) -> Any:
        return (v,) if isinstance(v, (int, float)) and not isinstance(v, bool) else v

    @field_validator("margin_stats", mode="before")
    @classmethod
    def _stats_from_text(cls, v: Any) -> Any:
        return tuple(p.strip() for p in v.split(",") if p.strip()) if isinstance(v, str) else v

    @field_validator("margin_stats")
    @classmethod
    def _known_stats(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for name in v:
            stat, _, latency = name.partition("_")
            if stat not in MARGIN_STATS or latency not in MARGIN_LATENCIES:
                raise ValueError(
                    f"unknown statistic {name!r}: use <stat>_<latency>, stat one of "
                    f"{', '.join(MARGIN_STATS)} and latency one of {', '.join(MARGIN_LATENCIES)}"
                    " (e.g. p99_ttft, median_e2e)"
                )
        if not v:
            raise ValueError("name at least one statistic, e.g. median_e2e")
        return v

    @model_validator(mode="after")
    def _some_point(self) -> LoadSpec:
        if not self.concurrency and not self.request_rates_per_s:
            raise ValueError("give at least one concurrency or one request rate")
        if any(not 1 <= c <= MAX_CONCURRENCY for c in self.concurrency):
            raise ValueError(f"every concurrency must be >= 1 and <= {MAX_CONCURRENCY:,}")
        if any(not 0 < r <= MAX_RATE_PER_S for r in self.request_rates_per_s):
            raise ValueError(f"every request rate must be > 0 and at most {MAX_RATE_PER_S:,.0f}/s")
        return self


class SloSpec(FrozenModel):
    ttft_ms: float | None = Field(None, gt=0, description="TTFT target (ms) for goodput.")
    tpot_ms: float | None = Field(None, gt=0, description="TPOT target (ms) for goodput.")
    e2e_ms: float | None = Field(None, gt=0, description="End-to-end target (ms) for goodput.")


class AcceleratorSpec(FrozenModel):
    kind: str = Field("cpu", description="Accelerator kind, e.g. 'H200 SXM', 'GB200', 'cpu'.")
    count: int = Field(
        1, ge=1, le=1_000_000, description="Accelerators serving the target (throughput divisor)."
    )
    power_w_per_accelerator: float | None = Field(
        None,
        gt=0,
        le=1_000_000,
        description="Declared power per accelerator (W) at `power_boundary`.",
    )
    power_boundary: PowerBoundary = Field(
        "package-tdp", description="What the declared power covers."
    )


class ServingSpec(FrozenModel):
    framework: str = Field("unknown", description="Serving framework, e.g. vllm, sglang.")
    framework_version: str = Field("unknown", description="Its version.")
    tensor_parallel: int = Field(1, ge=1)
    pipeline_parallel: int = Field(1, ge=1)
    expert_parallel: int = Field(1, ge=1)
    data_parallel: int = Field(1, ge=1)
    speculative_decoding: str = Field(
        "none", description="'none', 'mtp', 'eagle3', 'ngram', ... (single-token = 'none')."
    )
    disaggregated: bool = Field(False, description="Separate prefill and decode pools.")
    notes: str = ""


class PointValidity(FrozenModel):
    """When a measured point may be published (MLPerf LoadGen-style minimums). A point that
    breaks a rule is reported invalid with a one-line reason; the defaults only refuse empty
    points, so set publication minimums here (MLPerf's server scenario asks for 600 s)."""

    max_failure_rate: float = Field(
        0.05, ge=0.0, le=1.0, description="Most measured requests that may fail (0.05 = 5 %)."
    )
    min_window_s: float = Field(
        0.0, ge=0.0, description="Shortest measured window (s) of a valid point."
    )
    min_measured_requests: int = Field(
        1, ge=1, description="Fewest measured requests of a valid point."
    )


class QualityTarget(FrozenModel):
    """The quality pass `scoville run` performs on its own target after the sweep (unset
    `task`: none). The run is qualified when the pass rate meets `threshold` and, with a
    `reference`, at least (1 - `margin_rel`) of the reference's pass rate."""

    task: str | None = Field(
        None,
        description="Quality tasks, as `scoville quality --tasks`: generated copy, kv, arith, "
        "json; files as FORMAT=PATH (gsm8k, mmlu, gpqa, bfcl, items).",
    )
    metric: str = Field("accuracy", description="Metric on that task (accuracy: the pass rate).")
    threshold: float | None = Field(
        None, ge=0.0, le=1.0, description="Lowest acceptable pass rate (0.5 = half the items)."
    )
    margin_rel: float = Field(
        0.01,
        gt=0.0,
        lt=0.5,
        description="With a reference: the pass rate must keep (1 - margin) of the "
        "reference's (0.01 = 99 %, MLPerf's rule; 0.001 = 99.9 %).",
    )
    concurrency: int = Field(1, ge=1, le=256, description="Quality requests in flight.")
    items_per_task: int = Field(
        10, ge=1, le=100_000, description="Items per task (a file: its first N rows)."
    )
    reference: str | None = Field(
        None,
        description="A reference target ('embedded', 'http://HOST:PORT') that answers the same "
        "items, for an equivalence verdict against it.",
    )


class BenchmarkSpec(FrozenModel):
    """A frozen benchmark: everything needed to reproduce a run, and nothing measured."""

    schema_version: Literal[1] = SCHEMA_VERSION
    name: str = Field("fixed-sequence", description="Free label for the run.")
    target: TargetSpec = TargetSpec()
    model_name: str | None = Field(
        None, description="Canonical model under test (for comparisons); default target.model."
    )
    precision: str = Field("unknown", description="Weights/activations label, e.g. fp8, mxfp4.")
    shape: SequenceShape = SequenceShape()
    load: LoadSpec = LoadSpec()
    slo: SloSpec = SloSpec()
    accelerators: AcceleratorSpec = AcceleratorSpec()
    serving: ServingSpec = ServingSpec()
    quality: QualityTarget = QualityTarget()
    validity: PointValidity = PointValidity()
    seed: int = Field(0, description="Seed for prompts, lengths and arrivals.")
    power_profile: PowerProfileFile | None = Field(
        None,
        description="Power profile (YAML: per-accelerator TDP, idle floor, host/network/"
        "cooling shares, PUE, measured figures): summary rows gain tok/s per kW at every "
        "power boundary it determines.",
    )

    def canonical_json(self) -> str:
        # Without a power profile the field is left out, so such specs keep their hashes.
        unset = {"power_profile"} if self.power_profile is None else None
        doc = self.model_dump(mode="json", exclude=unset)
        return json.dumps(doc, sort_keys=True, separators=(",", ":"))

    def content_hash(self) -> str:
        """sha256 of the canonical JSON, first 16 hex digits: the name of every result."""
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()[:16]

    def requests_for(self, concurrency: int) -> int:
        """Measured requests of a closed-loop point; with a target margin, the most it may
        take (the point stops earlier once the margin is reached)."""
        if self.load.requests_per_point is not None:
            return self.load.requests_per_point
        if self.load.target_margin is not None:
            return max(10 * concurrency, MARGIN_CAP_REQUESTS)
        return 10 * concurrency

    def warmup_for(self, concurrency: int) -> int:
        if self.load.warmup_requests is not None:
            return self.load.warmup_requests
        return 2 * concurrency

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")
