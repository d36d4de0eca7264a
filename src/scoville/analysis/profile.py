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
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from scoville.analysis.power import BOUNDARIES, PACKAGE_TDP_W, PowerBasis, PowerProfile, with_power
from scoville.analysis.rows import Row, num
from scoville.errors import DataError, UserError
from scoville.spec.model import PowerBoundary

PROFILE_SCHEMA = "scoville.power-profile/1"
MEASURED: tuple[PowerBoundary, ...] = ("board-measured", "node-wall")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AcceleratorPower(_Frozen):
    """Per accelerator (W). Shares are the accelerator's part of the host, network, cooling."""

    tdp_w: float | None = Field(None, gt=0, description="Declared package TDP.")
    host_w: float | None = Field(None, ge=0, description="Host CPUs, memory, NICs, fans share.")
    network_w: float | None = Field(None, ge=0, description="Switch and optics share.")
    cooling_w: float | None = Field(None, ge=0, description="Cooling share (provisioned).")
    pue: float | None = Field(None, ge=1, description="Facility PUE (>= 1).")
    provisioned_all_in_w: float | None = Field(None, gt=0, description="Declared all-in.")
    measured_board_w: float | None = Field(None, gt=0, description="Measured board power.")
    measured_node_w: float | None = Field(None, gt=0, description="Measured node wall share.")
    accelerators_per_rack: int | None = Field(None, ge=1, description="Rack slots.")
    rack_power_kw: float | None = Field(None, gt=0, description="Power delivery per rack.")
    rack_cooling_kw: float | None = Field(None, gt=0, description="Cooling per rack.")
    source: str = Field("", description="Where these figures come from.")
    measured_source: str = Field("", description="NVML/amdsmi/IPMI/Redfish run, when measured.")

    def profile(self, default_pue: float | None) -> PowerProfile:
        pue = self.pue if self.pue is not None else default_pue
        all_in = self.provisioned_all_in_w
        if all_in is None and self.cooling_w is not None and self.tdp_w is not None:
            all_in = self.tdp_w + (self.host_w or 0) + (self.network_w or 0) + self.cooling_w
        return PowerProfile(
            tdp_w=self.tdp_w,
            measured_board_w=self.measured_board_w,
            node_wall_w=self.measured_node_w,
            host_w=self.host_w,
            network_w=self.network_w,
            pue=pue,
            provisioned_all_in_w=all_in,
            source=self.source,
        )


class PowerProfileFile(_Frozen):
    schema_: str = Field(PROFILE_SCHEMA, alias="schema")
    pue: float | None = Field(None, ge=1, description="Default PUE for every accelerator.")
    accelerators: dict[str, AcceleratorPower] = Field(min_length=1)

    def entry(self, system: str) -> AcceleratorPower | None:
        want = system.strip().lower()
        return next((a for n, a in self.accelerators.items() if n.strip().lower() == want), None)

    def profile_for(self, system: str) -> PowerProfile | None:
        acc = self.entry(system)
        return acc.profile(self.pue) if acc else None


def validation_message(e: ValidationError, what: str) -> str:
    """'field.path: message; ...' for the first problems of a pydantic error."""
    parts = [
        f"{'.'.join(str(p) for p in err['loc']) or '(top level)'}: {err['msg']}"
        for err in e.errors()[:6]
    ]
    return f"{what} is not valid: {'; '.join(parts)}."


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


def is_modelled(row: Row) -> bool:
    """A twin (modelled) ROW: no measured power exists for it."""
    return str(row.get("framework", "")).lower() == "scoville-twin" or bool(row.get("modelled"))


def basis_for_row(
    row: Row, boundary: PowerBoundary, profile: PowerProfileFile | None
) -> PowerBasis:
    """The watts per accelerator `row` divides by at `boundary`, or a UserError saying why
    the row cannot be expressed there."""
    system = str(row.get("system", "?"))
    if is_modelled(row) and boundary in (*MEASURED, "facility"):
        raise UserError(
            f"{system} ({row.get('run_id', 'a twin run')}) is a twin run: it has no measured "
            f"power, so it cannot be expressed at the {boundary} boundary. Use package-tdp or "
            "provisioned-all-in (with a power profile), or compare measured runs."
        )
    measured = num(row, "measured_power_w_per_accelerator")
    m_boundary = row.get("measured_power_boundary")
    prof = profile.profile_for(system) if profile else None
    if boundary in MEASURED and measured is not None and m_boundary == boundary:
        return PowerBasis(boundary, measured, "measured in the run")
    node = measured if m_boundary == "node-wall" else None
    if boundary == "facility" and node is not None and prof and prof.pue is not None:
        return PowerBasis(boundary, node * prof.pue, f"measured node x PUE {prof.pue:g}")
    if prof is not None and (basis := prof.basis(boundary)) is not None:
        return basis
    if boundary == "package-tdp":
        for name, (w, src) in PACKAGE_TDP_W.items():
            if name.lower().split()[0] == system.lower().split()[0]:
                return PowerBasis(boundary, w, src)
    raise UserError(
        f"{system}: nothing states its power at the {boundary} boundary (the run declares "
        f"{row.get('power_boundary') or 'none'}). Add an entry for {system!r} to the power "
        "profile with the fields that boundary needs (package-tdp: tdp_w; provisioned-all-in: "
        "provisioned_all_in_w, or tdp_w + host_w + network_w + cooling_w or a pue; "
        "board-measured/node-wall: a measured run or measured_*_w; facility: node wall + pue)."
    )


def at_boundary(rows: Sequence[Row], boundary: str | None, profile_path: Path | None) -> list[Row]:
    """Every ROW's per-kW fields at one boundary (None: unchanged, except ROWs without any
    declared power take the profile's TDP)."""
    if boundary is not None and boundary not in BOUNDARIES:
        raise UserError(f"--boundary {boundary!r} is not one of {', '.join(BOUNDARIES)}.")
    profile = load_profile(profile_path) if profile_path else None
    out: list[Row] = []
    for r in rows:
        if boundary is None:
            has_power = num(r, "power_w_per_accelerator") is not None
            prof = profile.profile_for(str(r.get("system", ""))) if profile else None
            tdp = prof.basis("package-tdp") if prof and not has_power else None
            out.extend(with_power([r], tdp) if tdp else [r])
            continue
        out.extend(with_power([r], basis_for_row(r, boundary, profile)))
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
