"""Build vs buy: what a good accelerator costs to make, from wafer to system share.

Formulas (every input stated in `SiliconInputs`, overridable):
  gross dies per wafer  = floor(pi d^2 / (4 A) - pi d / sqrt(2 A)),  d = diameter - 2 x edge
  die yield (D = D0 x A, A in cm^2): Poisson e^-D; Murphy ((1 - e^-D) / D)^2;
                                      negative binomial (1 + D / alpha)^-alpha
  good die              = wafer price / (gross dies x die yield)
  packaged              = (dies x good die + HBM GB x $/GB + packaging) / packaging yield
  good accelerator      = packaged + test + board + NRE / volume
  per system            = accelerators per system x (good accelerator + system share)
The catalogue (`data/silicon/chips.yaml`) gives defaults with sources or `assumed:` notes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from importlib import resources
from typing import Any, Literal

import yaml

from scoville.errors import DataError, UserError

YieldModel = Literal["poisson", "murphy", "negative-binomial"]
YIELD_MODELS: tuple[YieldModel, ...] = ("poisson", "murphy", "negative-binomial")


def gross_dies_per_wafer(die_area_mm2: float, diameter_mm: float, edge_mm: float = 0.0) -> int:
    """Whole dies on a round wafer, the edge loss term subtracting partial dies at the rim."""
    d = diameter_mm - 2 * edge_mm
    if die_area_mm2 <= 0 or d <= 0:
        raise ValueError("die area and usable diameter must be > 0")
    n = math.pi * d * d / (4 * die_area_mm2) - math.pi * d / math.sqrt(2 * die_area_mm2)
    return max(0, math.floor(n))


def die_yield(
    model: YieldModel, defects_per_cm2: float, die_area_mm2: float, alpha: float = 3.0
) -> float:
    """Fraction of good dies under the named defect model (D = D0 x area in cm^2)."""
    dd = defects_per_cm2 * die_area_mm2 / 100.0
    if dd < 0 or alpha <= 0:
        raise ValueError("defect density must be >= 0 and alpha > 0")
    if dd == 0:
        return 1.0
    if model == "poisson":
        return math.exp(-dd)
    if model == "murphy":
        return ((1 - math.exp(-dd)) / dd) ** 2
    return float((1 + dd / alpha) ** -alpha)


@dataclass(frozen=True, slots=True)
class SiliconInputs:
    """One chip's cost inputs (USD, mm, mm^2, defects/cm^2)."""

    wafer_usd: float
    die_area_mm2: float
    dies: int = 1
    wafer_diameter_mm: float = 300.0
    edge_exclusion_mm: float = 3.0
    defect_density_per_cm2: float = 0.1
    yield_model: YieldModel = "murphy"
    cluster_alpha: float = 3.0
    hbm_gb: float = 0.0
    hbm_usd_per_gb: float = 0.0
    packaging_usd: float = 0.0
    packaging_yield: float = 1.0
    test_usd: float = 0.0
    board_usd: float = 0.0
    system_share_usd: float = 0.0
    accelerators_per_system: int = 8
    nre_usd: float = 0.0
    volume: int = 1


@dataclass(frozen=True, slots=True)
class SiliconCost:
    chip: str
    inputs: SiliconInputs
    gross_dies_per_wafer: int
    die_yield: float
    usd_per_good_die: float
    usd_hbm: float
    usd_per_packaged: float
    usd_nre_per_unit: float
    usd_per_good_accelerator: float
    usd_per_system: float
    notes: tuple[str, ...] = ()


def cost_of(chip: str, x: SiliconInputs, notes: tuple[str, ...] = ()) -> SiliconCost:
    """The cost chain of the module docstring for one chip."""
    if not 0 < x.packaging_yield <= 1:
        raise UserError(f"{chip}: packaging_yield must be in (0, 1], got {x.packaging_yield}.")
    if x.volume < 1 or x.dies < 1:
        raise UserError(f"{chip}: volume and dies must be >= 1.")
    gross = gross_dies_per_wafer(x.die_area_mm2, x.wafer_diameter_mm, x.edge_exclusion_mm)
    y = die_yield(x.yield_model, x.defect_density_per_cm2, x.die_area_mm2, x.cluster_alpha)
    if gross == 0 or y <= 0:
        raise UserError(f"{chip}: a {x.die_area_mm2:g} mm2 die gives no good dies per wafer.")
    good_die = x.wafer_usd / (gross * y)
    hbm = x.hbm_gb * x.hbm_usd_per_gb
    packaged = (x.dies * good_die + hbm + x.packaging_usd) / x.packaging_yield
    nre = x.nre_usd / x.volume
    acc = packaged + x.test_usd + x.board_usd + nre
    system = x.accelerators_per_system * (acc + x.system_share_usd)
    return SiliconCost(chip, x, gross, y, good_die, hbm, packaged, nre, acc, system, notes)


@dataclass(frozen=True, slots=True)
class TornadoBar:
    field: str
    low_value: float
    high_value: float
    usd_at_low: float  # cost per good accelerator with the input at its low value
    usd_at_high: float

    @property
    def swing_usd(self) -> float:
        return abs(self.usd_at_high - self.usd_at_low)


TORNADO_FIELDS = (
    "wafer_usd", "die_area_mm2", "defect_density_per_cm2", "hbm_usd_per_gb", "packaging_usd",
    "packaging_yield", "test_usd", "board_usd", "nre_usd", "volume",
)  # fmt: skip


def tornado(chip: str, x: SiliconInputs, spread: float = 0.2, top: int = 3) -> list[TornadoBar]:
    """Each input moved by +-`spread` (yield capped at 1) one at a time; the `top` inputs that
    move the cost per good accelerator most, largest swing first."""
    bars = []
    for name in TORNADO_FIELDS:
        v = float(getattr(x, name))
        if v == 0:
            continue
        lo, hi = v * (1 - spread), v * (1 + spread)
        if name == "packaging_yield":
            hi = min(hi, 1.0)
        if name == "volume":
            lo, hi = max(1.0, round(lo)), float(round(hi))

        def at(value: float, field: str = name) -> float:
            typed: Any = int(value) if field == "volume" else value
            return cost_of(chip, replace(x, **{field: typed})).usd_per_good_accelerator

        bars.append(TornadoBar(name, lo, hi, at(lo), at(hi)))
    return sorted(bars, key=lambda b: -b.swing_usd)[:top]


@dataclass(frozen=True, slots=True)
class SiliconCatalogue:
    doc: dict[str, Any]

    def chips(self) -> list[str]:
        return sorted(self.doc["chips"])

    def inputs(
        self, chip: str, overrides: dict[str, str] | None = None
    ) -> tuple[SiliconInputs, tuple[str, ...]]:
        """The chip's inputs (defaults < node < chip < overrides) and its sources/assumptions."""
        entry = next((v for k, v in self.doc["chips"].items() if k.lower() == chip.lower()), None)
        if entry is None:
            raise UserError(f"No chip {chip!r} in the silicon catalogue; known: {self.chips()}.")
        node = self.doc["nodes"].get(entry.get("node"))
        if node is None:
            raise DataError(f"silicon catalogue: {chip} names unknown node {entry.get('node')!r}.")
        merged = {**self.doc["defaults"], "wafer_usd": node["wafer_usd"], **entry}
        notes = [f"wafer {entry['node']}: {node['source']}", f"chip: {entry.get('source', '')}"]
        notes.append(f"HBM: {merged.get('hbm_source', '')}")
        notes.append(f"packaging: {merged.get('packaging_source', '')}")
        assumed = {**self.doc["defaults"].get("assumed", {}), **entry.get("assumed", {})}
        if "assumed" in node:
            assumed["wafer_usd"] = node["assumed"]
        known = {f.name for f in fields(SiliconInputs)}
        for key, text in (overrides or {}).items():
            if key not in known:
                raise UserError(f"--set {key}: not an input; use one of {sorted(known)}.")
            merged[key] = text
            assumed[key] = f"set on the command line to {text}"
        notes += [f"assumed {k}: {v}" for k, v in sorted(assumed.items())]
        return _typed(chip, {k: v for k, v in merged.items() if k in known}), tuple(notes)

    def estimate(self, chip: str, volume: int | None = None) -> SiliconCost:
        x, notes = self.inputs(chip, {"volume": str(volume)} if volume else None)
        return cost_of(chip, x, notes)


def _typed(chip: str, raw: dict[str, Any]) -> SiliconInputs:
    out: dict[str, Any] = {}
    for f in fields(SiliconInputs):
        if f.name not in raw:
            continue
        v = raw[f.name]
        try:
            if f.name == "yield_model":
                if v not in YIELD_MODELS:
                    raise ValueError(f"one of {', '.join(YIELD_MODELS)}")
                out[f.name] = v
            elif f.name in ("dies", "accelerators_per_system", "volume"):
                out[f.name] = int(float(v))
            else:
                out[f.name] = float(v)
        except (TypeError, ValueError) as e:
            raise UserError(f"{chip}: {f.name}={v!r} is not valid ({e}).") from None
        if f.name != "yield_model" and out[f.name] < 0:
            raise UserError(f"{chip}: {f.name} must be >= 0, got {v}.")
    return SiliconInputs(**out)


def load_silicon_catalogue() -> SiliconCatalogue:
    text = resources.files("scoville").joinpath("data/silicon/chips.yaml").read_text("utf-8")
    doc = yaml.safe_load(text)
    if not isinstance(doc, dict) or not {"nodes", "defaults", "chips"} <= set(doc):
        raise DataError("data/silicon/chips.yaml needs nodes, defaults and chips.")
    return SiliconCatalogue(doc)
