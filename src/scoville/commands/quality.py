"""CLI for quality equivalence: `scoville quality --reference T --candidate T`.

Opens both targets (as `run` does: embedded with its modes, or a URL), runs the quality
passes from `scoville.quality`, writes `quality.json` and prints the verdicts.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from scoville.errors import UserError
from scoville.quality.datasets import DEFAULT_TASKS, resolve_tasks
from scoville.quality.gate import TWIN_REFUSAL
from scoville.quality.items import Item

if TYPE_CHECKING:
    from scoville.quality.passes import PassConfig, Passes
    from scoville.targets.base import Target

app = typer.Typer(add_completion=False)
console = Console()


def _check_inputs(reference: str, candidate: str, items: int, margin: float) -> None:
    for name, url in (("--reference", reference), ("--candidate", candidate)):
        if url.startswith("twin:"):
            raise UserError(f"{name} {url}: {TWIN_REFUSAL}")
    if items < 1:
        raise UserError(f"--items {items}: give at least 1 item per task.")
    if not 0.0 < margin < 0.5:
        raise UserError(
            f"--margin {margin}: the relative accuracy margin must lie in (0, 0.5); "
            "0.01 keeps 99 % of the reference's accuracy (MLPerf), 0.001 keeps 99.9 %."
        )


def _open(url: str, item_list: list[Item], slots: int) -> Target:
    """Open a target sized for the items (embedded: context for the longest prompt)."""
    from scoville.spec.load import load_spec
    from scoville.targets.registry import open_target

    isl = max(len(it.prompt) // 2 + 16 for it in item_list)  # >= 2 characters per token
    osl = max(it.max_tokens for it in item_list)
    spec = load_spec(
        None,
        [
            f"target.url={url}",
            f"load.concurrency={slots}",
            f"shape.isl_tokens={isl}",
            f"shape.osl_tokens={osl}",
        ],
    )
    return open_target(spec)


async def _measure(ref_t: Target, cand_t: Target, item_list: list[Item], cfg: PassConfig) -> Passes:
    from scoville.quality.passes import Endpoint, run_passes

    def endpoint(label: str, t: Target) -> Endpoint:
        return Endpoint(label, t.server, t.model, t.tokenizer, t.info)

    try:
        return await run_passes(
            endpoint(ref_t.info.get("label", ""), ref_t),
            endpoint(cand_t.info.get("label", ""), cand_t),
            item_list,
            cfg,
        )
    finally:
        await ref_t.close()
        await cand_t.close()


def _pct(x: Any) -> str:
    return f"{100 * x:.1f} %" if isinstance(x, (int, float)) else "-"


def _iv(iv: Any) -> str:
    return f"{_pct(iv['estimate'])} [{_pct(iv['lo'])}, {_pct(iv['hi'])}]" if iv else "-"


Row = tuple[str, str, str]


def _accuracy_rows(doc: dict[str, Any]) -> list[Row]:
    acc, cnt = doc["accuracy"], doc["counts"]
    r, c = cnt["reference"], cnt["candidate"]
    toks = doc["tokens_per_sample"]
    ratio = toks.get("ratio")
    return [
        (
            "task accuracy",
            f"reference {_iv(acc['reference_interval'])}, candidate "
            f"{_iv(acc['candidate_interval'])}; difference {_iv(acc['diff_interval'])}; "
            f"McNemar p {acc['mcnemar_p']:.3g}\nright/wrong/failed: reference "
            f"{r['right']}/{r['wrong']}/{r['failed_items']}, candidate "
            f"{c['right']}/{c['wrong']}/{c['failed_items']}",
            f"{acc['verdict']}: {escape(acc['reason'])}",
        ),
        (
            "tokens per sample",
            f"ratio {ratio:.3f} (90-110 % allowed)" if ratio else escape(toks.get("reason", "-")),
            {True: "within", False: "OUTSIDE", None: "-"}[toks.get("ok")],
        ),
    ]


def _token_rows(doc: dict[str, Any]) -> list[Row]:
    rows: list[Row] = []
    for name, key in (
        ("token agreement", "token_agreement"),
        ("batch invariance", "batch_invariance"),
    ):
        a = doc.get(key)
        if a is None:
            continue
        if a.get("refused"):
            rows.append((name, escape(a["refused"]), "refused"))
            continue
        med = a["divergence_median"]
        n_div = len(a["divergence_positions"])
        figs = (
            f"tokens before first divergence {_iv(a['prefix_share'])}; identical items "
            f"{_iv(a['whole_match'])}; first divergence median "
            f"{'-' if med is None else f'{med:.0f}'} ({n_div} of {a['items']} diverge)"
        )
        rows.append((name, figs, a["verdict"]))
    lp = doc["logprob_divergence"]
    if "kl_mean" not in lp:
        return [
            *rows,
            ("logprob divergence", escape(lp.get("not_available") or lp.get("refused", "")), "-"),
        ]
    figs = (
        f"KL mean {lp['kl_mean']:.4f} nats (p90 {lp['kl_p90']:.4f}), TV mean "
        f"{lp['tv_mean']:.4f}; top token differs at {_pct(lp['top_mismatch_share'])} of "
        f"{lp['positions']} positions on the reference's path"
    )
    return [*rows, ("logprob divergence", figs, "measured")]


def _table(doc: dict[str, Any]) -> Table:
    t = Table(title=f"quality: {escape(doc['reference'])} vs {escape(doc['candidate'])}")
    for col in ("instrument", "figures", "verdict"):
        t.add_column(col)
    for row in (*_accuracy_rows(doc), *_token_rows(doc)):
        t.add_row(*row)
    return t


@app.command("quality")
def quality_cmd(
    reference: Annotated[
        str, typer.Option(help="Reference target: embedded, embedded?kv=q4_0, http://HOST:PORT.")
    ],
    candidate: Annotated[str, typer.Option(help="Candidate target, same forms as --reference.")],
    tasks: Annotated[
        str,
        typer.Option(
            help="Comma list: generated copy,kv,arith,json,free; files as FORMAT=PATH "
            "(FORMAT: items, gsm8k, mmlu, gpqa, bfcl)."
        ),
    ] = DEFAULT_TASKS,
    items: Annotated[int, typer.Option(help="Items per task.")] = 8,
    out: Annotated[Path, typer.Option(help="Directory for quality.json.")] = Path("quality"),
    margin: Annotated[
        float, typer.Option(help="Relative accuracy margin: 0.01 = 99 % (MLPerf), 0.001 = 99.9 %.")
    ] = 0.01,
    top_k: Annotated[int, typer.Option(help="Top-k logprobs asked per token (0: none).")] = 5,
    concurrency: Annotated[int, typer.Option(help="Requests in flight per target.")] = 1,
    batch_concurrency: Annotated[
        int | None,
        typer.Option(help="Also run the reference at this concurrency (batch invariance)."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed for generated items and requests.")] = 0,
) -> None:
    """Is the candidate the same model as the reference? Token agreement, logprob divergence
    and task accuracy, with verdicts: equivalent / not equivalent / not enough evidence."""
    from scoville.quality.outcome import build_report
    from scoville.quality.passes import PassConfig

    _check_inputs(reference, candidate, items, margin)
    item_list = resolve_tasks(tasks, items, seed)
    slots = max(concurrency, batch_concurrency or 1)
    cfg = PassConfig(
        seed=seed, top_k=top_k, concurrency=concurrency, batch_concurrency=batch_concurrency
    )
    console.print(f"{len(item_list)} items; opening {reference} and {candidate}")
    ref_t = _open(reference, item_list, slots)
    try:
        cand_t = _open(candidate, item_list, slots)
    except BaseException:
        asyncio.run(ref_t.close())
        raise
    ref_t.info["label"], cand_t.info["label"] = reference, candidate
    passes = asyncio.run(_measure(ref_t, cand_t, item_list, cfg))
    doc = build_report(passes, {"reference": reference, "candidate": candidate}, margin, seed)
    doc["targets"] = {"reference": _facts(ref_t.info), "candidate": _facts(cand_t.info)}
    out.mkdir(parents=True, exist_ok=True)
    path = out / "quality.json"
    path.write_text(json.dumps(doc, indent=1, default=str) + "\n", encoding="utf-8")
    console.print(_table(doc))
    console.print(f"[dim]{escape(passes.tokenizer_note)}; {escape(passes.resume_note)}[/dim]")
    console.print(f"verdict: [bold]{doc['verdict']}[/bold]  ({doc['wall_s']:.1f} s)  {path}")


def _facts(info: dict[str, Any]) -> dict[str, Any]:
    keep = ("embedded", "tokenizer", "props")
    return {k: info[k] for k in keep if k in info}
