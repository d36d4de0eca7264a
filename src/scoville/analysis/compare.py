"""The seeds' comparison table for two configurations (system vs baseline), as plain data.

Lines: peak throughput per kW, peak throughput per accelerator, minimum E2E latency, maximum
interactivity, throughput per kW at the baseline's best interactivity, and the same at each
user-chosen interactivity target. Every ratio is oriented so that > 1 means the system is
better and is written with its quotient named, "1.90x (A / B)". Iso-interactivity values come
from `frontier.read_at`. Pairs that are not like for like (`comparable.judge`) get no ratios
unless the caller allows unlike pairs; then every line says so.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from scoville.analysis.comparable import Comparability, conditions_of_rows, judge
from scoville.analysis.cost import usd_per_million_tokens
from scoville.analysis.frontier import (
    Better,
    Frontier,
    Reading,
    area_under,
    frontier_of,
    read_at,
)
from scoville.analysis.power import PowerBasis, basis_of_rows
from scoville.analysis.rows import GroupKey, Row, group_rows, num
from scoville.errors import UserError
from scoville.figures import num as figure


@dataclass(frozen=True, slots=True)
class CompareLine:
    key: str  # machine name, e.g. "peak_tput_per_kw", "tput_per_kw_at_intvty_169"
    metric: str  # human label
    unit: str
    system: float | None
    baseline: float | None
    ratio: float | None  # > 1: the system is better (higher, or lower where lower is better)
    better: Better
    status: str  # "ok", or why there is no ratio ("unreachable by system", "no power", ...)
    note: str = ""


@dataclass(frozen=True, slots=True)
class ComparisonTable:
    system: str
    baseline: str
    system_power: PowerBasis | None
    baseline_power: PowerBasis | None
    lines: tuple[CompareLine, ...]
    comparability: Comparability | None = None
    unlike_allowed: bool = False  # ratios shown although the pair is not like for like

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def line(self, key: str) -> CompareLine:
        for ln in self.lines:
            if ln.key == key:
                return ln
        raise KeyError(key)


def _valid(rows: Sequence[Row]) -> list[Row]:
    return [r for r in rows if r.get("valid") is not False]


def _extreme(rows: Sequence[Row], key: str, better: Better) -> float | None:
    vals = [v for r in rows if (v := num(r, key)) is not None]
    if not vals:
        return None
    return max(vals) if better == "higher" else min(vals)


def _ratio(s: float | None, b: float | None, better: Better) -> float | None:
    if s is None or b is None or s <= 0 or b <= 0:
        return None
    return s / b if better == "higher" else b / s


def make_line(
    key: str, metric: str, unit: str, s: float | None, b: float | None, better: Better, missing: str
) -> CompareLine:
    r = _ratio(s, b, better)
    return CompareLine(key, metric, unit, s, b, r, better, "ok" if r is not None else missing)


def _iso_line(
    key: str, metric: str, unit: str, sys_read: Reading, base_read: Reading
) -> CompareLine:
    status = "ok"
    if sys_read.value is None:
        status = f"{sys_read.status} for system"
    elif base_read.value is None:
        status = f"{base_read.status} for baseline"
    note = ""
    if sys_read.bound is not None or base_read.bound is not None:
        note = (
            f"outside a measured range; bounds: system >= {sys_read.bound}, "
            f"baseline >= {base_read.bound}"
        )
    r = _ratio(sys_read.value, base_read.value, "higher") if status == "ok" else None
    return CompareLine(
        key, metric, unit, sys_read.value, base_read.value, r, "higher", status, note
    )


def _area_line(sys_f: Frontier, base_f: Frontier) -> CompareLine:
    """Area under both per-kW frontiers over their common interactivity range (whole curves)."""
    key, unit = "area_tput_per_kw_common_range", "tok/s/kW x tok/s/user"
    if not sys_f.points or not base_f.points:
        return CompareLine(
            key, "Area under the frontier", unit, None, None, None, "higher", "no power"
        )
    lo = max(sys_f.xs[0], base_f.xs[0])
    hi = min(sys_f.xs[-1], base_f.xs[-1])
    label = f"Area under the frontier over {lo:.4g}-{hi:.4g} tok/s/user"
    if hi <= lo:
        return CompareLine(
            key,
            "Area under the frontier",
            unit,
            None,
            None,
            None,
            "higher",
            "no common interactivity range",
        )
    s_area, b_area = area_under(sys_f, lo, hi).value, area_under(base_f, lo, hi).value
    return make_line(key, label, unit, s_area, b_area, "higher", "missing")


def _cost_lines(
    sys_rows: Sequence[Row], base_rows: Sequence[Row], usd: tuple[float, float], x_metric: str
) -> list[CompareLine]:
    """$/M total tokens (InferenceX formula) at peak throughput and at the baseline's best
    interactivity, each side at its own $/accelerator-hour; lower is better."""

    def cost(price: float, tput: float | None) -> float | None:
        return usd_per_million_tokens(price, tput) if tput and tput > 0 else None

    unit = "$/M tokens"
    peak_s = _extreme(sys_rows, "tput_per_gpu", "higher")
    peak_b = _extreme(base_rows, "tput_per_gpu", "higher")
    out = [
        make_line(
            "usd_per_m_tokens_at_peak",
            f"Cost at peak throughput (${usd[0]:g} vs ${usd[1]:g} per accelerator-hour)",
            unit,
            cost(usd[0], peak_s),
            cost(usd[1], peak_b),
            "lower",
            "missing",
        )
    ]
    sys_f = frontier_of(sys_rows, x_metric, "tput_per_gpu")
    base_f = frontier_of(base_rows, x_metric, "tput_per_gpu")
    best = base_f.best_x()
    if best is not None:
        rs, rb = read_at(sys_f, best), read_at(base_f, best)
        status = "ok" if rs.value is not None else f"{rs.status} for system"
        line = make_line(
            "usd_per_m_tokens_at_baseline_best_intvty",
            f"Cost at the baseline's best interactivity ({best:.4g} tok/s/user)",
            unit,
            cost(usd[0], rs.value),
            cost(usd[1], rb.value),
            "lower",
            status,
        )
        out.append(line)
    return out


def compare(
    system_rows: Sequence[Row],
    baseline_rows: Sequence[Row],
    targets: Sequence[float] = (),
    intvty_metric: str = "median_intvty",
    e2e_metric: str = "median_e2e",
    usd_per_accelerator_hour: tuple[float, float] | None = None,
) -> ComparisonTable:
    """The comparison table for two configurations' point ROWs (invalid points excluded).

    Per-kW lines use each side's `tput_per_kw` (its declared power basis); they say "no power"
    when a side has none. Iso-interactivity lines read both throughput/interactivity frontiers
    at the same x and never extrapolate. With `usd_per_accelerator_hour` (system, baseline),
    cost lines ($/M total tokens) follow, at peak and at the baseline's best interactivity.
    """
    sys_rows, base_rows = _valid(system_rows), _valid(baseline_rows)
    lines = _headline_lines(sys_rows, base_rows, intvty_metric, e2e_metric)
    sys_f = frontier_of(sys_rows, intvty_metric, "tput_per_kw")
    base_f = frontier_of(base_rows, intvty_metric, "tput_per_kw")
    lines.append(_baseline_best_line(sys_f, base_f))
    lines.append(_area_line(sys_f, base_f))
    if usd_per_accelerator_hour is not None:
        lines.extend(_cost_lines(sys_rows, base_rows, usd_per_accelerator_hour, intvty_metric))
    for t in targets:
        label = f"Throughput per kW at {t:g} tok/s/user"
        lines.append(
            _iso_line(
                f"tput_per_kw_at_intvty_{t:g}",
                label,
                "tok/s/kW",
                read_at(sys_f, t),
                read_at(base_f, t),
            )
        )
    return ComparisonTable(
        _label(sys_rows or system_rows),
        _label(base_rows or baseline_rows),
        basis_of_rows(sys_rows),
        basis_of_rows(base_rows),
        tuple(lines),
    )


def _headline_lines(
    sys_rows: Sequence[Row], base_rows: Sequence[Row], intvty_metric: str, e2e_metric: str
) -> list[CompareLine]:
    """Peak per kW, peak per accelerator, minimum E2E latency, maximum interactivity."""
    table: list[tuple[str, str, str, str, Better, str]] = [
        ("peak_tput_per_kw", "Peak throughput per kW", "tok/s/kW", "tput_per_kw", "higher",
         "no power"),
        ("peak_tput_per_gpu", "Peak throughput per accelerator", "tok/s/acc", "tput_per_gpu",
         "higher", "missing"),
        ("min_e2e_s", f"Minimum E2E latency ({e2e_metric})", "s", e2e_metric, "lower",
         "missing"),
        ("max_intvty", f"Maximum interactivity ({intvty_metric})", "tok/s/user", intvty_metric,
         "higher", "missing"),
    ]  # fmt: skip
    return [
        make_line(key, label, unit, _extreme(sys_rows, field, better),
              _extreme(base_rows, field, better), better, missing)
        for key, label, unit, field, better, missing in table
    ]  # fmt: skip


def _baseline_best_line(sys_f: Frontier, base_f: Frontier) -> CompareLine:
    key = "tput_per_kw_at_baseline_best_intvty"
    best = base_f.best_x()
    if best is None:
        label = "Throughput per kW at the baseline's best interactivity"
        return CompareLine(key, label, "tok/s/kW", None, None, None, "higher", "no power")
    label = f"Throughput per kW at the baseline's best interactivity ({best:.4g} tok/s/user)"
    return _iso_line(key, label, "tok/s/kW", read_at(sys_f, best), read_at(base_f, best))


def _label(rows: Sequence[Row]) -> str:
    return GroupKey.of(rows[0]).label() if rows else "(no rows)"


def format_ratio(line: CompareLine, system: str = "", baseline: str = "") -> str:
    """The ratio with its quotient named: '1.90x higher (A / B)', '2.50x lower (B / A)'.

    Higher-is-better lines divide system by baseline, lower-is-better ones baseline by
    system, so > 1 always favours the system; below 1 no direction word is written (a
    '0.56x higher' reads as a win). Without names: '1.90x higher' / '0.53x (system / baseline)'.
    """
    if line.ratio is None:
        return ""
    s, b = (system or "system").split(" (")[0], (baseline or "baseline").split(" (")[0]
    num, den = (s, b) if line.better == "higher" else (b, s)
    if line.ratio < 1:
        return f"{line.ratio:.2f}x ({num} / {den})"
    word = "higher" if line.better == "higher" else "lower"
    return f"{line.ratio:.2f}x {word}" + (f" ({num} / {den})" if system and baseline else "")


def gate(table: ComparisonTable, comp: Comparability, allow_unlike: bool) -> ComparisonTable:
    """Apply the like-for-like verdict: a line of an unlike pair keeps its values but loses its
    ratio (status 'not like for like'), unless `allow_unlike`, when it is labelled instead.
    Power conditions block only the per-kW lines."""
    lines = []
    for ln in table.lines:
        why = "; ".join(
            c.reason for c in comp.blocking if "kW" in ln.unit or not c.field.startswith("power")
        )
        if not why or ln.ratio is None:
            lines.append(ln)
        elif allow_unlike:
            note = f"UNLIKE PAIR: {why}" + (f"; {ln.note}" if ln.note else "")
            lines.append(replace(ln, status="ok (unlike pair)", note=note))
        else:
            lines.append(replace(ln, ratio=None, status="not like for like", note=why))
    unlike = allow_unlike and not comp.like
    return replace(table, lines=tuple(lines), comparability=comp, unlike_allowed=unlike)


def html_table(table: ComparisonTable) -> str:
    """A self-contained HTML <table> (escaped) for the report."""
    esc = html.escape
    head = (
        f"<tr><th>metric</th><th>{esc(table.system)}</th><th>{esc(table.baseline)}</th>"
        "<th>ratio</th><th>status</th></tr>"
    )
    body = []
    for ln in table.lines:
        body.append(
            f"<tr><td>{esc(ln.metric)} [{esc(ln.unit)}]</td><td>{figure(ln.system)}</td>"
            f"<td>{figure(ln.baseline)}</td>"
            f"<td>{esc(format_ratio(ln, table.system, table.baseline))}</td>"
            f"<td>{esc(ln.status)}{(' - ' + esc(ln.note)) if ln.note else ''}</td></tr>"
        )
    cap = "power: system {}; baseline {}".format(
        esc(table.system_power.label()) if table.system_power else "none declared",
        esc(table.baseline_power.label()) if table.baseline_power else "none declared",
    )
    if table.comparability is not None and not table.comparability.like:
        label = "UNLIKE PAIR (ratios shown on request)" if table.unlike_allowed else (
            "not like for like, no ratios")  # fmt: skip
        cap += f"; {label}: {esc('; '.join(table.comparability.reasons()))}"
    return (
        f'<table class="scoville-compare"><caption>{cap}</caption>'
        f"<thead>{head}</thead><tbody>{''.join(body)}</tbody></table>"
    )


def find_group(groups: Sequence[GroupKey], name: str) -> GroupKey:
    """The group whose label or system equals `name` (case-insensitive); exactly one."""
    want = name.strip().lower()
    hits = [g for g in groups if want in (g.label().lower(), g.system.lower())]
    if len(hits) == 1:
        return hits[0]
    known = "; ".join(sorted(g.label() for g in groups)) or "(none)"
    if not hits:
        raise UserError(f"No configuration is called {name!r}. Known: {known}.")
    raise UserError(
        f"{name!r} matches {len(hits)} configurations; use the full label. Known: {known}."
    )


def compare_groups(
    rows: Sequence[Row],
    baseline: str,
    targets: Sequence[float] = (),
    usd_per_accelerator_hour: Mapping[str, float] | None = None,
    allow_unlike: bool = False,
) -> list[ComparisonTable]:
    """One table per configuration against the named baseline configuration. Prices are keyed
    by system name (case-insensitive); cost lines appear when both sides have one. Each table
    carries the pair's like-for-like verdict (`gate`)."""
    if not rows:
        raise UserError("Nothing to compare: the inputs hold no points.")
    groups = group_rows(rows)
    if len(groups) < 2:
        only = next(iter(groups)).label()
        raise UserError(
            f"compare needs at least two configurations; every point belongs to {only}. Give "
            "runs of another system (or configuration) too."
        )
    base_key = find_group(list(groups), baseline)
    prices = {k.lower(): v for k, v in (usd_per_accelerator_hour or {}).items()}
    base_cond = conditions_of_rows(groups[base_key])
    out = []
    for key, g_rows in groups.items():
        if key == base_key:
            continue
        ps, pb = prices.get(key.system.lower()), prices.get(base_key.system.lower())
        usd = (ps, pb) if ps is not None and pb is not None else None
        table = compare(g_rows, groups[base_key], targets, usd_per_accelerator_hour=usd)
        comp = judge(conditions_of_rows(g_rows), base_cond, per_kw=both_powered(table))
        out.append(gate(table, comp, allow_unlike))
    return out


def both_powered(table: ComparisonTable) -> bool:
    """Whether both sides of `table` declare power (per-kW lines can be read)."""
    return table.system_power is not None and table.baseline_power is not None
