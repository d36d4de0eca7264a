"""CLI for the twin's calibration: `scoville twin validate` (predicted vs published by split,
error by regime and signed bias) and `scoville twin fit` (named free parameters on the dev
split only). Mounted on the `twin` group by `commands/twin.py`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from scoville.errors import UserError
from scoville.twin.splits import SPLITS

# the blind splits for --split's help, from the split names (the first three, then from blind22)
_BLINDS = [s for s in SPLITS if s.startswith("blind")]
_BLIND_HELP = ", ".join([*_BLINDS[:3], "...", *_BLINDS[_BLINDS.index("blind22") :]])

if TYPE_CHECKING:
    from scoville.twin.accuracy import RegimeError
    from scoville.twin.calibration import CalPoint, Comparison
    from scoville.twin.cluster import TwinConfig

console = Console()


def validate_cmd(
    requests_per_point: Annotated[
        int | None, typer.Option(help="Default 10 x conc (capped for very large sweeps).")
    ] = None,
    split: Annotated[
        str,
        typer.Option(
            help="test (held out), dev, seed, late (added after the freeze), "
            f"{_BLIND_HELP} (frozen before the twin ever ran on them) or all."
        ),
    ] = "test",
    only: Annotated[str | None, typer.Option(help="Only points whose id contains this.")] = None,
    quick: Annotated[bool, typer.Option(help="Fewer requests per point (as `twin fit`).")] = False,
    jobs: Annotated[
        int,
        typer.Option(help="Processes that simulate points at once (the same figures).", min=1),
    ] = 1,
    json_out: Annotated[
        Path | None,
        typer.Option(
            "--json",
            help="Also write every row (published, predicted, error, regimes, URL) and each "
            "split's regime errors and targets verdict to this JSON file.",
        ),
    ] = None,
) -> None:
    """Predicted vs published on the frozen test split, with error by regime and signed bias."""
    from scoville.twin.calibration import load_book, validate
    from scoville.twin.splits import LATER_BLIND

    if split not in (*SPLITS, "all"):
        raise UserError(f"--split must be {', '.join(SPLITS)} or all.")
    book = load_book()
    held = book.held_splits() if split == "all" else ()
    points = [
        p
        for p in book.points
        if (p.split == split or (split == "all" and p.split not in held))
        and (only is None or only in p.id)
    ]
    for name in held:
        console.print(
            f"left out of all: the {name} split is held for the next model change and has "
            f"never been looked at; its first look is `--split {name}`, on purpose"
        )
    moved = [p for p in book.points if split != "all" and (p.was or "").startswith(f"{split} ")]
    if not points and moved:
        console.print(
            f"the {split} split holds no rows now: its {len(moved)} rows were seen and moved to "
            f"dev (each says `was: {split} ...`), where `twin fit` reads them; its freeze text "
            "below says when and why"
        )
    rows = validate(points, requests_per_point, quick=quick, jobs=jobs)
    table = Table(title=f"twin calibration ({split} split): predicted vs published")
    # a long point id folds onto more lines; the figures never do (an 80-column log or pipe
    # would otherwise squeeze them out of sight)
    table.add_column("point", overflow="fold", min_width=12)
    for col in ("split", "metric", "published", "predicted", "error"):
        table.add_column(col, justify="right", no_wrap=True)
    for c in rows:
        table.add_row(
            c.point_id,
            c.role,
            c.metric,
            f"{c.published:,.2f}",
            f"{c.predicted:,.2f}",
            f"{c.error:+.1%}",
        )
    console.print(table)
    _print_regimes(rows, split)
    _print_quick_note(rows, quick)
    if json_out is not None:
        _write_validation(
            json_out, rows, points, split, book.frozen.date, quick, requests_per_point
        )
        console.print(f"rows and regimes written to {escape(str(json_out))}")
    console.print(
        f"split frozen {book.frozen.date}: {escape(book.frozen.rule)}; `twin fit` reads dev "
        "rows only"
    )
    for e in book.frozen.errata:
        console.print(f"erratum: {escape(e)}")
    if book.frozen.late and split in ("late", "all"):
        console.print(f"late rows: {escape(book.frozen.late)}")
    if book.frozen.blind and split in ("blind", "all"):
        console.print(f"blind rows: {escape(book.frozen.blind)}")
    for name in LATER_BLIND:
        text = getattr(book.frozen, name)
        if text and split in (name, "all"):
            console.print(f"{name} rows: {escape(text)}")
    _print_sources(points)


def deployment_lines(cfg: TwinConfig) -> list[str]:
    """What a prediction for `cfg` rests on besides its URL, as `simulate` and `twin validate`
    print it: each setting its engine chose because the deployment left it unset
    (`TwinConfig.notes`), the speculative acceptance it assumes, what its software date did,
    and each factor no dev row informs."""
    from scoville.twin.coverage import uncalibrated

    lines = [f"[yellow]engine default[/yellow] {escape(note)}" for note in cfg.notes]
    if accept := cfg.parallel.spec.describe():
        lines.append(f"[yellow]acceptance[/yellow] {escape(accept)}")
    if software := cfg.labels.get("software"):
        lines.append(f"[yellow]software date[/yellow] {escape(software)}")
    lines += [f"[yellow]uncalibrated[/yellow] {escape(line)}" for line in uncalibrated(cfg)]
    return lines


def _print_sources(points: list[CalPoint]) -> None:
    """Each point's source and what its prediction rests on (`deployment_lines`)."""
    from scoville.twin.calibration import point_options

    for p in points:
        console.print(f"{p.id}: {escape(p.source)}")
        for line in deployment_lines(point_options(p).config()):
            console.print(f"{p.id}: {line}")


def _split_errors(
    rows: list[Comparison], split: str
) -> list[tuple[str, list[RegimeError], list[str]]]:
    """(split, its errors by regime, the targets it misses) for each split `rows` hold."""
    from scoville.twin.accuracy import by_regime, missed_targets
    from scoville.twin.splits import SPLITS

    out = []
    for sp in SPLITS if split == "all" else (split,):
        regs = by_regime(rows, sp)
        if regs:
            out.append((sp, regs, missed_targets(regs)))
    return out


def _write_validation(
    path: Path,
    rows: list[Comparison],
    points: list[CalPoint],
    split: str,
    frozen: str,
    quick: bool,
    requests_per_point: int | None,
) -> None:
    """`twin validate --json`: every compared row with its point's deployment, then each
    split's errors by regime and the targets it misses (what the terminal shows, as data)."""
    from scoville.bundle.files import write_json
    from scoville.twin.accuracy import TARGETS

    by_id = {p.id: p for p in points}

    def row(c: Comparison, p: CalPoint) -> dict[str, object]:
        return {
            "point_id": c.point_id,
            "split": c.role,
            "metric": c.metric,
            "published": c.published,
            "predicted": c.predicted,
            "error": c.error,
            "regimes": list(c.regimes),
            "url": p.url,
            "isl_tokens": p.isl_tokens,
            "osl_tokens": p.osl_tokens,
            "concurrency": p.concurrency,
            "requests": p.requests,
            "request_rate": p.request_rate,
            "lengths": p.lengths,
            "run_date": p.run_date,
            "medians_ratio": c.medians_ratio,
            "served_share": c.served_share,
        }

    write_json(
        path,
        {
            "schema": "scoville.twin.validate/1",
            "split": split,
            "quick": quick,
            "requests_per_point": requests_per_point,
            "frozen": frozen,
            "targets": TARGETS,
            "error": "(predicted - published) / published; a regime's figures are the median "
            "|error| and the median signed error (bias)",
            "rows": [row(c, by_id[c.point_id]) for c in rows],
            "splits": {
                sp: {
                    "targets_met": not missed,
                    "missed": missed,
                    "regimes": [dataclasses.asdict(r) for r in regs],
                }
                for sp, regs, missed in _split_errors(rows, split)
            },
        },
    )


def _print_quick_note(rows: list[Comparison], quick: bool) -> None:
    """Under --quick, what an open-loop row's latencies are."""
    if quick and any(c.served_share is not None for c in rows):
        from scoville.twin.openloop import QUICK_CAP

        console.print(
            f"--quick: open-loop rows are simulated on {QUICK_CAP:,} arrivals, which end before "
            "a run near capacity settles; their TPOT and TTFT are the fill-up's (`twin fit` "
            "leaves them out), their throughput is read while requests arrive"
        )


def _print_regimes(rows: list[Comparison], split: str) -> None:
    from scoville.twin.accuracy import TARGETS
    from scoville.twin.calibration import MEDIANS_FLOOR, STALL_RATIO, STALL_SHARE, STALLED
    from scoville.twin.openloop import SERVED_FLOOR

    for sp, regs, missed in _split_errors(rows, split):
        table = Table(title=f"error by regime ({sp} split): median |error| and signed bias")
        for col in ("regime", "metric", "n", "median |error|", "bias"):
            table.add_column(col, justify="right")
        for r in regs:
            table.add_row(
                r.regime, r.metric, str(r.n), f"{r.median_abs_error:.1%}", f"{r.bias:+.1%}"
            )
        console.print(table)
        verdict = f"not met: {'; '.join(missed)}" if missed else "met"
        console.print(f"targets on {sp} ({escape(TARGETS)}): {escape(verdict)}")
        stalled = sorted({c.point_id for c in rows if c.role == sp and STALLED in c.regimes})
        if stalled:
            console.print(
                f"{STALLED}: {len(stalled)} row(s) of {sp} ({', '.join(stalled)}) whose mean TTFT "
                f"is at least {STALL_RATIO:g}x the median and at least {STALL_SHARE:.0%} of the "
                "mean request time: their published throughput holds a start-up stall the "
                "steady-state twin does not simulate, so `twin fit` leaves it out (a rule "
                "chosen on seen rows)"
            )
        _name_rows(
            {
                (c.point_id, c.served_share)
                for c in rows
                if c.role == sp and c.served_share is not None and c.served_share < SERVED_FLOOR
            },
            f"the twin serves less than {SERVED_FLOOR:.0%} of the offered load",
            f"open-loop row(s) of {sp}",
            "at the published rate the twin's deployment does not keep up (a rate past the "
            "capacity the twin predicts for a run that kept up: its queue, and its TTFT with it, "
            "grow with the simulated window) or is still filling up when the window ends (a "
            "short window, as --quick's); they count as they are",
        )
        _name_rows(
            {
                (c.point_id, c.medians_ratio)
                for c in rows
                if c.role == sp
                and c.medians_ratio is not None
                and c.medians_ratio < MEDIANS_FLOOR
                and STALLED not in c.regimes
            },
            f"published throughput below {MEDIANS_FLOOR:.0%} of what the row's own median TTFT "
            "and TPOT imply (Little's law)",
            f"row(s) of {sp}",
            "time the medians do not show (a skewed TTFT, a start-up stall, failed or retried "
            "requests) is in their published throughput, so part of its error is the run's; they "
            "count as they are",
        )


def _name_rows(named: set[tuple[str, float]], what: str, rows_of: str, why: str) -> None:
    """One line naming the rows (id and value) a check flags, if any: `what`: n `rows_of`
    (id value, ...): `why`."""
    if named:
        listed = ", ".join(f"{pid} {r:.2f}" for pid, r in sorted(named))
        console.print(f"{what}: {len(named)} {rows_of} ({listed}): {why}")


def fit_cmd(
    passes: Annotated[int, typer.Option(help="Coordinate-search passes.", min=1)] = 1,
    jobs: Annotated[
        int,
        typer.Option(
            help="Processes that simulate a trial's points at once (the fit does not depend "
            "on it; 1 = in this process).",
            min=1,
        ),
    ] = 1,
    write: Annotated[
        Path | None, typer.Option(help="Write the fitted profile book here (YAML).")
    ] = None,
    only: Annotated[
        str | None,
        typer.Option(
            help="Fit only the free parameters whose name contains this (e.g. 'sglang'; "
            "several, comma-separated: 'frontend,spec_seq'); the others keep the profile "
            "book's values."
        ),
    ] = None,
    fine: Annotated[
        bool,
        typer.Option(
            help="Trial steps of 5 and 10 % (x0.9, 0.95, 1.05, 1.1) instead of the coarse "
            "x0.5 to 2, to refine a fitted book."
        ),
    ] = False,
) -> None:
    """Fit the twin's named free parameters on the dev split only (the test split stays
    held out); prints each parameter's value and the dev error before and after."""
    import datetime

    import yaml

    from scoville.twin.calibration import load_book
    from scoville.twin.fit import FINE_STEPS, STEPS, fit
    from scoville.twin.free_params import FREE_PARAMS, select_params
    from scoville.twin.profiles import load_profiles

    params = select_params(only)
    if not params:
        console.print(
            f"No free parameter's name contains {only!r}; they are: "
            f"{', '.join(p.name for p in FREE_PARAMS)}."
        )
        raise typer.Exit(2)
    cal = load_book()
    book, before, after = fit(
        cal.points,
        load_profiles(),
        params=params,
        passes=passes,
        log=lambda s: console.print(escape(s)),
        jobs=jobs,
        steps=FINE_STEPS if fine else STEPS,
    )
    console.print(
        "dev loss (weighted mean |log error| of tput/GPU, TPOT and TTFT): "
        f"{before:.4f} -> {after:.4f}"
    )
    if write is None:
        return
    data = book.model_dump(by_alias=True)
    data["fitted"] = {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%MZ"),
        "split": f"dev rows of calibration.yaml (frozen {cal.frozen.date})",
        **({"only": [p.name for p in params]} if only is not None else {}),
        **({"steps": "fine"} if fine else {}),
        "parameters": {p.name: p.get(book) for p in FREE_PARAMS},
        "dev_loss_before": round(before, 4),
        "dev_loss_after": round(after, 4),
    }
    write.write_text(yaml.safe_dump(data, sort_keys=False, width=100), encoding="utf-8")
    console.print(f"wrote {write}")
