"""Power boundaries: what a per-kW figure divides by, and how a ratio moves when that changes.

Five boundaries (the spec's `PowerBoundary`): package TDP (datasheet), provisioned all-in per
accelerator (InferenceX-style kW/GPU with host, network and facility share), measured board
power (telemetry), node wall (measured, per accelerator) and facility (node wall x PUE).
Every per-kW number in analysis carries a `PowerBasis` naming its boundary and source.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scoville.analysis.rows import Row, num
from scoville.metrics.compute import per_kw as tok_per_kw
from scoville.spec.model import PowerBoundary

BOUNDARIES: tuple[PowerBoundary, ...] = (
    "package-tdp",
    "provisioned-all-in",
    "board-measured",
    "node-wall",
    "facility",
)

# Declared package TDP per accelerator (W), from shared/reference/hardware.csv (its sources:
# vendor datasheets via ai-dynamo/aiconfigurator systems/*.yaml; Jalapeño from the 2026-08-25
# seed reports). Datasheet figures are leads, not measurements.
PACKAGE_TDP_W: dict[str, tuple[float, str]] = {
    "H100 SXM": (700.0, "NVIDIA H100 datasheet"),
    "H200 SXM": (700.0, "NVIDIA H200 datasheet"),
    "B200": (1000.0, "NVIDIA Blackwell datasheet"),
    "B300": (1100.0, "Blackwell Ultra datasheet via aiconfigurator b300_sxm.yaml"),
    "GB200": (1200.0, "estimate of the GPU share of the 2700 W GB200 superchip"),
    "GB300": (1400.0, "Blackwell Ultra datasheet via aiconfigurator gb300.yaml"),
    "MI300X": (750.0, "AMD Instinct MI300X datasheet"),
    "MI355X": (1400.0, "AMD Instinct MI355X datasheet"),
    "Jalapeno A0": (700.0, "OpenAI/SemiAnalysis seed reports 2026-08-25 (tested at 700 W TDP)"),
}


@dataclass(frozen=True, slots=True)
class PowerBasis:
    """The watts per accelerator a per-kW figure divides by, at a named boundary."""

    boundary: PowerBoundary
    w_per_accelerator: float
    source: str = ""
    estimate: bool = False  # modelled (the twin's power estimate), not declared or measured
    w_max: float | None = None  # the rows' watts differ by point: they span w..w_max

    def __post_init__(self) -> None:
        if not self.w_per_accelerator > 0:
            raise ValueError("w_per_accelerator must be > 0")

    def label(self) -> str:
        tail = " (estimate)" if self.estimate else ""
        if self.w_max is not None:
            span = f"{self.w_per_accelerator:,.0f}-{self.w_max:,.0f} W by point"
            return f"{self.boundary} {span}{tail}"
        return f"{self.boundary} {self.w_per_accelerator:g} W{tail}"


@dataclass(frozen=True, slots=True)
class PowerProfile:
    """What is known about one system's power, per accelerator (W). Any field may be unknown.

    `provisioned_all_in_w` is the InferenceX-style all-in kW/GPU (x1000); when absent it can be
    derived as (tdp + host + network) x PUE. Node wall, when absent, can be derived as measured
    board + host + network share. Facility = node wall x PUE.
    """

    tdp_w: float | None = None
    measured_board_w: float | None = None
    node_wall_w: float | None = None
    host_w: float | None = None  # host CPUs, memory, NICs, fans: share per accelerator
    network_w: float | None = None  # switch share per accelerator
    pue: float | None = None
    provisioned_all_in_w: float | None = None
    source: str = ""

    def basis(self, boundary: PowerBoundary) -> PowerBasis | None:
        """The basis at `boundary`, or None when the profile does not determine it."""
        w, how = self._watts(boundary)
        if w is None:
            return None
        return PowerBasis(boundary, w, f"{how}; {self.source}" if self.source else how)

    def _watts(self, boundary: PowerBoundary) -> tuple[float | None, str]:
        extra = (self.host_w or 0.0) + (self.network_w or 0.0)
        has_extra = self.host_w is not None
        if boundary == "package-tdp":
            return self.tdp_w, "declared package TDP"
        if boundary == "board-measured":
            return self.measured_board_w, "measured board power"
        if boundary == "node-wall":
            if self.node_wall_w is not None:
                return self.node_wall_w, "measured node wall"
            if self.measured_board_w is not None and has_extra:
                return self.measured_board_w + extra, "derived: measured board + host + network"
            return None, ""
        if boundary == "facility":
            wall, how = self._watts("node-wall")
            if wall is None or self.pue is None:
                return None, ""
            return wall * self.pue, f"{how} x PUE {self.pue:g}"
        if self.provisioned_all_in_w is not None:
            return self.provisioned_all_in_w, "provisioned all-in (declared)"
        if self.tdp_w is not None and has_extra and self.pue is not None:
            return (self.tdp_w + extra) * self.pue, "derived: (TDP + host + network) x PUE"
        return None, ""


def per_kw(tput_per_accelerator: float, basis: PowerBasis) -> float:
    """Tokens/s per kW at `basis` (the formula is `scoville.metrics.compute.per_kw`)."""
    return tok_per_kw(tput_per_accelerator, basis.w_per_accelerator)


def per_accelerator(value_per_kw: float, basis: PowerBasis) -> float:
    """Undo `per_kw`: tokens/s per accelerator from a per-kW figure and its basis."""
    return value_per_kw * basis.w_per_accelerator / 1000.0


def renormalise(value_per_kw: float, from_basis: PowerBasis, to_basis: PowerBasis) -> float:
    """The same throughput per kW under another boundary: value x from_W / to_W.

    E.g. 85448 tok/s/kW at 700 W TDP is 85448 x 700 / 550 = 108,752 tok/s/kW at 550 W measured.
    """
    return value_per_kw * from_basis.w_per_accelerator / to_basis.w_per_accelerator


@dataclass(frozen=True, slots=True)
class RatioUnderBoundary:
    """A per-kW ratio (system / baseline) recomputed with each side's chosen basis."""

    label: str
    system_basis: PowerBasis | None  # None: the per-accelerator ratio (no power denominator)
    baseline_basis: PowerBasis | None
    system_per_kw: float | None
    baseline_per_kw: float | None
    ratio: float
    like_for_like: bool  # both sides at the same boundary kind (or both per accelerator)
    system_tput_per_accelerator: float = 0.0  # implied by the stated value and its basis
    baseline_tput_per_accelerator: float = 0.0


def ratio_shifts(
    system_value_per_kw: float,
    system_basis: PowerBasis,
    baseline_value_per_kw: float,
    baseline_basis: PowerBasis,
    alternatives: Sequence[tuple[str, PowerBasis | None, PowerBasis | None]],
) -> list[RatioUnderBoundary]:
    """How a stated per-kW ratio moves when the boundary changes.

    Each side's throughput per accelerator is recovered from its stated value and basis, then
    divided by the alternative basis; a None basis on both sides gives the per-accelerator
    ratio (the power denominator removed). The stated pairing comes first.
    """
    sys_acc = per_accelerator(system_value_per_kw, system_basis)
    base_acc = per_accelerator(baseline_value_per_kw, baseline_basis)
    out = [
        RatioUnderBoundary(
            "as stated",
            system_basis,
            baseline_basis,
            system_value_per_kw,
            baseline_value_per_kw,
            system_value_per_kw / baseline_value_per_kw,
            system_basis.boundary == baseline_basis.boundary,
            sys_acc,
            base_acc,
        )
    ]
    for label, sb, bb in alternatives:
        s = per_kw(sys_acc, sb) if sb else None
        b = per_kw(base_acc, bb) if bb else None
        if (sb is None) != (bb is None):
            raise ValueError("give both bases or neither (per-accelerator ratio)")
        ratio = (s / b) if (s is not None and b is not None) else sys_acc / base_acc
        like = (sb is None and bb is None) or (
            sb is not None and bb is not None and sb.boundary == bb.boundary
        )
        out.append(RatioUnderBoundary(label, sb, bb, s, b, ratio, like, sys_acc, base_acc))
    return out


def with_power(rows: Sequence[Row], basis: PowerBasis) -> list[Row]:
    """Rows with every per-kW field recomputed at `basis` from the per-accelerator fields."""
    fields = {"power_estimate": True} if basis.estimate else {}
    return [
        {**r, **per_kw_fields(r, basis.w_per_accelerator, basis.boundary), **fields} for r in rows
    ]


PER_KW_OF: tuple[tuple[str, str], ...] = (
    ("tput_per_gpu", "tput_per_kw"),
    ("output_tput_per_gpu", "output_tput_per_kw"),
    ("input_tput_per_gpu", "input_tput_per_kw"),
)


def per_kw_fields(row: Row, w_per_accelerator: float, boundary: str) -> dict[str, Any]:
    """The power fields of `row` at `w_per_accelerator` W per accelerator and `boundary`: the
    basis itself and each per-kW figure from its per-accelerator throughput."""
    out: dict[str, Any] = {"power_w_per_accelerator": w_per_accelerator, "power_boundary": boundary}
    for acc, kw in PER_KW_OF:
        v = num(row, acc)
        out[kw] = tok_per_kw(v, w_per_accelerator) if v is not None else None
    return out


def basis_of_rows(rows: Sequence[Row]) -> PowerBasis | None:
    """The power basis a group's rows declare (the first row with both fields; the largest
    W of the rows at that boundary as `w_max` when they differ by point), else None."""
    for r in rows:
        w = num(r, "power_w_per_accelerator")
        b = r.get("power_boundary")
        if w is not None and w > 0 and b in BOUNDARIES:
            same = [x for q in rows if q.get("power_boundary") == b
                    and (x := num(q, "power_w_per_accelerator")) is not None]  # fmt: skip
            w_max = max(same) if max(same) > min(same) else None
            est = bool(r.get("power_estimate"))
            return PowerBasis(b, min(same), "declared in the run", est, w_max)
    return None


__all__ = [
    "BOUNDARIES",
    "PACKAGE_TDP_W",
    "PowerBasis",
    "PowerProfile",
    "RatioUnderBoundary",
    "basis_of_rows",
    "per_accelerator",
    "per_kw",
    "ratio_shifts",
    "renormalise",
    "with_power",
]
