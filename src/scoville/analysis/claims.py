"""The claim file: each side's frozen matrix and the stated numbers, loaded and validated.

A claim file (YAML, schema `scoville.claims/1`) declares sides (system + the conditions it was
measured under; null = not stated), claims (a metric, two sides, stated values and ratio) and
ranges (a headline "1.5-1.9x" over member claims). Frozen pydantic models with extra="forbid";
a malformed file raises `DataError` naming the field. Auditing lives in `audit.py`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, model_validator

from scoville.analysis.rows import Row
from scoville.errors import DataError
from scoville.spec.limits import MAX_SPEC_BYTES, load_yaml, read_text
from scoville.spec.model import FrozenModel, PowerBoundary

CLAIMS_SCHEMA = "scoville.claims/1"

Metric = Literal[
    "peak_tput_per_kw",
    "peak_tput_per_accelerator",
    "min_e2e_s",
    "max_intvty",
    "min_itl_s",
    "tput_per_kw_at_intvty",
]

# metric -> (better, canonical unit, accepted spellings of that unit)
METRICS: dict[str, tuple[Literal["higher", "lower"], str, tuple[str, ...]]] = {
    "peak_tput_per_kw": ("higher", "tok/s/kW", ("tok/s/kw", "tokens/s/kw", "tps/kw")),
    "peak_tput_per_accelerator": ("higher", "tok/s/acc", ("tok/s/acc", "tok/s/gpu", "tok/s")),
    "min_e2e_s": ("lower", "s", ("s", "sec", "seconds")),
    "max_intvty": ("higher", "tok/s/user", ("tok/s/user", "tokens/s/user", "tps/user")),
    "min_itl_s": ("lower", "s", ("s", "sec", "seconds")),
    "tput_per_kw_at_intvty": ("higher", "tok/s/kW", ("tok/s/kw", "tokens/s/kw", "tps/kw")),
}


EVIDENCE = ("vendor-stated", "observed-on-site", "modelled", "reproduced")  # weakest first


def weaker(a: str | None, b: str | None) -> str:
    """The weaker of two evidence tiers (unstated counts as vendor-stated)."""
    ranks = [EVIDENCE.index(t) if t in EVIDENCE else 0 for t in (a, b)]
    return EVIDENCE[min(ranks)]


class Source(FrozenModel):
    id: str
    title: str
    ref: str = Field("", description="URL or path of the source document.")
    date: str | None = None


class PowerDecl(FrozenModel):
    boundary: PowerBoundary | None = Field(None, description="What the denominator covers.")
    w_per_accelerator: float | None = Field(
        None, gt=0, description="The denominator the stated per-kW figures used (W)."
    )
    measured_w_per_accelerator: float | None = Field(
        None, gt=0, description="Measured sustained power under test (W), when reported."
    )
    note: str = ""


class Side(FrozenModel):
    """One side's frozen matrix. None means the sources do not state it."""

    system: str
    model: str | None = None
    precision: str | None = None
    isl_tokens: int | None = Field(None, ge=1)
    osl_tokens: int | None = Field(None, ge=1)
    spec_decode: str | None = Field(None, description="'none', 'mtp', 'eagle', ...")
    disagg: bool | None = None
    parallelism: str | None = None
    power: PowerDecl = Field(default_factory=lambda: PowerDecl.model_validate({}))
    percentile: str | None = Field(None, description="'median', 'p90', 'mean' ...")
    weights_revision: str | None = Field(None, description="Checkpoint revision, when known.")
    range_ratio: float | None = Field(None, gt=0, le=1, description="ISL/OSL range ratio.")
    token_basis: Literal["total", "output"] | None = Field(
        None, description="Throughput counts input + output tokens ('total') or output only."
    )
    quality_equivalence: str | None = Field(
        None, description="A quality verdict covering a precision difference (e.g. an eval)."
    )
    acceptance_length: float | None = Field(
        None, gt=0, description="Declared mean accepted tokens per step (speculative decoding)."
    )
    evidence: Literal["vendor-stated", "observed-on-site", "reproduced", "modelled"] | None = Field(
        None, description="How the side's numbers are known (evidence tier)."
    )
    quality_target: str | None = None
    quality_status: Literal["qualified", "not qualified", "not measured"] | None = Field(
        None, description="The side's quality status, when a quality pass judged it."
    )
    latency_target: str | None = None
    runs: tuple[str, ...] = Field((), description="Run bundles / result files (relative paths).")
    notes: str = ""


class Claim(FrozenModel):
    id: str
    metric: Metric
    system: str = Field(description="Side id of the system the claim is about.")
    baseline: str = Field(description="Side id of the comparison system.")
    system_value: float | None = Field(None, gt=0)
    baseline_value: float | None = Field(None, gt=0)
    unit: str
    stated_ratio: int | float | None = Field(
        None, gt=0, description="As published; its written precision sets the rounding tolerance."
    )
    at_intvty: float | None = Field(
        None, gt=0, description="For tput_per_kw_at_intvty: the interactivity (tok/s/user)."
    )
    statement: str = ""
    sources: tuple[str, ...] = ()


class RangeClaim(FrozenModel):
    id: str
    statement: str
    claims: tuple[str, ...] = Field(min_length=1)
    stated_min: int | float = Field(gt=0)
    stated_max: int | float = Field(gt=0)
    sources: tuple[str, ...] = ()


class ClaimFile(FrozenModel):
    schema_: Literal["scoville.claims/1"] = Field(alias="schema")
    title: str
    tolerance_rel: float = Field(
        0.05, gt=0, lt=1, description="Run-vs-stated value agreement needed to reproduce."
    )
    sources: tuple[Source, ...] = ()
    sides: dict[str, Side]
    claims: tuple[Claim, ...]
    ranges: tuple[RangeClaim, ...] = ()

    @model_validator(mode="after")
    def _references(self) -> ClaimFile:
        src = {s.id for s in self.sources}
        ids = [c.id for c in self.claims]
        if len(set(ids)) != len(ids):
            raise ValueError("claim ids must be unique")
        for c in self.claims:
            for side in (c.system, c.baseline):
                if side not in self.sides:
                    raise ValueError(f"claim {c.id!r} names side {side!r}, which is not in 'sides'")
            for s in c.sources:
                if src and s not in src:
                    raise ValueError(f"claim {c.id!r} cites source {s!r}, not in 'sources'")
        for r in self.ranges:
            for cid in r.claims:
                if cid not in ids:
                    raise ValueError(f"range {r.id!r} names claim {cid!r}, which does not exist")
        return self


def parse_claims(doc: object, source: str = "claim file") -> ClaimFile:
    """Validate a parsed claim document; errors name the field (e.g. claims.3.unit)."""
    try:
        return ClaimFile.model_validate(doc)
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(top level)'}: {err['msg']}"
            for err in e.errors()[:8]
        )
        raise DataError(f"{source} is not a valid claim file: {problems}.") from e


def load_claims(path: str | Path) -> ClaimFile:
    p = Path(path)
    text = read_text(p, "claim file", MAX_SPEC_BYTES, DataError)
    return parse_claims(load_yaml(text, f"claim file {p}", DataError), str(p))


def load_side_rows(claims: ClaimFile, base_dir: str | Path) -> dict[str, list[Row]]:
    """Point ROWs of every side that names runs (paths relative to `base_dir`)."""
    from scoville.analysis.load import load_rows

    out: dict[str, list[Row]] = {}
    for side_id, side in claims.sides.items():
        rows: list[Row] = []
        for run in side.runs:
            rows.extend(load_rows(Path(base_dir) / run))
        if rows:
            out[side_id] = rows
    return out


def claim_files(paths: list[Path]) -> list[Path]:
    """Claim files named directly, and every *.yaml / *.yml inside named directories."""
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            found = sorted([*p.glob("*.yaml"), *p.glob("*.yml")])
            if not found:
                raise DataError(f"{p} holds no claim files (*.yaml).")
            out.extend(found)
        else:
            out.append(p)
    if not out:
        raise DataError("Give at least one claim file or a directory of them.")
    return out
