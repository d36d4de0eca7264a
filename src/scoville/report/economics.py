"""The report's power and economics sections: per-kW figures at each power boundary the runs
carry (estimates labelled), and, given a TCO file, $ per accelerator-hour and $ per million
tokens at named interactivity tiers read off the monotone frontier (`analysis.tco`).
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING

from scoville.analysis.boundaries import column
from scoville.analysis.power import BOUNDARIES
from scoville.analysis.rows import Row, group_rows
from scoville.analysis.tco import Economics, TcoFile, TierCost, economics
from scoville.errors import UserError
from scoville.report.tables import cell

if TYPE_CHECKING:
    from scoville.report.html import ReportRun

Section = tuple[str, str]


def _th(*names: str) -> str:
    return "<tr>" + "".join(f"<th>{escape(n)}</th>" for n in names) + "</tr>"


def _how(row: Row, boundary: str) -> str:
    return str(row.get(column("power_how", boundary)) or "")


def _run_power(label: str, rows: Sequence[Row]) -> str:
    """One run's table: per point, W and total tok/s per kW at each boundary it carries (and
    the twin's active fraction when a boundary is its estimate)."""
    have = [b for b in BOUNDARIES if any(column("power_w", b) in r for r in rows)]
    if not have:
        return ""
    est = {b for b in have if any(_how(r, b).startswith("estimate") for r in rows)}
    head = ["point", "tok/s/user", "tok/s/acc", *(["twin active fraction"] if est else [])]
    for b in have:
        head += [f"{b} W" + (" (estimate)" if b in est else ""), f"{b} tok/s/kW"]
    body = []
    for r in rows:
        cells = [escape(str(r.get("point_id", ""))), cell(r.get("median_intvty")),
                 cell(r.get("tput_per_gpu"), digits=0)]  # fmt: skip
        cells += [cell(r.get("twin_active_fraction"), digits=2)] if est else []
        for b in have:
            w = cell(r.get(column("power_w", b)), digits=0)
            cells += [f"<span title='{escape(_how(r, b))}'>{w}</span>",
                      cell(r.get(column("tput_per_kw", b)), digits=0)]  # fmt: skip
        body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    notes = [f"{b}: {h}" for b in have if b not in est for h in sorted({_how(r, b) for r in rows})]
    for b in sorted(est):  # one line: the points differ only in their active fraction
        last = next(r for r in reversed(rows) if _how(r, b))
        notes.append(f"{b} at {last.get('point_id')}: {_how(last, b)}")
    items = "".join(f"<li>{escape(n)}</li>" for n in notes)
    return (
        f"<h3>{escape(label)}</h3><div class='scroll'><table>{_th(*head)}{''.join(body)}"
        f"</table></div><ul class='note'>{items}</ul>"
    )


def power_section(runs: Sequence[ReportRun]) -> Section | None:
    """Per-kW at each power boundary, for the runs whose rows carry boundary columns."""
    parts = [p for r in runs if (p := _run_power(r.label, r.rows))]
    if not parts:
        return None
    intro = (
        "<p class='note'>Each per-kW figure names its boundary: package TDP (datasheet), "
        "provisioned all-in (TDP + host, network and cooling shares, or x PUE), measured "
        "board, measured node wall, facility (node x PUE). Figures marked <b>estimate</b> are "
        "the twin's model (chip draw = idle + (TDP - idle) x active fraction), never a "
        "measurement; hover a wattage for where it comes from (listed below each table).</p>"
    )
    return "Power at each boundary", intro + "".join(parts)


def _tier_row(t: TierCost) -> str:
    status = t.status + (f" (floor {cell(t.bound_tput_per_acc, digits=0)})"
                         if t.bound_tput_per_acc else "")  # fmt: skip
    cells = [cell(t.tier_tok_s_user), escape(status), cell(t.tput_per_acc, digits=0),
             cell(t.usd_per_m_input, digits=3), cell(t.usd_per_m_output, digits=3),
             cell(t.usd_per_m_total, digits=3), cell(t.tokens_per_s_per_mw, digits=0),
             cell(t.agents_per_mw, digits=0)]  # fmt: skip
    return "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def _economics_table(label: str, e: Economics, boundary: str) -> str:
    head = _th("tok/s/user", "frontier", "tok/s/acc", "$/M input", "$/M output", "$/M total",
               "tok/s per MW", "agents per MW")  # fmt: skip
    fac = (
        f"tokens per MW at facility power {e.facility_w_per_accelerator:,.0f} W per "
        f"accelerator ({boundary})"
        if e.facility_w_per_accelerator
        else "no facility power stated: no per-MW figures"
    )
    notes = "".join(f"<li>{escape(n)}</li>" for n in (*e.notes, fac))
    return (
        f"<h3>{escape(label)}: {escape(e.basis)} ${e.usd_per_accelerator_hour:.3f} per "
        f"accelerator-hour</h3><table>{head}{''.join(_tier_row(t) for t in e.tiers)}</table>"
        f"<ul class='note'>{notes}</ul>"
    )


def economics_section(runs: Sequence[ReportRun], tco: TcoFile, source: str) -> Section:
    """$ per accelerator-hour and $/M tokens by tier for every configuration of `runs`."""
    rows = [p for r in runs for p in r.rows]
    parts = [
        f"<p class='note'>From {escape(source)}. $/M tokens = $ per accelerator-hour / "
        "(tok/s per accelerator x 3600 / 1e6), input, output and total each dividing the whole "
        "hour (alternative views, not shares). Tiers are read off each configuration's "
        "monotone frontier, never extrapolated: a tier outside the measured range shows no "
        "cost.</p>"
    ]
    for key, group in group_rows(rows).items():
        try:
            costed = economics(group, key.system, tco)
        except UserError as e:
            parts.append(f"<p class='note'>{escape(key.label())}: {escape(str(e))}</p>")
            continue
        own, _ = tco.for_system(key.system)
        boundary = f"{own.power_boundary} x PUE {own.pue:g}" if own else "-"
        parts += [_economics_table(key.label(), e, boundary) for e in costed]
    return "Economics", "".join(parts)


def report_sections(
    runs: Sequence[ReportRun], tco: TcoFile | None = None, source: str = ""
) -> list[Section]:
    """The sections this module adds to a report, in page order."""
    out: list[Section] = []
    if (power := power_section(runs)) is not None:
        out.append(power)
    if tco is not None:
        out.append(economics_section(runs, tco, source))
    return out
