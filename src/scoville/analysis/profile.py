"""Power profiles (YAML) and re-expressing point ROWs at one power boundary.

A profile states, per accelerator, what is known about its power (TDP, host/network/cooling
shares, PUE, measured figures and their sources); `at_boundary` turns every ROW's per-kW
figures into figures at one named boundary, refusing a ROW that cannot be expressed there
(measured board power for a twin run, facility power without a PUE).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from scoville.analysis.boundaries import (
    MEASURED,
    boundary_name,
    is_modelled,
    power_of,
    recorded_at,
    watts_at,
)
from scoville.analysis.power import BOUNDARIES, PowerBasis, PowerProfile, with_power
from scoville.analysis.rows import Row, num
from scoville.errors import DataError, UserError
from scoville.spec.model import PowerBoundary
from scoville.spec.power import PowerProfileFile, profile_problem


def profile_for(profile: PowerProfileFile, system: str) -> PowerProfile | None:
    """`system`'s entry of `profile` as the boundary arithmetic reads it, or None."""
    acc = profile.entry(system)
    return power_of(acc, profile.pue) if acc else None


def validation_message(e: ValidationError, what: str) -> str:
    """'WHAT is not valid: field.path: message; ...' for the first problems of a pydantic error."""
    return f"{what} is not valid: {profile_problem(e)}."


def read_yaml(path: Path, what: str) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise DataError(f"{what} {path} does not exist.") from e
    except yaml.YAMLError as e:
        raise DataError(f"{what} {path} is not valid YAML: {e}") from e


def load_profile(path: Path) -> PowerProfileFile:
    """A power-profile file; a negative or missing field, or a PUE below 1, names the field."""
    try:
        return PowerProfileFile.model_validate(read_yaml(path, "power profile"))
    except ValidationError as e:
        raise DataError(validation_message(e, f"power profile {path}")) from e


def basis_for_row(
    row: Row, boundary: PowerBoundary, profile: PowerProfileFile | None
) -> PowerBasis:
    """The watts per accelerator `row` divides by at `boundary` (the profile given, else the
    profile the run recorded), or a UserError saying why the row cannot be expressed there."""
    system = str(row.get("system", "?"))
    if is_modelled(row) and boundary in MEASURED:
        raise UserError(
            f"{system} ({row.get('run_id', 'a twin run')}) is a twin run: it has no measured "
            f"power, so it cannot be expressed at the {boundary} boundary. Use package-tdp, "
            "provisioned-all-in or facility (the twin's estimate) with a power profile, or "
            "compare measured runs."
        )
    got = watts_at(row, boundary, profile) or recorded_at(row, boundary)
    if got is not None:
        return got.basis()
    raise UserError(
        f"{system}: nothing states its power at the {boundary} boundary (the run declares "
        f"{row.get('power_boundary') or 'none'}). Add an entry for {system!r} to the power "
        "profile with the fields that boundary needs (package-tdp: tdp_w; provisioned-all-in: "
        "provisioned_all_in_w, or tdp_w + host_w + network_w + cooling_w or a pue; "
        "board-measured/node-wall: a measured run or measured_*_w; facility: node wall + pue, "
        "or for a twin run host_w + pue)."
    )


def at_boundary(rows: Sequence[Row], boundary: str | None, profile_path: Path | None) -> list[Row]:
    """Every ROW's per-kW fields at one boundary (None: unchanged, except ROWs without any
    declared power take the profile's TDP)."""
    named = boundary_name(boundary) if boundary is not None else None
    if boundary is not None and named is None:
        raise UserError(
            f"--boundary {boundary!r} is not one of {', '.join(BOUNDARIES)} (also accepted: "
            "tdp, all-in, measured_board, measured_node)."
        )
    profile = load_profile(profile_path) if profile_path else None
    out: list[Row] = []
    for r in rows:
        if named is None:
            has_power = num(r, "power_w_per_accelerator") is not None
            prof = profile_for(profile, str(r.get("system", ""))) if profile else None
            tdp = prof.basis("package-tdp") if prof and not has_power else None
            out.extend(with_power([r], tdp) if tdp else [r])
            continue
        out.extend(with_power([r], basis_for_row(r, named, profile)))
    return out


def parallelism_of_run(run_dir: Path) -> str | None:
    """'tp8 pp1 ep1 dp1' from a run bundle's spec.json, when it has one."""
    try:
        spec = json.loads((run_dir / "spec.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(spec, dict) and isinstance(spec.get("spec"), dict):
        spec = spec["spec"]  # {"content_hash": ..., "spec": {...}}
    serving = spec.get("serving") if isinstance(spec, dict) else None
    if not isinstance(serving, dict):
        return None
    keys = (("tp", "tensor_parallel"), ("pp", "pipeline_parallel"), ("ep", "expert_parallel"))
    parts = [f"{k}{serving.get(v, 1)}" for k, v in keys] + [f"dp{serving.get('data_parallel', 1)}"]
    return " ".join(parts)


def load_rows_with_runs(paths: Sequence[Path]) -> list[Row]:
    """ROWs of every path; a run directory's ROWs also carry its parallelism (spec.json)."""
    from scoville.analysis.load import load_rows

    out: list[Row] = []
    for p in paths:
        par = parallelism_of_run(p) if p.is_dir() else None
        rows = load_rows(p)
        out.extend(({**r, "parallelism": par} if par and "parallelism" not in r else r)
                   for r in rows)  # fmt: skip
    return out
