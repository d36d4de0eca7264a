"""The one definition of "like for like": which conditions two results must share before a
ratio between them means anything, and a one-line reason for every condition that differs.

Used by `compare` (run ROWs), the claim audit and `claims verify` (claim sides). Pure: the
caller extracts `Conditions` from ROWs (`conditions_of_rows`) or a claim side (`audit.py`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Literal

from scoville.analysis.rows import Row, num

Status = Literal["same", "differs", "unstated", "missing", "informational", "covered"]

# Conditions a per-kW ratio also needs; for other metrics the power boundary is informational.
PER_KW = "per-kW"


@dataclass(frozen=True, slots=True)
class Conditions:
    """What one side was measured under. None = not stated."""

    model: str | None = None
    weights_revision: str | None = None
    isl_tokens: int | None = None
    osl_tokens: int | None = None
    range_ratio: float | None = None
    precision: str | None = None
    quality_equivalence: str | None = None  # a verdict covering a precision difference
    spec_decode: str | None = None
    acceptance_length: float | None = None  # declared mean accepted tokens per step
    disagg: bool | None = None
    parallelism: str | None = None
    power_boundary: str | None = None
    power_w_per_accelerator: float | None = None
    token_basis: str | None = None  # "total" (input + output) or "output"
    percentile: str | None = None  # the latency convention: median, p90, mean
    quality_target: str | None = None
    quality_status: str | None = None  # qualified / not qualified / not measured (a run's pass)
    latency_target: str | None = None


@dataclass(frozen=True, slots=True)
class Check:
    """One condition side by side; `reason` is the one-line why (empty when same)."""

    field: str
    system: str | None
    baseline: str | None
    status: Status
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Comparability:
    checks: tuple[Check, ...]
    strict: bool = False
    blocking: tuple[Check, ...] = field(default=())

    @property
    def like(self) -> bool:
        return not self.blocking

    def reasons(self) -> list[str]:
        return [c.reason for c in self.blocking]

    def caveats(self) -> list[str]:
        return [c.field for c in self.checks if c.status == "unstated" and c not in self.blocking]


def _show(v: object) -> str | None:
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def model_key(name: str) -> str:
    """'GPT-OSS 120B' and 'gpt-oss-120b' name the same model: lower case, letters and digits."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


PRECISION_CLASSES = {
    "fp4": ("fp4", "mxfp4", "nvfp4", "w4a4", "fp4-e2m1"),
    "int4": ("int4", "w4a16", "int4_g32", "int4_g128", "awq", "gptq", "q4_0", "q4_k_m"),
    "fp8": ("fp8", "w8a8", "fp8-e4m3", "fp8_e4m3", "mxfp8"),
    "int8": ("int8", "q8_0", "w8a16"),
    "16-bit": ("bf16", "fp16", "f16", "16-bit"),
}


def precision_class(label: str) -> str:
    """The class a precision label belongs to (fp4, int4, fp8, int8, 16-bit), else the label."""
    low = label.strip().lower()
    for cls, names in PRECISION_CLASSES.items():
        if low in names:
            return cls
    return low


def _no_spec(v: str) -> bool:
    return v.strip().lower() in ("none", "false", "off", "no", "")


def _basic(name: str, sv: object, bv: object, required: bool) -> Check:
    ss, bs = _show(sv), _show(bv)
    if ss is None or bs is None:
        side = "system" if ss is None else "baseline"
        status: Status = "missing" if required else "unstated"
        return Check(name, ss, bs, status, f"{name} is not stated for the {side}")
    if ss.lower() == bs.lower():
        return Check(name, ss, bs, "same")
    return Check(name, ss, bs, "differs", f"{name} differs: {ss} vs {bs}")


def same_model(a: str, b: str) -> bool:
    """Same model: equal keys, or one name is the other plus a separate size token ('DeepSeek
    R1 670B' names 'DeepSeek-R1'; 'Kimi K2.5 1T' names 'Kimi-K2.5' but not 'Kimi-K2')."""
    if model_key(a) == model_key(b):
        return True
    short, long_ = sorted(([model_key(t) for t in re.split(r"[\s\-_/]+", n) if t] for n in (a, b)),
                          key=len)  # fmt: skip
    extra = long_[len(short) :]
    return (
        bool(short)
        and long_[: len(short)] == short
        and len(extra) == 1
        and re.fullmatch(r"\d+[bmt]", extra[0]) is not None
    )


def _model(s: Conditions, b: Conditions) -> Check:
    c = _basic("model", s.model, b.model, True)
    if c.status == "differs" and same_model(s.model or "", b.model or ""):
        return Check("model", c.system, c.baseline, "same")
    return c


def _revision(s: Conditions, b: Conditions) -> Check:
    c = _basic("weights_revision", s.weights_revision, b.weights_revision, False)
    if c.status == "unstated":  # compared only when both are known
        return Check(c.field, c.system, c.baseline, "informational")
    return c


def _precision(s: Conditions, b: Conditions) -> Check:
    c = _basic("precision", s.precision, b.precision, False)
    unknown = "unknown" in ((c.system or "").lower(), (c.baseline or "").lower())
    if c.status == "unstated" or unknown:
        return Check("precision", c.system, c.baseline, "unstated", c.reason or "precision unknown")
    sc, bc = precision_class(c.system or ""), precision_class(c.baseline or "")
    if sc == bc:
        return Check("precision", c.system, c.baseline, "same")
    verdict = s.quality_equivalence or b.quality_equivalence
    if verdict:
        return Check("precision", c.system, c.baseline, "covered", f"quality-equivalent: {verdict}")
    return Check(
        "precision",
        c.system,
        c.baseline,
        "differs",
        f"precision class differs ({sc} vs {bc}) and no quality-equivalence verdict covers it",
    )


def _spec_decode(s: Conditions, b: Conditions) -> Check:
    c = _basic("spec_decode", s.spec_decode, b.spec_decode, False)
    if c.status != "differs":
        return c
    s_none, b_none = _no_spec(c.system or ""), _no_spec(c.baseline or "")
    if s_none and b_none:
        return Check(c.field, c.system, c.baseline, "same")
    declared = [x.acceptance_length for x, off in ((s, s_none), (b, b_none)) if not off]
    if all(d is not None for d in declared):
        lengths = ", ".join(f"{d:g}" for d in declared if d is not None)
        why = f"speculative decoding declared with acceptance length {lengths}"
        return Check(c.field, c.system, c.baseline, "covered", why)
    return Check(
        c.field,
        c.system,
        c.baseline,
        "differs",
        f"speculative decoding differs ({c.system} vs {c.baseline}) and no acceptance length is "
        "declared",
    )


def _range_ratio(s: Conditions, b: Conditions) -> Check:
    c = _basic("range_ratio", s.range_ratio, b.range_ratio, False)
    if c.status == "differs" and abs((s.range_ratio or 0) - (b.range_ratio or 0)) < 1e-9:
        return Check(c.field, c.system, c.baseline, "same")
    return c


NOT_QUALIFIED, QUALIFIED = "not qualified", "qualified"


def _quality(s: Conditions, b: Conditions) -> Check:
    """A side that is not qualified blocks, whatever the other; both qualified is the same;
    one qualified against one not measured is unstated (a caveat, blocking when strict);
    neither measured is informational (no quality pass on either side)."""
    ss, bs = s.quality_status, b.quality_status
    name = "quality_status"
    bad = [side for side, v in (("system", ss), ("baseline", bs)) if v == NOT_QUALIFIED]
    if bad:
        verb = "is" if len(bad) == 1 else "are"
        why = (
            f"quality differs ({ss or 'not stated'} vs {bs or 'not stated'}): the "
            f"{' and the '.join(bad)} {verb} not qualified (its pass rate missed its bar)"
        )
        return Check(name, ss, bs, "differs", why)
    if ss == bs == QUALIFIED:
        return Check(name, ss, bs, "same")
    if QUALIFIED in (ss, bs):
        side = "baseline" if ss == QUALIFIED else "system"
        return Check(name, ss, bs, "unstated", f"quality is not measured for the {side}")
    return Check(name, ss, bs, "informational")


def judge(s: Conditions, b: Conditions, per_kw: bool, strict: bool = False) -> Comparability:
    """Every condition of system `s` against baseline `b`.

    Blocking: a condition that differs (model, weights revision when both known, ISL, OSL,
    range ratio, precision class without a quality-equivalence verdict, speculative decoding
    without a declared acceptance length, disaggregation, power boundary for per-kW metrics,
    token basis, latency convention, quality and latency target, a side whose quality pass
    did not qualify it), or one the comparison needs
    that is unstated (model, ISL, OSL; power boundary and denominator for per-kW). With
    `strict`, any unstated condition blocks. Parallelism is only required to be stated (in
    strict mode); its value may differ between hardware.
    """
    checks = [
        _model(s, b),
        _revision(s, b),
        _precision(s, b),
        _basic("isl_tokens", s.isl_tokens, b.isl_tokens, True),
        _basic("osl_tokens", s.osl_tokens, b.osl_tokens, True),
        _range_ratio(s, b),
        _spec_decode(s, b),
        _basic("disagg", s.disagg, b.disagg, False),
        _basic("percentile", s.percentile, b.percentile, False),
        _basic("token_basis", s.token_basis, b.token_basis, False),
        _basic("quality_target", s.quality_target, b.quality_target, False),
        _quality(s, b),
        _basic("latency_target", s.latency_target, b.latency_target, False),
    ]
    boundary = _basic("power boundary", s.power_boundary, b.power_boundary, per_kw)
    watts = _basic("power denominator (W)", s.power_w_per_accelerator,
                   b.power_w_per_accelerator, per_kw)  # fmt: skip
    if watts.status in ("same", "differs"):  # different hardware draws different watts
        watts = Check(watts.field, watts.system, watts.baseline, "informational")
    if not per_kw and boundary.status == "differs":
        boundary = Check(boundary.field, boundary.system, boundary.baseline, "informational")
    checks += [boundary, watts]
    par = _basic("parallelism", s.parallelism, b.parallelism, False)
    checks.append(par if par.status == "unstated" else Check(
        par.field, par.system, par.baseline, "informational"))  # fmt: skip
    blocking_status = {"differs", "missing"} | ({"unstated"} if strict else set())
    blocking = tuple(c for c in checks if c.status in blocking_status)
    return Comparability(tuple(checks), strict, blocking)


def _first(rows: Sequence[Row], key: str) -> object:
    for r in rows:
        v = r.get(key)
        if v is not None and v != "unknown":
            return v
    return None


def conditions_of_rows(rows: Sequence[Row]) -> Conditions:
    """A configuration's conditions from its point ROWs. Runs report total tokens per
    accelerator (`tput_per_gpu`) and median latency unless a ROW says otherwise."""

    def text(key: str) -> str | None:
        v = _first(rows, key)
        return None if v is None else str(v)

    def integer(key: str) -> int | None:
        v = _first(rows, key)
        return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    disagg = _first(rows, "disagg")
    accept = [v for r in rows if (v := num(r, "acceptance_length")) is not None]
    watts = [v for r in rows if (v := num(r, "power_w_per_accelerator")) is not None]
    ratio = [v for r in rows if (v := num(r, "range_ratio")) is not None]
    return Conditions(
        model=text("model"),
        weights_revision=text("weights_revision"),
        isl_tokens=integer("isl"),
        osl_tokens=integer("osl"),
        range_ratio=ratio[0] if ratio else None,
        precision=text("precision"),
        quality_equivalence=text("quality_equivalence"),
        spec_decode=text("spec_decode"),
        acceptance_length=accept[0] if accept else None,
        disagg=disagg if isinstance(disagg, bool) else None,
        parallelism=text("parallelism"),
        power_boundary=text("power_boundary"),
        power_w_per_accelerator=watts[0] if watts else None,
        token_basis=text("token_basis") or "total",
        percentile=text("latency_convention") or "median",
        quality_target=text("quality_target") or "none",
        quality_status=quality_of_rows(rows),
        latency_target=text("latency_target") or "none",
    )


def quality_of_rows(rows: Sequence[Row]) -> str | None:
    """A configuration's quality status: not qualified if any run of it is, qualified if all
    are, else not measured (a row without the field: a run without a pass); None: no rows."""
    got = {str(r.get("quality_status") or "not measured") for r in rows}
    for status in (NOT_QUALIFIED, "not measured"):
        if status in got:
            return status
    return QUALIFIED if got else None


def condition_names() -> tuple[str, ...]:
    return tuple(f.name for f in fields(Conditions))


def shape_label(c: Conditions) -> str:
    """The workload shape a run's numbers belong to, as `history` prints a series' title:
    "ISL 1024 / OSL 256, range ratio 1, MXFP4" (plus speculative decoding, disaggregation)."""
    parts = [f"ISL {_show(c.isl_tokens) or '?'} / OSL {_show(c.osl_tokens) or '?'}"]
    parts.append(f"range ratio {_show(c.range_ratio) or '?'}")
    parts.append(c.precision or "precision ?")
    if c.spec_decode and not _no_spec(c.spec_decode):
        parts.append(f"spec decode {c.spec_decode}")
    if c.disagg:
        parts.append("disaggregated")
    return ", ".join(parts)


def unlike_runs(a: Sequence[Row], b: Sequence[Row], per_kw: bool = False) -> list[str]:
    """Why two runs (their point ROWs) are not like for like: `judge` over their conditions,
    the one definition `history` (a series holds like runs only) and `check` (its note) share.
    A condition neither run states does not set them apart. Empty: like for like."""
    comp = judge(conditions_of_rows(a), conditions_of_rows(b), per_kw)
    return [c.reason for c in comp.blocking if c.system is not None or c.baseline is not None]
