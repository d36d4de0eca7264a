"""The power profile (YAML, `scoville.power-profile/1`): per accelerator, what is known about its
power (TDP, idle floor, host/network/cooling shares, PUE, measured figures and their sources).

Declared once here, below everything: a run's frozen spec carries it (`--power-profile FILE`),
and analysis reads the same model from a file (`compare --power-profile`, `capacity`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from scoville.errors import SpecError
from scoville.spec.limits import load_yaml, read_text

PROFILE_SCHEMA = "scoville.power-profile/1"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class AcceleratorPower(_Frozen):
    """Per accelerator (W). Shares are the accelerator's part of the host, network, cooling."""

    tdp_w: float | None = Field(None, gt=0, description="Declared package TDP.")
    idle_w: float | None = Field(
        None, ge=0, description="Draw when idle (the twin's floor; default 20 % of TDP)."
    )
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


class PowerProfileFile(_Frozen):
    """A power profile: a default PUE and one entry per accelerator kind (matched by name,
    case-insensitively)."""

    model_config = ConfigDict(serialize_by_alias=True, validate_by_name=True)

    schema_: str = Field(PROFILE_SCHEMA, alias="schema")
    pue: float | None = Field(None, ge=1, description="Default PUE for every accelerator.")
    accelerators: dict[str, AcceleratorPower] = Field(min_length=1)

    def entry(self, system: str) -> AcceleratorPower | None:
        want = system.strip().lower()
        return next((a for n, a in self.accelerators.items() if n.strip().lower() == want), None)


def profile_problem(e: ValidationError) -> str:
    """'field.path: message; ...' for the first problems of a pydantic error."""
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or '(top level)'}: {err['msg']}"
        for err in e.errors()[:6]
    )


def read_profile(path_text: str) -> dict[str, Any]:
    """The profile at `path_text`, checked, as the mapping a spec's `power_profile` holds (the
    `--power-profile` flag's reader). A missing or negative field, or a PUE below 1, is a
    SpecError naming the file and the field."""
    path = Path(path_text)
    if not path.is_file():
        raise SpecError(f"Power profile {path} does not exist; pass a YAML power-profile file.")
    doc = load_yaml(read_text(path, "Power profile", error=SpecError), str(path), SpecError)
    try:
        profile = PowerProfileFile.model_validate(doc)
    except ValidationError as e:
        raise SpecError(
            f"Power profile {path} is not valid: {profile_problem(e)}. Every watt figure must "
            "be > 0 (shares >= 0), a PUE >= 1, and `accelerators` must name at least one "
            "accelerator (see examples/economics/power-profile.yaml)."
        ) from None
    return profile.model_dump(mode="json", exclude_defaults=True, by_alias=True)
