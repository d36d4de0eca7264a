"""CLI for analysis: `scoville compare`, `scoville claims audit`, `scoville import`.

Thin: parse, call scoville.analysis, print with rich (or JSON). Heavy imports happen inside
the command functions so `scoville --help` stays fast.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from scoville.commands._console import console
from scoville.figures import num

if TYPE_CHECKING:
    from rich.console import Console

    from scoville.analysis.compare import ComparisonTable
    from scoville.analysis.power import PowerBasis
    from scoville.analysis.verdicts import AuditReport, ClaimAudit

app = typer.Typer(no_args_is_help=True)
claims_app = typer.Typer(no_args_is_help=True, help="Audit, plan and verify published claims.")
app.add_typer(claims_app, name="claims")


def _power(specs: list[str]) -> dict[str, PowerBasis]:
    """--power 'SYSTEM=BOUNDARY:W' as {system: basis}."""
    from scoville.analysis.power import BOUNDARIES, PowerBasis
    from scoville.errors import UserError

    out: dict[str, PowerBasis] = {}
    for spec in specs:
        system, _, rest = spec.partition("=")
        boundary, _, watts = rest.partition(":")
        try:
            basis = PowerBasis(boundary, float(watts))  # type: ignore[arg-type]
        except ValueError:
            basis = None
        if not system or basis is None or boundary not in BOUNDARIES:
            raise UserError(
                f"--power {spec!r} should look like 'GB200=package-tdp:1200' with a boundary "
                f"among {', '.join(BOUNDARIES)} and watts > 0."
            )
        out[system] = basis
    return out


def _prices(specs: list[str]) -> dict[str, float]:
    from scoville.errors import UserError

    out: dict[str, float] = {}
    for spec in specs:
        system, _, usd = spec.partition("=")
        try:
            value = float(usd)
        except ValueError:
            value = -1.0
        if not system or value <= 0:
            raise UserError(f"--price {spec!r} should look like 'GB200=3.50' ($ per hour > 0).")
        out[system] = value
    return out


@app.command("compare")
def compare_cmd(
    paths: Annotated[list[Path], typer.Argument(help="Run directories or result files.")],
    baseline: Annotated[str, typer.Option("--baseline", "-b", help="Baseline system/label.")],
    target: Annotated[
        list[float] | None, typer.Option("--target", "-t", help="Interactivity (tok/s/user).")
    ] = None,
    power: Annotated[
        list[str] | None, typer.Option(help="Per-system power basis 'SYSTEM=BOUNDARY:W'.")
    ] = None,
    price: Annotated[
        list[str] | None,
        typer.Option(help="Per-system $ per accelerator-hour 'SYSTEM=USD' (adds cost lines)."),
    ] = None,
    ci: Annotated[
        int,
        typer.Option(
            "--ci",
            help="Bootstrap resamples for an interval over requests at the baseline's best "
            "interactivity (needs run directories with records.jsonl); 0 = off.",
        ),
    ] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    html_out: Annotated[Path | None, typer.Option("--html", help="Write HTML tables.")] = None,
    allow_unlike: Annotated[
        bool,
        typer.Option(help="Show ratios for pairs that are not like for like (labelled)."),
    ] = False,
    power_profile: Annotated[
        Path | None, typer.Option(help="Power profile YAML (per-accelerator TDP, shares, PUE).")
    ] = None,
    boundary: Annotated[
        str | None,
        typer.Option(help="Re-express every row's per-kW figures at this power boundary."),
    ] = None,
    tco: Annotated[
        Path | None, typer.Option(help="TCO file: cost lines at each system's TCO $/hour.")
    ] = None,
) -> None:
    """Compare every configuration against a baseline: the seeds' table, with ratios."""
    from scoville.analysis.compare import html_table
    from scoville.analysis.comparison import CompareRequest, compare_results

    request = CompareRequest(
        paths,
        baseline,
        target or [],
        _power(power or []),
        _prices(price or []),
        ci,
        allow_unlike=allow_unlike,
        power_profile=power_profile,
        boundary=boundary,
        tco=tco,
    )
    tables = compare_results(request)
    if html_out is not None:
        html_out.write_text("\n".join(html_table(t) for t in tables), encoding="utf-8")
        typer.echo(f"wrote {html_out}", err=True)
    if as_json:
        typer.echo(json.dumps([t.to_dict() for t in tables], indent=2, default=str))
        return
    out = console()
    for t in tables:
        _print_comparison(out, t)


def _print_comparison(console: Console, t: ComparisonTable) -> None:
    from rich.table import Table

    from scoville.analysis.compare import format_ratio

    def power(b: Any) -> str:
        return b.label() if b else "no power declared"

    caption = f"power: {t.system} {power(t.system_power)}; {t.baseline} {power(t.baseline_power)}"
    comp = t.comparability
    unlike = comp is not None and not comp.like
    title = f"{t.system} vs {t.baseline}" + (
        (" [UNLIKE PAIR: ratios shown on request]" if t.unlike_allowed else " [not like for like]")
        if unlike
        else ""
    )
    table = Table(title=title, caption=caption)
    for col in ("metric", "unit", t.system, t.baseline, "ratio", "status"):
        table.add_column(col)
    for ln in t.lines:
        status = ln.status + (f" ({ln.note})" if ln.note and not unlike else "")
        ratio = format_ratio(ln, t.system, t.baseline)
        table.add_row(ln.metric, ln.unit, num(ln.system), num(ln.baseline), ratio, status)
    console.print(table)
    if comp is not None and comp.blocking:
        console.print("[yellow]conditions that differ (ratios need them equal):[/yellow]")
        for reason in comp.reasons():
            console.print(f"  - {reason}")
        if not t.unlike_allowed:
            console.print("  (pass --allow-unlike to show the ratios anyway, labelled)")
    if comp is not None and comp.caveats():
        console.print(f"[dim]unstated on a side: {', '.join(comp.caveats())}[/dim]")


@claims_app.command("audit")
def audit_cmd(
    files: Annotated[
        list[Path], typer.Argument(help="Claim files (YAML, scoville.claims/1) or directories.")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict", help="Treat conditions unstated on either side as not comparable."
        ),
    ] = False,
    html_out: Annotated[
        Path | None, typer.Option("--html", help="Write the audit as HTML.")
    ] = None,
) -> None:
    """Recompute every stated ratio, list differing conditions, re-normalise power, judge."""
    from scoville.analysis.audit import audit
    from scoville.analysis.claims import claim_files, load_claims, load_side_rows
    from scoville.analysis.verdicts import audit_html

    reports = []
    for file in claim_files(files):
        cf = load_claims(file)
        reports.append(audit(cf, load_side_rows(cf, file.parent), strict=strict))
    if html_out is not None:
        html_out.write_text("\n".join(audit_html(r) for r in reports), encoding="utf-8")
        typer.echo(f"wrote {html_out}", err=True)
    if as_json:
        docs = [r.to_dict() for r in reports]
        typer.echo(json.dumps(docs[0] if len(docs) == 1 else docs, indent=2, default=str))
        return
    for report in reports:
        _print_audit(console(), report)


_VERDICT_STYLE = {
    "reproduced": "green",
    "inconsistent": "red",
    "not comparable": "yellow",
    "unverifiable": "magenta",
}


def _print_audit(console: Console, report: AuditReport) -> None:
    from rich.table import Table

    t = Table(title=report.title + (" (strict)" if report.strict else ""))
    for col in ("claim", "system vs baseline", "stated", "recomputed", "verdict", "evidence"):
        t.add_column(col)
    for a in report.claims:
        t.add_row(
            a.claim_id,
            f"{a.system} vs {a.baseline}",
            f"{a.stated_ratio}x" if a.stated_ratio else "-",
            f"{a.recomputed_ratio:.4g}x" if a.recomputed_ratio else "-",
            f"[{_VERDICT_STYLE[a.verdict]}]{a.verdict}[/]" + (f" ({a.basis})" if a.basis else ""),
            a.evidence,
        )
    console.print(t)
    for a in report.claims:
        _print_claim_detail(console, a)
    r = Table(title="Headline ranges")
    for col in ("range", "stated", "members", "verdict"):
        r.add_column(col)
    for g in report.ranges:
        r.add_row(
            g.statement,
            f"{g.stated_min}-{g.stated_max}x",
            "; ".join(g.findings),
            f"[{_VERDICT_STYLE[g.verdict]}]{g.verdict}[/]",
        )
    console.print(r)
    console.print("[bold]Verdict rules[/]")
    for rule in report.rules:
        console.print(f"- {rule}")


def _print_claim_detail(console: Console, a: ClaimAudit) -> None:
    console.print(f"[bold]{a.claim_id}[/] {a.statement}")
    for f in a.findings:
        console.print(f"  - {f}")
    if a.boundary:
        b0 = a.boundary[0]
        console.print(
            f"  - implied throughput per accelerator: {num(b0.system_tput_per_accelerator)} vs "
            f"{num(b0.baseline_tput_per_accelerator)} tok/s"
        )
    for b in a.boundary:
        sys_b = b.system_basis.label() if b.system_basis else "per accelerator"
        base_b = b.baseline_basis.label() if b.baseline_basis else "per accelerator"
        like = "like for like" if b.like_for_like else "NOT like for like"
        console.print(f"  - power {b.label}: {sys_b} vs {base_b} -> {b.ratio:.3g}x ({like})")


@app.command("import")
def import_cmd(
    files: Annotated[list[Path], typer.Argument(help="InferenceX agg_*.json / AIPerf exports.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory for summary.json.")],
    system: Annotated[str | None, typer.Option(help="Label to set (AIPerf has none).")] = None,
    framework: Annotated[
        str | None, typer.Option(help="Serving framework label to set, e.g. vllm.")
    ] = None,
    precision: Annotated[
        str | None, typer.Option(help="Precision label to set, e.g. fp8, mxfp4.")
    ] = None,
    accelerators: Annotated[
        int | None, typer.Option(help="Accelerators behind the endpoint (AIPerf).")
    ] = None,
) -> None:
    """Import published or peer results as a scoville summary (frontiers, compare, audit)."""
    from scoville.analysis.importers import looks_like_aiperf, rows_from_aiperf
    from scoville.analysis.load import load_rows
    from scoville.bundle.files import read_json
    from scoville.bundle.summary import summary_doc, write_summary

    labels = {
        k: v
        for k, v in (("system", system), ("framework", framework), ("precision", precision))
        if v is not None
    }
    rows: list[dict[str, Any]] = []
    for f in files:
        doc = read_json(f)
        if looks_like_aiperf(doc):
            got = rows_from_aiperf(doc, str(f), n_accelerators=accelerators, **labels)
        else:
            got = [dict(r, **labels) for r in load_rows(f)]
        rows.extend(dict(r) for r in got)
    path = write_summary(out, summary_doc(f"import-{out.name}", rows, spec_hash=None, labels={}))
    typer.echo(f"imported {len(rows)} points into {path}")
