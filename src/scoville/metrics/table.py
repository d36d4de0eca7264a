"""The metric table: every number scoville reports, with unit, direction and formula.

This table is the single written definition; docs/METRICS.md is generated from it (and a test
keeps the two equal). Per-request metrics are computed over successful, measured requests.
Percentiles use linear interpolation between order statistics (numpy's default, the
convention of vLLM's and InferenceX's benchmark scripts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Direction = Literal["lower", "higher", "none"]


@dataclass(frozen=True, slots=True)
class MetricDef:
    name: str
    unit: str
    direction: Direction  # which way is better
    scope: Literal["request", "point"]
    formula: str
    inferencex: str = "-"  # the same quantity's name in InferenceX results ("-" = none)
    vllm: str = "-"  # in `vllm bench serve`
    aiperf: str = "-"  # in AIPerf


METRICS: tuple[MetricDef, ...] = (
    MetricDef(
        "ttft",
        "s",
        "lower",
        "request",
        "first output frame arrival - request written (its last byte handed to the socket; "
        "connection set-up excluded)",
        "median_ttft / p99_ttft",
        "ttft",
        "time_to_first_token",
    ),
    MetricDef(
        "e2e",
        "s",
        "lower",
        "request",
        "end of stream ([DONE] or final frame) - request written",
        "median_e2el",
        "e2el",
        "request_latency",
    ),
    MetricDef(
        "ttft_from_send",
        "s",
        "lower",
        "request",
        "first output frame arrival - request begun (before a connection was taken or opened: "
        "includes connection set-up and the client's own delay)",
        "-",
        "-",
        "-",
    ),
    MetricDef(
        "connect",
        "s",
        "lower",
        "request",
        "TCP connection set-up of the request (0 on a reused keep-alive connection)",
        "-",
        "-",
        "-",
    ),
    MetricDef(
        "tpot",
        "s",
        "lower",
        "request",
        "(e2e - ttft) / (output_tokens - 1); requests with 1 output token excluded",
        "median_tpot",
        "tpot",
        "inter_token_latency",
    ),
    MetricDef(
        "itl",
        "s",
        "lower",
        "request",
        "per-token gaps: each frame gap divided evenly over the tokens of the later frame",
        "-",
        "-",
        "-",
    ),
    MetricDef(
        "itl_chunk",
        "s",
        "lower",
        "request",
        "gaps between consecutive output frames, as received",
        "-",
        "itl",
        "inter_chunk_latency",
    ),
    MetricDef(
        "intvty",
        "tok/s/user",
        "higher",
        "request",
        "interactivity; mean = mean(1/tpot); pX = 1 / pX(tpot) (tail-aligned: p99 is the "
        "rate at least 99% of requests got)",
        "median_intvty",
        "-",
        "output_token_throughput_per_user",
    ),
    MetricDef(
        "intvty_e2e",
        "tok/s/user",
        "higher",
        "request",
        "E2E-normalised interactivity (AgentX): pX = 1 / pX(e2e / output_tokens), so prefill "
        "and queueing count against the user's rate; tail-aligned like intvty (p90 is "
        "AgentX's headline)",
        "-",
        "-",
        "-",
    ),
    MetricDef(
        "req_per_s",
        "req/s",
        "higher",
        "point",
        "successful measured requests / window_s",
        "-",
        "request_throughput",
        "request_throughput",
    ),
    MetricDef(
        "output_tok_per_s",
        "tok/s",
        "higher",
        "point",
        "sum(output_tokens of successful measured requests) / window_s",
        "output_tput",
        "output_throughput",
        "output_token_throughput",
    ),
    MetricDef(
        "input_tok_per_s",
        "tok/s",
        "higher",
        "point",
        "sum(input_tokens of successful measured requests) / window_s",
        "input_tput",
        "-",
        "-",
    ),
    MetricDef(
        "total_tok_per_s",
        "tok/s",
        "higher",
        "point",
        "input_tok_per_s + output_tok_per_s",
        "tput",
        "total_token_throughput",
        "-",
    ),
    MetricDef(
        "tput_per_gpu",
        "tok/s/accelerator",
        "higher",
        "point",
        "total_tok_per_s / accelerator count",
        "tput_per_gpu",
        "-",
        "-",
    ),
    MetricDef(
        "output_tput_per_gpu",
        "tok/s/accelerator",
        "higher",
        "point",
        "output_tok_per_s / accelerator count",
        "output_tput_per_gpu",
        "-",
        "-",
    ),
    MetricDef(
        "input_tput_per_gpu",
        "tok/s/accelerator",
        "higher",
        "point",
        "input_tok_per_s / accelerator count",
        "input_tput_per_gpu",
        "-",
        "-",
    ),
    MetricDef(
        "tput_per_kw",
        "tok/s/kW",
        "higher",
        "point",
        "tput_per_gpu / (declared W per accelerator / 1000), at the declared boundary",
        "tput_per_kw (TDP)",
        "-",
        "-",
    ),
    MetricDef(
        "output_tput_per_kw",
        "tok/s/kW",
        "higher",
        "point",
        "output_tput_per_gpu / (declared W per accelerator / 1000)",
        "-",
        "-",
        "-",
    ),
    MetricDef(
        "input_tput_per_kw",
        "tok/s/kW",
        "higher",
        "point",
        "input_tput_per_gpu / (declared W per accelerator / 1000)",
        "-",
        "-",
        "-",
    ),
    MetricDef(
        "goodput_req_per_s",
        "req/s",
        "higher",
        "point",
        "successful measured requests meeting every SLO set / window_s",
        "-",
        "request_goodput",
        "goodput",
    ),
    MetricDef(
        "failure_rate",
        "fraction",
        "lower",
        "point",
        "failed measured requests / measured requests sent; > 0.05 marks the point invalid",
        "-",
        "-",
        "error_request_count / request_count",
    ),
    MetricDef(
        "window_s",
        "s",
        "none",
        "point",
        "last measured completion - first measured send (warmup excluded)",
        "-",
        "duration",
        "benchmark_duration",
    ),
    MetricDef(
        "usage_flagged",
        "requests",
        "lower",
        "point",
        "successful measured requests whose server usage was not believed (not a non-negative "
        "integer, above max_tokens, below the frame count, or outside [local/2 - 2, "
        "2 local + 2] of the local count); any makes the point invalid",
        "-",
        "-",
        "-",
    ),
    MetricDef(
        "input_mismatch",
        "requests",
        "lower",
        "point",
        "measured requests whose server-counted prompt tokens differ from the exact length built",
        "-",
        "-",
        "-",
    ),
    MetricDef(
        "quality_pass_rate",
        "fraction",
        "higher",
        "point",
        "the run's quality pass (spec.quality, after the sweep, run-wide): judged items answered "
        "right / judged items; a failed request is not right. quality_status: qualified when it "
        "is >= quality.threshold and >= (1 - quality.margin_rel) x the reference's pass rate "
        "(those set) with <= 5 % of items failed; null and 'not measured' without a pass",
        "-",
        "-",
        "-",
    ),
    MetricDef(
        "quality_pass_rate_lo",
        "fraction",
        "none",
        "point",
        "lower end of the 95 % Wilson score interval of quality_pass_rate: (p + z^2/2n - z "
        "sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n), z = 1.96, n judged items",
        "-",
        "-",
        "-",
    ),
    MetricDef(
        "quality_pass_rate_hi",
        "fraction",
        "none",
        "point",
        "upper end of the same interval (the + root)",
        "-",
        "-",
        "-",
    ),
    MetricDef(
        "stop_margin",
        "fraction",
        "lower",
        "point",
        "statistical stopping: the largest relative margin of error at 95 % over "
        "load.margin_stats when the point ended (a percentile: max(estimate - lower, upper - "
        "estimate) / estimate between distribution-free order-statistic bounds; a mean: "
        "1.96 sd / sqrt(n) / mean); empty without load.target_margin or while a bound does not "
        "exist (too few samples); margin_reached = stop_margin <= load.target_margin",
        "-",
        "-",
        "-",
    ),
    MetricDef(
        "cache_hit_rate",
        "fraction",
        "none",
        "point",
        "sum(cached_tokens) / sum(input_tokens) over requests whose server reports cached tokens",
        "-",
        "-",
        "-",
    ),
)

STATS: tuple[str, ...] = ("mean", "median", "p90", "p99", "p999")
PERCENTILES: dict[str, float] = {"median": 50.0, "p90": 90.0, "p99": 99.0, "p999": 99.9}

INVALID_FAILURE_RATE = 0.05


def metrics_markdown() -> str:
    """The table as Markdown (docs/METRICS.md embeds exactly this)."""
    lines = [
        "| metric | unit | better | scope | formula | InferenceX | vLLM bench | AIPerf |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for m in METRICS:
        lines.append(
            f"| `{m.name}` | {m.unit} | {m.direction} | {m.scope} | {m.formula} | "
            f"{m.inferencex} | {m.vllm} | {m.aiperf} |"
        )
    return "\n".join(lines) + "\n"
