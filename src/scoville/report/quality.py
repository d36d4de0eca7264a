"""The report's quality parts: each run's quality status beside the frontier charts, and a
section per run with a quality pass (quality.json): pass rate with its interval, per task,
the status rule's reason, the equivalence verdicts against a reference, and every item.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

NOT_MEASURED = "not measured"
MAX_ITEM_ROWS = 200  # items listed in the page; quality.json holds all


def _pct(x: Any) -> str:
    return f"{100 * x:.1f} %" if isinstance(x, (int, float)) else "-"


def rate_text(rate: Mapping[str, Any] | None) -> str:
    """'85.0 % [64.0, 94.8] of 20' or '-'."""
    if not rate:
        return "-"
    lo, hi = 100 * rate["lo"], 100 * rate["hi"]
    return f"{_pct(rate['estimate'])} [{lo:.1f}, {hi:.1f}] of {rate['n']}"


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A table of already-escaped cells; the first column left-aligned."""
    out = ["<div class='scroll'><table><tr>"]
    out += [f"<th class='l'>{h}</th>" if i == 0 else f"<th>{h}</th>" for i, h in enumerate(head)]
    out.append("</tr>")
    for r in rows:
        cells = [f"<td class='l'>{c}</td>" if i == 0 else f"<td>{c}</td>" for i, c in enumerate(r)]
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</table></div>")
    return "".join(out)


def status_strip(runs: Sequence[tuple[str, Mapping[str, Any] | None]]) -> str:
    """One line per run under the frontier: its quality status and pass rate (95 % Wilson);
    a run without a quality pass is 'not measured'."""
    rows = []
    for label, doc in runs:
        status = str((doc or {}).get("status", NOT_MEASURED))
        cls = "" if status == "qualified" else " class='bad'"
        rows.append(
            (
                escape(label),
                f"<span{cls}>{escape(status)}</span>",
                escape(rate_text((doc or {}).get("pass_rate"))),
                escape(str((doc or {}).get("reason", "no quality pass (spec.quality unset)"))),
            )
        )
    head = ("run", "quality", "pass rate [95 % CI] of items", "why")
    return "<p class='note'>Quality of each run on the frontier above:</p>" + _table(head, rows)


def _task_rows(doc: Mapping[str, Any]) -> list[tuple[str, ...]]:
    return [
        (escape(task), str(t["items"]), str(t["right"]), _pct(t["right"] / t["items"]))
        for task, t in doc.get("by_task", {}).items()
        if t["items"]
    ]


def _equivalence(eq: Mapping[str, Any]) -> str:
    acc, agree = eq["accuracy"], eq.get("token_agreement") or {}
    diff = acc.get("diff_interval") or {}
    lines = [
        f"equivalence verdict: <b>{escape(str(eq['verdict']))}</b>",
        f"accuracy: {escape(str(acc['verdict']))} ({escape(str(acc['reason']))}); difference "
        f"{_pct(diff.get('estimate'))} [{_pct(diff.get('lo'))}, {_pct(diff.get('hi'))}] "
        f"(90 % paired bootstrap), McNemar p {acc['mcnemar_p']:.3g}",
    ]
    if agree.get("refused"):
        lines.append(f"token agreement refused: {escape(str(agree['refused']))}")
    elif agree:
        share, still = agree.get("prefix_share") or {}, agree.get("still_matching") or []
        by_pos = ", ".join(f"{p}: {_pct(s)}" for p, s in still)
        lines.append(
            f"token agreement: {escape(str(agree['verdict']))}; tokens before the first "
            f"divergence {_pct(share.get('estimate'))} [{_pct(share.get('lo'))}, "
            f"{_pct(share.get('hi'))}]; "
            f"items still identical by token position {escape(by_pos)}"
        )
    lp = eq.get("logprob_divergence") or {}
    if "kl_mean" in lp:
        lines.append(
            f"logprob divergence: KL mean {lp['kl_mean']:.4f} nats, top token differs at "
            f"{_pct(lp['top_mismatch_share'])} of {lp['positions']} positions"
        )
    else:
        why = lp.get("not_available") or lp.get("refused") or "-"
        lines.append(f"logprob divergence: {escape(str(why))}")
    return "<ul>" + "".join(f"<li>{x}</li>" for x in lines) + "</ul>"


def _item_rows(items: Sequence[Mapping[str, Any]]) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for it in items[:MAX_ITEM_ROWS]:
        c = it["candidate"]
        right = {True: "yes", False: "no", None: "-"}[c["right"]]
        lp = it.get("logprob") or {}
        score = lp.get("mean_logprob", lp.get("kl_mean"))
        div = it.get("divergence_position")
        out.append(
            (
                escape(str(it["id"])),
                escape(str(it["answer"])),
                escape(str(c["extracted"])),
                "FAILED: " + escape(str(c["failed"])) if c["failed"] else right,
                "-" if div is None else str(div),
                "-" if score is None else f"{score:.4f}",
            )
        )
    return out


def quality_section(label: str, doc: Mapping[str, Any]) -> str:
    """The section of one run's quality pass."""
    counts = doc["counts"]["target"]
    ref_rate = doc.get("reference_pass_rate")
    parts = [
        f"<h3>Quality of {escape(label)}: {escape(str(doc['status']))}</h3>",
        f"<p>{escape(str(doc['reason']))}. Pass rate {escape(rate_text(doc.get('pass_rate')))} "
        "(95 % Wilson score interval)"
        + (f"; reference {escape(rate_text(ref_rate))}" if ref_rate else "")
        + f". Right / wrong / failed: {counts['right']} / {counts['wrong']} / "
        f"{counts['failed_items']} of {counts['items']} judged items; measured "
        f"{escape(str(doc['when']))} in {doc['wall_s']:.1f} s.</p>",
        _table(("task", "items", "right", "pass rate"), _task_rows(doc)),
    ]
    if doc.get("equivalence"):
        parts.append(_equivalence(doc["equivalence"]))
    items = doc.get("items") or []
    head = ("item", "answer", "extracted", "right", "divergence at", "logprob score")
    parts.append(
        f"<details><summary>{len(items)} items (first {MAX_ITEM_ROWS} shown; all in "
        f"quality.json)</summary>{_table(head, _item_rows(items))}</details>"
    )
    return "".join(parts)
