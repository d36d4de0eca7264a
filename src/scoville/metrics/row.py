"""The summary row: one typed record per sweep point, what `summarize_point` returns.

Every field is a metric of `scoville.metrics.table` (request metrics as `<stat>_<metric>`, e.g.
`p99_ttft`) or is named in `NON_METRIC_FIELDS` (ids, counts, declared inputs); a test checks
both directions. Labels (system, model, shape) and the columns later stages add (telemetry,
target facts) ride in `labels` and `extra`. `to_dict()` is the flat JSON row of summary.json.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from scoville.records.model import Mode

# Fields that are not metrics: identity, counts behind the metrics, declared inputs.
NON_METRIC_FIELDS: frozenset[str] = frozenset(
    {
        "point_id",
        "mode",
        "level",
        "conc",
        "request_rate",
        "n_sent",
        "n_ok",
        "n_failed",
        "valid",
        "invalid_reasons",
        "errors",
        "n_accelerators",
        "power_w_per_accelerator",
        "power_boundary",
        "token_sources",
        "quality_status",
        "labels",
        "extra",
        "margin_reached",
    }
)


@dataclass(frozen=True, slots=True)
class SummaryRow:
    """One point's numbers: times in seconds, throughputs in tokens/s (see the metric table)."""

    point_id: str
    mode: Mode
    level: float
    conc: int | None
    request_rate: float | None
    n_sent: int
    n_ok: int
    n_failed: int
    failure_rate: float
    valid: bool
    invalid_reasons: tuple[str, ...]
    window_s: float
    errors: Mapping[str, int]
    mean_ttft: float | None
    median_ttft: float | None
    p90_ttft: float | None
    p99_ttft: float | None
    p999_ttft: float | None
    mean_ttft_from_send: float | None
    median_ttft_from_send: float | None
    p90_ttft_from_send: float | None
    p99_ttft_from_send: float | None
    p999_ttft_from_send: float | None
    mean_connect: float | None
    median_connect: float | None
    p90_connect: float | None
    p99_connect: float | None
    p999_connect: float | None
    mean_tpot: float | None
    median_tpot: float | None
    p90_tpot: float | None
    p99_tpot: float | None
    p999_tpot: float | None
    mean_itl: float | None
    median_itl: float | None
    p90_itl: float | None
    p99_itl: float | None
    p999_itl: float | None
    mean_itl_chunk: float | None
    median_itl_chunk: float | None
    p90_itl_chunk: float | None
    p99_itl_chunk: float | None
    p999_itl_chunk: float | None
    mean_e2e: float | None
    median_e2e: float | None
    p90_e2e: float | None
    p99_e2e: float | None
    p999_e2e: float | None
    mean_intvty: float | None
    median_intvty: float | None
    p90_intvty: float | None
    p99_intvty: float | None
    p999_intvty: float | None
    mean_intvty_e2e: float | None
    median_intvty_e2e: float | None
    p90_intvty_e2e: float | None
    p99_intvty_e2e: float | None
    p999_intvty_e2e: float | None
    req_per_s: float
    output_tok_per_s: float
    input_tok_per_s: float
    total_tok_per_s: float
    n_accelerators: int
    tput_per_gpu: float
    output_tput_per_gpu: float
    input_tput_per_gpu: float
    power_w_per_accelerator: float | None
    power_boundary: str | None
    tput_per_kw: float | None
    output_tput_per_kw: float | None
    input_tput_per_kw: float | None
    goodput_req_per_s: float | None
    input_mismatch: int
    usage_flagged: int
    cache_hit_rate: float | None
    token_sources: tuple[str, ...]
    # The run's quality pass (run-wide): qualified / not qualified / not measured.
    quality_status: str = "not measured"
    quality_pass_rate: float | None = None
    quality_pass_rate_lo: float | None = None
    quality_pass_rate_hi: float | None = None
    labels: Mapping[str, Any] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)
    # statistical stopping (None when the spec sets no target margin)
    stop_margin: float | None = None
    margin_reached: bool | None = None

    def with_labels(self, labels: Mapping[str, Any]) -> SummaryRow:
        return replace(self, labels={**self.labels, **labels})

    def with_columns(self, columns: Mapping[str, Any]) -> SummaryRow:
        """The same row with columns a later stage adds (telemetry, target facts)."""
        return replace(self, extra={**self.extra, **columns}) if columns else self

    def with_quality(self, columns: Mapping[str, Any]) -> SummaryRow:
        """The same row with the run's quality status and pass rate (`quality.inrun.columns`)."""
        return replace(self, **columns)

    def distrusted(self, reason: str) -> SummaryRow:
        """The same row marked invalid for `reason` (one tagged line, `tag: why`, added to the
        reasons it already has)."""
        return replace(self, valid=False, invalid_reasons=(*self.invalid_reasons, reason))

    def to_dict(self) -> dict[str, Any]:
        """The flat row of summary.json: metric fields, then labels, then added columns."""
        out: dict[str, Any] = {}
        for f in fields(self):
            if f.name not in ("labels", "extra"):
                out[f.name] = getattr(self, f.name)
        out["errors"] = dict(self.errors)
        out["token_sources"] = list(self.token_sources)
        out["invalid_reasons"] = list(self.invalid_reasons)
        return {**out, **self.labels, **self.extra}
