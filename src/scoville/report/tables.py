"""The report's tables: each run's provenance, its headline point table, every metric of the
metric table per point with its convention and sample count, agentic figures, definitions.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from scoville.figures import fixed, ok_of_sent
from scoville.metrics.table import METRICS, MetricDef
from scoville.report.charts import load_text, validity

Row = Mapping[str, Any]
STAT_NAMES: tuple[tuple[str, str], ...] = (
    ("mean", "mean"),
    ("median", "p50"),
    ("p90", "p90"),
    ("p99", "p99"),
    ("p999", "p99.9"),
)
MS_METRICS = frozenset({"ttft", "tpot", "itl", "itl_chunk"})  # shown in ms, stored in s
SAMPLES = {
    "itl": "per-token gaps of the successful requests",
    "itl_chunk": "frame gaps of the successful requests",
    "tpot": "successful requests with 2+ output tokens",
    "intvty": "successful requests with 2+ output tokens",
}
PERCENTILE_RULE = (
    "pX: linear interpolation between order statistics (numpy default); mean: arithmetic"
)


def cell(v: Any, scale: float = 1.0, digits: int = 1) -> str:
    """A table cell: a number as `figures.fixed` writes it, other text escaped."""
    if v is None or isinstance(v, bool) or not isinstance(v, (int, float)):
        return "-" if v is None else escape(str(v))
    return fixed(v, digits, scale)


def target_fingerprint(manifest: Mapping[str, Any]) -> str:
    """16 hex digits of the SHA-256 of the target's facts (manifest `target`, canonical JSON):
    equal fingerprints mean the target described itself identically."""
    target = manifest.get("target")
    if not target:
        return "-"
    text = json.dumps(target, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _boundary(summary: Mapping[str, Any], spec: Mapping[str, Any]) -> str:
    rows = summary.get("points", [])
    measured = {str(r["measured_power_boundary"]) for r in rows if r.get("measured_power_boundary")}
    declared = {str(r["power_boundary"]) for r in rows if r.get("power_boundary")}
    acc = spec.get("accelerators", {})
    if measured:
        return "measured at " + ", ".join(sorted(measured))
    if declared:
        return "declared " + ", ".join(sorted(declared))
    return f"none (no power declared; spec boundary {acc.get('power_boundary', '-')})"


Provenance = tuple[
    Mapping[str, Any], Mapping[str, Any], Mapping[str, Any]
]  # summary, spec, manifest


def _facts(
    summary: Mapping[str, Any], spec_doc: Mapping[str, Any], manifest: Mapping[str, Any]
) -> list[str]:
    """One run's provenance, in PROVENANCE_ROWS order."""
    spec, target = spec_doc.get("spec", {}), manifest.get("target", {})
    shape, rows = spec.get("shape", {}), summary.get("points", [])
    where = (target.get("kind"), target.get("model"), target.get("base_url"))
    acc = f"{rows[0].get('n_accelerators')} x {rows[0].get('system', '-')}" if rows else "-"
    return [
        str(summary.get("run_id", "-")),
        str(summary.get("spec_hash", "-")),
        str(manifest.get("client", {}).get("scoville", "-")),
        " / ".join(str(v) for v in where if v) or "-",
        target_fingerprint(manifest),
        acc,
        _boundary(summary, spec),
        f"ISL {shape.get('isl_tokens', '-')} / OSL {shape.get('osl_tokens', '-')} tokens, "
        f"range ratio {summary.get('range_ratio') or '-'}",
        f"{manifest.get('started_utc', '-')} to {manifest.get('ended_utc', '-')}",
    ]


PROVENANCE_ROWS = (
    "run",
    "spec hash",
    "scoville",
    "target",
    "target fingerprint",
    "accelerators",
    "power boundary",
    "shape",
    "time (UTC)",
)


def provenance(labels: Sequence[str], runs: Sequence[Provenance]) -> str:
    """Where each run's numbers come from (one column per run): hashes, versions, target,
    power boundary, shape, times."""
    cols = [_facts(*run) for run in runs]
    head = "<tr><th></th>" + "".join(f"<th class='l'>{escape(lab)}</th>" for lab in labels)
    body = "".join(
        f"<tr><th class='l'>{escape(name)}</th>"
        + "".join(f"<td class='l'><code>{escape(col[i])}</code></td>" for col in cols)
        + "</tr>"
        for i, name in enumerate(PROVENANCE_ROWS)
    )
    return f"<div class='scroll'><table class='prov'>{head}</tr>{body}</table></div>"


POINT_COLUMNS: tuple[tuple[str, str, float, int], ...] = (
    ("median_ttft", "TTFT p50 ms", 1e3, 1),
    ("p99_ttft", "TTFT p99 ms", 1e3, 1),
    ("median_tpot", "TPOT p50 ms", 1e3, 2),
    ("p99_tpot", "TPOT p99 ms", 1e3, 2),
    ("median_itl", "ITL p50 ms", 1e3, 2),
    ("p99_itl", "ITL p99 ms", 1e3, 2),
    ("median_e2e", "E2E p50 s", 1.0, 3),
    ("p99_e2e", "E2E p99 s", 1.0, 3),
    ("median_intvty", "intvty p50 tok/s/user", 1.0, 1),
    ("tput_per_gpu", "tok/s/accel", 1.0, 1),
    ("output_tput_per_gpu", "out tok/s/accel", 1.0, 1),
    ("tput_per_kw", "tok/s/kW", 1.0, 1),
    ("goodput_req_per_s", "goodput req/s", 1.0, 2),
)


def _marked(r: Row, key: str, scale: float, digits: int) -> str:
    """A percentile cell whose title gives its sample count (`n_<metric>`; interactivity counts
    TPOT's) and 95 % interval; one the row flags as from too few samples (`few_samples`) is
    starred and says so instead of giving an interval."""
    text = cell(r.get(key), scale, digits)
    stem = key.split("_", 1)[1]
    n = r.get(f"n_{'tpot' if stem == 'intvty' else stem}")
    few = key in (r.get("few_samples") or ())
    if few:
        tip = f"n = {n if n is not None else r.get('n_ok')}: too few samples for a 95 % interval"
        return f"<span title='{escape(tip)}'>{text}*</span>"
    lo, hi = r.get(key + "_lo"), r.get(key + "_hi")
    if n is None or lo is None or hi is None:
        return text
    tip = f"n = {n}: 95 % CI [{cell(lo, scale, digits)}, {cell(hi, scale, digits)}]"
    return f"<span title='{escape(tip)}'>{text}</span>"


def point_table(rows: Sequence[Row]) -> str:
    """The headline numbers, one row per point; invalid rows shaded, and their reasons listed
    under the table (where a wide table cannot scroll them out of view)."""
    head = ("point", "load", "ok/sent", "fail %", "valid", *(h for _, h, _, _ in POINT_COLUMNS))
    html = ["<div class='scroll'><table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    reasons = []
    for r in rows:
        ok, reason = validity(r)
        cls = "" if ok == "valid" else ' class="bad"'
        cells = [
            escape(str(r["point_id"])),
            escape(load_text(r)),
            ok_of_sent(r),
            cell(r.get("failure_rate"), 100),
            "yes" if ok == "valid" else "NO",
        ]
        cells += [_marked(r, k, s, d) for k, _, s, d in POINT_COLUMNS]
        html.append(f"<tr{cls}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        if ok != "valid":
            reasons.append(f"<li><b>{escape(str(r['point_id']))}</b>: {escape(reason)}</li>")
    html.append("</table></div>")
    if reasons:
        html.append(f"<ul class='why'>Invalid points (never on a frontier):{''.join(reasons)}</ul>")
    return "\n".join(html)


def _metric_rows(m: MetricDef) -> list[tuple[str, str, float, str]]:
    """(row key, shown name, scale, unit) for one table metric."""
    if m.scope == "point":
        return [(m.name, m.name, 1.0, m.unit)]
    scale, unit = (1e3, "ms") if m.name in MS_METRICS else (1.0, m.unit)
    return [(f"{stat}_{m.name}", f"{m.name} {shown}", scale, unit) for stat, shown in STAT_NAMES]


def _metric_block(m: MetricDef, rows: Sequence[Row]) -> list[str]:
    """One metric's rows (a request metric has one per statistic); its samples and
    convention are written once, beside them."""
    conv = m.formula + ("; " + PERCENTILE_RULE if m.scope == "request" else "")
    default = "successful requests" if m.scope == "request" else "the measurement window"
    samples = SAMPLES.get(m.name, default)
    present = [k for k in _metric_rows(m) if any(k[0] in r for r in rows)]
    out = []
    for i, (key, shown, scale, unit) in enumerate(present):
        digits = 3 if scale == 1.0 else 2
        vals = "".join(f"<td>{_marked(r, key, scale, digits)}</td>" for r in rows)
        side = (
            f"<td class='l' rowspan='{len(present)}'>{escape(samples)}</td>"
            f"<td class='l' rowspan='{len(present)}'>{escape(conv)}</td>"
            if i == 0
            else ""
        )
        out.append(
            f"<tr><td class='l'><code>{escape(shown)}</code></td><td class='l'>{escape(unit)}"
            f"</td>{vals}{side}</tr>"
        )
    return out


def metric_table(rows: Sequence[Row]) -> str:
    """Every metric of the metric table, one column per point, with its convention and what
    its samples are; the first rows give each point's sample count and validity."""
    pts = "".join(f"<th>{escape(str(r['point_id']))}</th>" for r in rows)
    head = f"<tr><th class='l'>metric</th><th class='l'>unit</th>{pts}"
    head += "<th class='l'>samples</th><th class='l'>convention</th></tr>"
    n = "".join(f"<td>{escape(str(r.get('n_ok')))}</td>" for r in rows)
    ok = "".join(f"<td>{escape(validity(r)[0])}</td>" for r in rows)
    body = [
        f"<tr><td class='l'>samples (successful requests)</td><td class='l'>requests</td>"
        f"{n}<td class='l'>-</td><td class='l'>measured phase only</td></tr>",
        f"<tr><td class='l'>validity</td><td class='l'>-</td>{ok}"
        "<td class='l'>-</td><td class='l'>see the point table for reasons</td></tr>",
    ]
    for m in METRICS:
        body += _metric_block(m, rows)
    return f"<div class='scroll'><table class='metrics'>{head}{''.join(body)}</table></div>"


def definitions() -> str:
    rows = "".join(
        f"<tr><td class='l'><code>{m.name}</code></td><td class='l'>{escape(m.unit)}"
        f"</td><td class='l'>{escape(m.formula)}</td></tr>"
        for m in METRICS
    )
    return (
        f"<table><tr><th class='l'>metric</th><th class='l'>unit</th>"
        f"<th class='l'>definition</th></tr>{rows}</table>"
    )


AGENTIC_COLUMNS = (
    ("lanes", "lanes", 1.0, 0),
    ("req_per_s", "req/s", 1.0, 3),
    ("output_tput_per_accelerator", "out tok/s/accel", 1.0, 1),
    ("intvty_agentx", "intvty (1/p90 ITL) tok/s", 1.0, 1),
    ("median_ttft_hit", "TTFT hit p50 ms", 1e3, 1),
    ("median_ttft_miss", "TTFT miss p50 ms", 1e3, 1),
    ("p99_ttft", "TTFT p99 ms", 1e3, 1),
    ("p90_session_makespan", "session p90 s", 1.0, 1),
    ("cache_hit_rate_measured", "cache hit measured", 1.0, 3),
    ("cache_hit_rate_theoretical", "cache hit theoretical", 1.0, 3),
    ("overflow_share", "overflow share", 1.0, 3),
)


def agentic_table(rows: Sequence[Row]) -> str:
    """Agentic replay's cache and session figures per lane count ('' when none)."""
    rows = [p for p in rows if p.get("lanes") is not None]
    if not rows:
        return ""
    head = "".join(f"<th>{escape(h)}</th>" for _, h, _, _ in AGENTIC_COLUMNS) + "<th>valid</th>"
    body = ""
    for p in rows:
        cells = "".join(f"<td>{cell(p.get(k), s, d)}</td>" for k, _, s, d in AGENTIC_COLUMNS)
        body += f"<tr>{cells}<td>{'yes' if p.get('agentic_valid') else 'NO'}</td></tr>"
    return f"<div class='scroll'><table><tr>{head}</tr>{body}</table></div>"
