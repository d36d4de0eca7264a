"""CLI for claims as test matrices: `scoville claims plan` (frozen specs per side, twin runs
where the catalogue has the hardware) and `scoville claims verify` (verdicts from runs).
Mounted on the `claims` group beside `claims audit` by `mount`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from scoville.analysis.claims import ClaimFile, Side
    from scoville.analysis.claims_plan import ClaimPlan, SidePlan
    from scoville.analysis.rows import Row

PLAN_FILE = "plan.json"


def mount(claims_app: typer.Typer) -> None:
    """Add `plan` and `verify` to the `claims` command group."""
    claims_app.command("plan")(plan_cmd)
    claims_app.command("verify")(verify_cmd)


def _pairs(specs: list[str] | None, flag: str) -> dict[str, str]:
    from scoville.errors import UserError

    out = {}
    for s in specs or []:
        k, eq, v = s.partition("=")
        if not eq or not k or not v:
            raise UserError(f"{flag} {s!r} should look like SIDE=VALUE.")
        out[k.strip()] = v.strip()
    return out


def _twin_model(name: str) -> str | None:
    """The twin catalogue's model for a claim's model name (size suffixes tolerated)."""
    from scoville.analysis.comparable import same_model
    from scoville.twin.catalogue import load_catalogue

    models = load_catalogue().models.values()
    hits = [m.name for m in models if any(same_model(name, n) for n in (m.name, *m.aliases))]
    return max(hits, key=len) if hits else None


def _twin_run(
    plan: SidePlan, side: Side, hardware: str, out: Path, rpp: int | None, profile: Path | None
) -> dict[str, Any]:
    """Simulate one side with the twin (`run` on its fast executor) and write its bundle, with
    the power profile frozen in (per-kW at each boundary, the twin's labelled estimate); or
    say why not."""
    from scoville.errors import UserError
    from scoville.pipeline import run_benchmark
    from scoville.twin.catalogue import load_catalogue
    from scoville.twin.options import TwinOptions
    from scoville.twin.simulate import twin_spec

    model = _twin_model(side.model or "")
    if model is None:
        return {"run": None, "why": f"model {side.model!r} is not in the twin catalogue"}
    try:
        hw = load_catalogue().get_hardware(hardware)
        opts = TwinOptions(hardware=hw.name, model=model, tp=plan.tp, executor="fast")
        s = plan.spec
        shape = {"isl_tokens": s.shape.isl_tokens, "osl_tokens": s.shape.osl_tokens,
                 "range_ratio": s.shape.range_ratio}  # fmt: skip
        load = {"concurrency": tuple(s.load.concurrency), "requests_per_point": rpp}
        spec = twin_spec(opts, opts.config(), shape, load, power_profile=profile)
    except UserError as e:
        return {"run": None, "why": str(e)}
    result = run_benchmark(spec, out, keep_records=False)
    deployment = opts.model_copy(update={"executor": "driver"}).url()  # how it ran is not what
    return {"run": str(result.run_dir), "url": deployment, "hardware": hw.name, "model": model}


def _commands(
    sid: str, plan: SidePlan, spec_path: Path, twin: dict[str, Any], profile: Path | None
) -> list[str]:
    s = plan.spec
    prof = f" --power-profile {profile}" if profile else ""
    conc = ",".join(str(c) for c in s.load.concurrency)
    cmds = [f"scoville run --spec {spec_path} --target http://HOST:PORT --out runs/{sid}"]
    if twin.get("url"):
        cmds.append(
            f"scoville simulate --hardware {twin['hardware']} --model {twin['model']} "
            f"--tp {plan.tp} --isl {s.shape.isl_tokens} --osl {s.shape.osl_tokens} "
            f"--range-ratio {s.shape.range_ratio:g} --concurrency {conc}{prof} "
            f"--out runs/{sid}-twin"
        )
    return cmds


def plan_cmd(
    file: Annotated[Path, typer.Argument(help="Claim file (YAML, scoville.claims/1).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory for the plan.")],
    twin: Annotated[bool, typer.Option(help="Run the twin for sides it can simulate.")] = True,
    twin_as: Annotated[
        list[str] | None,
        typer.Option(help="Simulate a side as other catalogue hardware, e.g. SIDE=Jalapeno-B0."),
    ] = None,
    concurrency: Annotated[str, typer.Option(help="Sweep for every side.")] = "1,2,4,8,16,32,64",
    requests_per_point: Annotated[int | None, typer.Option(help="Twin: default 10 x conc.")] = None,
    power_profile: Annotated[
        Path | None,
        typer.Option(
            help="Power profile (YAML): frozen into every spec and twin run, so they record "
            "per kW at the claim's boundary."
        ),
    ] = None,
) -> None:
    """Turn a claim file into frozen spec files per side, twin runs and the commands to run."""
    from scoville.analysis.claims import load_claims
    from scoville.analysis.claims_plan import plan_claims
    from scoville.spec.lists import parse_list
    from scoville.spec.power import read_profile

    cf = load_claims(file)
    conc = parse_list(concurrency, "--concurrency", int, minimum=1, example="1,2,4")
    profile = read_profile(str(power_profile)) if power_profile else None
    sides, claims = plan_claims(cf, conc, profile)
    as_hw = _pairs(twin_as, "--twin-as")
    doc: dict[str, Any] = {"claim_file": str(file), "sides": {}, "claims": []}
    if power_profile:
        doc["power_profile"] = str(power_profile)
    for sid, plan in sides.items():
        hw = as_hw.get(sid, plan.system)
        doc["sides"][sid] = entry = _write_side(sid, plan, cf.sides[sid], out, hw, twin,
                                                requests_per_point, power_profile)  # fmt: skip
        typer.echo(_side_line(sid, plan, entry["twin"]))
        if profile is not None:
            typer.echo(_profile_line(sid, plan, entry["twin"], profile))
    for c in claims:
        doc["claims"].append(_asdict(c))
        if line := _claim_line(c):
            typer.echo(line)
    doc["verify"] = f"scoville claims verify {file} {out}"
    (out / PLAN_FILE).write_text(json.dumps(doc, indent=2), "utf-8")
    typer.echo(f"plan: {out / PLAN_FILE}\nnext: {doc['verify']}")


def _write_side(
    sid: str, plan: SidePlan, side: Side, out: Path, hw: str, twin: bool, rpp: int | None,
    profile: Path | None,
) -> dict[str, Any]:  # fmt: skip
    """Write one side's spec.yaml (and twin run) under `out/sid`; its plan.json entry."""
    import yaml

    d = out / sid
    d.mkdir(parents=True, exist_ok=True)
    spec_path = d / "spec.yaml"
    spec_path.write_text(yaml.safe_dump(plan.spec.to_dict(), sort_keys=False), "utf-8")
    tw = _twin_run(plan, side, hw, d / "twin", rpp, profile) if twin else {}
    if hw != plan.system and tw.get("run"):
        tw["stands_in_for"] = plan.system
    return {
        "system": plan.system, "spec": str(spec_path), "spec_hash": plan.spec.content_hash(),
        "assumed": list(plan.assumed), "twin": tw,
        "commands": _commands(sid, plan, spec_path, tw, profile),
    }  # fmt: skip


def _claim_line(c: ClaimPlan) -> str | None:
    if not c.like:
        return f"claim {c.claim_id}: not like for like as stated: {'; '.join(c.reasons)}"
    if c.boundary:
        return f"claim {c.claim_id}: per kW judged at the {c.boundary} boundary" + _measured_note(
            c.boundary
        )
    return None


def _asdict(x: Any) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(x)


def _side_line(sid: str, plan: SidePlan, tw: dict[str, Any]) -> str:
    twin = (
        f"twin run {tw['run']} ({tw['url']})"
        if tw.get("run")
        else f"no twin run: {tw.get('why', 'twin off')}"
    )
    return f"{sid}: spec {plan.spec.content_hash()}, {len(plan.assumed)} assumption(s); {twin}"


def _measured_note(boundary: str) -> str:
    from scoville.analysis.boundaries import MEASURED

    if boundary not in MEASURED:
        return ""
    return " (measured power: twin runs cannot give it, only a measured run with telemetry)"


def _profile_line(sid: str, plan: SidePlan, tw: dict[str, Any], profile: dict[str, Any]) -> str:
    """Which entry of the power profile each side's runs will read, or that it has none."""
    names = {n.lower(): n for n in profile.get("accelerators", {})}
    systems = [plan.system] + ([tw["hardware"]] if tw.get("hardware") else [])
    found = [names[x.lower()] for x in systems if x.lower() in names]
    if found:
        return f"  {sid}: power profile entry {found[-1]!r}"
    return (
        f"  {sid}: the power profile has no entry for {' or '.join(dict.fromkeys(systems))} "
        f"(it has {', '.join(names.values())}): its runs are expressed only at the power "
        "their spec declares (a twin run: its catalogue TDP)"
    )


def _side_rows(
    cf: ClaimFile, paths: list[Path], explicit: dict[str, str]
) -> tuple[dict[str, list[Row]], dict[str, Path]]:
    """Runs per side: plan directories (plan.json), --side SIDE=PATH, else matched by the
    runs' system and model."""
    from scoville.analysis.comparable import model_key, same_model
    from scoville.analysis.profile import load_rows_with_runs
    from scoville.analysis.rows import group_rows
    from scoville.errors import UserError

    dirs: dict[str, Path] = {sid: Path(p) for sid, p in explicit.items()}
    loose: list[Path] = []
    for p in paths:
        if (p / PLAN_FILE).is_file():
            plan = json.loads((p / PLAN_FILE).read_text("utf-8"))
            for sid, s in plan.get("sides", {}).items():
                if s.get("twin", {}).get("run") and sid not in dirs:
                    dirs[sid] = Path(s["twin"]["run"])
        else:
            loose.append(p)
    rows: dict[str, list[Row]] = {}
    for sid, d in dirs.items():
        if sid not in cf.sides:
            raise UserError(f"--side {sid}: no such side; sides: {', '.join(cf.sides)}.")
        rows[sid] = load_rows_with_runs([d])
    for p in loose:
        for key, grp in group_rows(load_rows_with_runs([p])).items():
            for sid, side in cf.sides.items():
                if sid in rows or model_key(side.system) != model_key(key.system):
                    continue
                if side.model is None or same_model(side.model, key.model):
                    rows[sid], dirs[sid] = list(grp), p
    return rows, dirs


def verify_cmd(
    file: Annotated[Path, typer.Argument(help="Claim file (YAML, scoville.claims/1).")],
    runs: Annotated[
        list[Path], typer.Argument(help="Run directories, result files or plan directories.")
    ],
    side: Annotated[
        list[str] | None, typer.Option(help="Assign a run to a side: SIDE=PATH (repeatable).")
    ] = None,
    allow_unlike: Annotated[
        bool, typer.Option(help="Judge unlike pairs anyway (labelled in every output).")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    power_profile: Annotated[
        Path | None,
        typer.Option(
            help="Power profile (YAML): per-kW claims are re-expressed at the claim's boundary "
            "with it (else with what the runs recorded)."
        ),
    ] = None,
) -> None:
    """Verdicts from runs: reproduced / not reproduced / not like-for-like / unverifiable.
    A per-kW claim is judged at the power boundary the claim states."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from scoville.analysis.claims import load_claims
    from scoville.analysis.claims_verify import RULES, verify_claim
    from scoville.analysis.load import load_point_arrays
    from scoville.analysis.profile import load_profile

    cf = load_claims(file)
    if power_profile is not None:
        load_profile(power_profile)  # a bad profile stops here, naming the field
    rows, dirs = _side_rows(cf, runs, _pairs(side, "--side"))
    arrays = {
        sid: load_point_arrays(d) for sid, d in dirs.items() if (d / "records.jsonl").exists()
    }
    results = [verify_claim(c, cf, rows, arrays, allow_unlike, power_profile) for c in cf.claims]
    if as_json:
        typer.echo(json.dumps([r.to_dict() for r in results], indent=2, default=str))
        return
    console = Console()
    t = Table(title=f"{cf.title}: verified against runs")
    for col in ("claim", "stated", "runs", "95 % interval", "per kW at", "verdict", "evidence"):
        t.add_column(col)
    for r in results:
        iv = f"[{r.ratio_lo:.3g}, {r.ratio_hi:.3g}]" if r.ratio_lo and r.ratio_hi else "-"
        t.add_row(
            r.claim_id,
            f"{r.stated_ratio:.3g}x" if r.stated_ratio else "-",
            f"{r.ratio:.3g}x" if r.ratio else "-",
            iv,
            r.boundary or "-",
            r.label(),
            f"{r.evidence} (claim: {r.claim_evidence})",
        )
    console.print(t)
    for r in results:
        for why in r.reasons:
            console.print(f"  {r.claim_id}: {escape(why)}")
    for rule in RULES:
        console.print(f"[dim]- {escape(rule)}[/dim]")
