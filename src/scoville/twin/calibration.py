"""Calibration: predicted vs published measured points (`twin validate`), by split and regime,
from `scoville/data/twin/calibration.yaml` (each row's `split`: dev rows may be fitted, the
others are held out). What a claimed single-user speed implies is `twin/verdict.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from scoville.twin.catalogue import DAY_PATTERN
from scoville.twin.cluster import TwinConfig
from scoville.twin.frontier import frontier_rows
from scoville.twin.options import TwinOptions
from scoville.twin.profiles import ProfileBook, hardware_family
from scoville.twin.simulate import sweep
from scoville.twin.software import port_age_days
from scoville.twin.splits import ADDED_SPLITS, LATER_BLIND, Frozen, Split


class Published(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    tput_per_gpu: float | None = Field(None, description="(input+output) tok/s per GPU")
    tpot_ms: float | None = None
    intvty: float | None = Field(None, description="tok/s/user")
    ttft_ms: float | None = Field(None, description="median time to first token")
    peak_tput_per_gpu: float | None = Field(None, description="max tput_per_gpu over the sweep")
    mean_ttft_ms: float | None = Field(
        None,
        description="mean time to first token, as the source states; never compared, "
        "read only to flag a start-up stall (`stalled_start`)",
    )


# the metrics the twin predicts and `validate` compares; `mean_ttft_ms` is not one of them
COMPARED = ("tput_per_gpu", "tpot_ms", "intvty", "ttft_ms", "peak_tput_per_gpu")
THROUGHPUTS = ("tput_per_gpu", "peak_tput_per_gpu")
# A start-up stall: some requests of the run waited far longer for their first token than the
# rest (mean TTFT >= STALL_RATIO x median), and long enough to lengthen the mean request by
# STALL_SHARE or more. Both thresholds were chosen on seen rows (docs/design/twin.md).
STALL_RATIO, STALL_SHARE = 5.0, 0.15
STALLED = f"stalled start (mean TTFT >= {STALL_RATIO:g}x median)"
STEADY = "all but stalled starts' throughput"


class CalPoint(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str
    url: str
    isl_tokens: int
    osl_tokens: int
    concurrency: int | None = None
    concurrencies: tuple[int, ...] = Field((), description="a sweep, for peak metrics")
    requests: int | None = Field(
        None,
        ge=1,
        description="this many requests: all sent at once (an offline run), or arriving at "
        "`request_rate`",
    )
    request_rate: float | None = Field(
        None,
        gt=0,
        description="an open-loop run: `requests` Poisson arrivals at this many requests a "
        "second over the deployment (MLPerf's Server and Interactive scenarios)",
    )
    lengths: str | None = Field(
        None,
        description="a dataset's length profile (lengths.yaml) the requests' lengths are drawn "
        "from; isl_tokens is then the profile's mean input and osl_tokens the run's own mean "
        "output, to which the profile's outputs are scaled",
    )
    range_ratio: float = Field(1.0, gt=0, le=1, description="lengths in [ratio*L, L]")
    published: Published
    split: Split = Field(
        ...,
        description="dev: may be fitted; test: held out; seed: derived; late: added after; "
        "blind, blind2..blind22, blind25..blind43, blind45..blind51: frozen before the twin ever "
        "ran on them",
    )
    added: str | None = Field(None, description="when a row was added after the freeze")
    run_date: str | None = Field(
        None,
        pattern=DAY_PATTERN,
        description="the day the published measurement was taken (its benchmark run), where the "
        "source names it; a blog's or PR's own date is not a run date",
    )
    was: str | None = Field(None, description="a held-out split the row left, when and why")
    fitted: tuple[str, ...] = Field((), description="knobs fitted to this point (dev only)")
    source: str = Field(..., min_length=1)


class CalBook(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    schema_: str = Field(alias="schema")
    frozen: Frozen
    points: tuple[CalPoint, ...]

    def held_splits(self) -> tuple[str, ...]:
        """Blind splits frozen for a change not yet judged and never looked at: `validate
        --split all` leaves them out, so that their one look is asked for by name."""
        texts = {n: getattr(self.frozen, n) for n in LATER_BLIND}
        return tuple(n for n, t in texts.items() if t and "Seen:" not in t)


def load_book() -> CalBook:
    text = (
        resources.files("scoville")
        .joinpath("data", "twin", "calibration.yaml")
        .read_text(encoding="utf-8")
    )
    # libyaml's parser where PyYAML has it (its wheels do): ten times faster on this 1.9 MB file
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return check_book(CalBook.model_validate(yaml.load(text, Loader=loader)))


def check_book(book: CalBook) -> CalBook:
    """Refuse a table that breaks the split rules (fitted rows outside dev, `added` dates)."""
    for p in book.points:
        if p.fitted and p.split != "dev":
            raise ValueError(f"calibration point {p.id}: only dev points may be fitted")
        if (p.split in ADDED_SPLITS or p.was is not None) != (p.added is not None):
            raise ValueError(
                f"calibration point {p.id}: rows of late and blind splits, and rows moved out of "
                "one (`was`), and only they, say `added`"
            )
        check_workload(p)
    return book


def check_workload(p: CalPoint) -> None:
    """A row's load is one of: closed loop (`concurrency`/`concurrencies`), every request at once
    (`requests`), or Poisson arrivals (`request_rate` with `requests`); a row with a length
    profile states the profile's mean input, its run's own mean output (the profile's outputs
    are scaled to it) and no range."""
    closed = p.concurrency is not None or bool(p.concurrencies)
    if p.request_rate is not None and (p.requests is None or closed):
        raise ValueError(
            f"calibration point {p.id}: an open-loop row gives `requests`, no concurrency"
        )
    if p.lengths is not None:
        from scoville.twin.lengths import profile

        mean_in = profile(p.lengths).mean_lengths()[0]
        if p.isl_tokens != mean_in or p.range_ratio != 1.0 or closed:
            raise ValueError(
                f"calibration point {p.id}: a row with length profile {p.lengths!r} states its "
                f"mean input {mean_in}, range_ratio 1 and no concurrency"
            )


def load_points() -> list[CalPoint]:
    return list(load_book().points)


@dataclass(frozen=True, slots=True)
class Comparison:
    point_id: str
    role: str  # the point's split: dev, test, seed, late or blind
    metric: str
    published: float
    predicted: float
    regimes: tuple[str, ...] = ()
    # the published throughput over what the row's own medians imply (`medians_ratio`)
    medians_ratio: float | None = None
    # an open-loop row's predicted throughput over its offered load (`openloop.simulate_open`'s
    # served_share); None for other rows
    served_share: float | None = None

    @property
    def error(self) -> float:
        """Relative error (predicted - published) / published."""
        return (self.predicted - self.published) / self.published


def mean_length_share(p: CalPoint) -> float:
    """The mean of the row's lengths over their maximum: uniform in [range_ratio x L, L]."""
    return (1.0 + p.range_ratio) / 2.0


def request_ms(p: CalPoint, ttft_ms: float, tpot_ms: float) -> float:
    """A request's mean time in the row's run, the one InferenceX's throughput divides by:
    TTFT + mean OSL x TPOT (`mean_length_share`)."""
    return ttft_ms + mean_length_share(p) * p.osl_tokens * tpot_ms


def stall_share(p: CalPoint) -> float | None:
    """How much of the run's mean request time its start-up stall took, or None where the
    source gives no mean TTFT: (mean - median TTFT) / `request_ms` at the mean TTFT."""
    pub = p.published
    if pub.mean_ttft_ms is None or pub.ttft_ms is None or pub.tpot_ms is None:
        return None
    return (pub.mean_ttft_ms - pub.ttft_ms) / request_ms(p, pub.mean_ttft_ms, pub.tpot_ms)


# A published throughput below this share of what the row's own median TTFT and TPOT imply
# holds time the medians do not show (a TTFT skewed above its median, a start-up stall, failed
# or retried requests), as a stalled start holds STALL_SHARE of its mean request time; `twin
# validate` names such rows, which count as they are
MEDIANS_FLOOR = 1.0 - STALL_SHARE


def medians_ratio(p: CalPoint, accelerators: int) -> float | None:
    """The published throughput per accelerator over the one the row's own medians imply by
    Little's law: concurrency x mean (ISL + OSL) / (median TTFT + mean OSL x median TPOT) /
    accelerators, lengths uniform in [range_ratio x L, L]. None where a figure is missing."""
    tput, ttft, tpot = p.published.tput_per_gpu, p.published.ttft_ms, p.published.tpot_ms
    if p.concurrency is None or tput is None or ttft is None or tpot is None:
        return None
    mean = mean_length_share(p)
    request_s = request_ms(p, ttft, tpot) / 1e3
    return tput / (p.concurrency * mean * (p.isl_tokens + p.osl_tokens) / request_s / accelerators)


def stalled_start(p: CalPoint) -> bool:
    """Whether the published throughput holds a start-up stall a steady-state twin does not
    simulate: mean TTFT at least STALL_RATIO x the median, and the difference at least
    STALL_SHARE of the mean request time. Such a row's throughput is reported in its own
    regime and left out of the fit; its TPOT and TTFT (medians, which a stall of a few
    requests does not move) count as everywhere."""
    pub, share = p.published, stall_share(p)
    if share is None or pub.mean_ttft_ms is None or pub.ttft_ms is None:
        return False  # no mean TTFT in the source (the second test narrows the types)
    return pub.mean_ttft_ms >= STALL_RATIO * pub.ttft_ms and share >= STALL_SHARE


# a run within this many days of its model's release measured a young port (`regimes`)
YOUNG_PORT_DAYS = 60
YOUNG_PORT = f"model released < {YOUNG_PORT_DAYS} days before the run"
OFFLINE = "offline (every request at once)"
OPEN_LOOP = "open loop (Poisson arrivals)"
DATASET = "dataset lengths (a length profile)"


def regimes(p: CalPoint, cfg: TwinConfig) -> tuple[str, ...]:
    """The regimes a point belongs to, for the error table: concurrency band (or offline:
    every request at once; or open loop: Poisson arrivals), a dataset's lengths,
    disaggregated, speculative decoding, hardware family, model, framework, a stalled start,
    and a prediction resting on a factor no dev row informs (`coverage.uncalibrated`), the
    quarter of the measurement's run (software of that date), where the source names it, and
    a run in its model's first YOUNG_PORT_DAYS days."""
    from scoville.twin.coverage import UNCALIBRATED, uncalibrated  # it reads this module

    conc = max(p.concurrencies or (p.concurrency or 1,))
    band = "low concurrency (<= 16)" if conc <= 16 else "high concurrency (> 16)"
    load = OPEN_LOOP if p.request_rate is not None else OFFLINE
    tags = [
        load if p.requests is not None else band,
        f"hardware {hardware_family(cfg.hardware.name)}",
        f"model {cfg.model.name}",
        f"framework {cfg.labels.get('framework', 'vllm')}",
        "disaggregated" if cfg.disagg is not None else "aggregated",
    ]
    if p.lengths is not None:
        tags.append(DATASET)
    if cfg.parallel.spec.draft_tokens:
        tags.append("MTP / speculative")
    if stalled_start(p):
        tags.append(STALLED)
    if uncalibrated(cfg):
        tags.append(UNCALIBRATED)
    tags.append(run_quarter(p))
    released = cfg.model.released
    if p.run_date and released and port_age_days(p.run_date, released) < YOUNG_PORT_DAYS:
        tags.append(YOUNG_PORT)
    return tuple(tags)


def run_quarter(p: CalPoint) -> str:
    """The regime of a point's run date: the quarter its benchmark ran in ("run 2026 Q1"), the
    engines' images of that date, or "run date not stated"."""
    if p.run_date is None:
        return "run date not stated"
    year, month = p.run_date[:4], int(p.run_date[5:7])
    return f"run {year} Q{(month - 1) // 3 + 1}"


def requests_for(conc: int, quick: bool = False) -> int:
    """InferenceX sends 10 x concurrency prompts; very large sweeps are capped (the steady
    state is reached well before), and `quick` (fitting) caps harder."""
    cap = 512 if quick else 4096
    return min(10 * conc, max(2 * conc, cap))


def point_options(p: CalPoint) -> TwinOptions:
    """The deployment a calibration point measured: its URL's options, with its run date as
    the software date where the URL names none (the day the measured software ran)."""
    opts = TwinOptions.parse_url(p.url)
    if opts.software_date is None and p.run_date is not None:
        opts = opts.model_copy(update={"software_date": p.run_date})
    return opts


def simulate_point(
    p: CalPoint,
    quick: bool = False,
    requests: int | None = None,
    book: ProfileBook | None = None,
) -> dict[str, float]:
    """Predicted metrics of one calibration point, measured as InferenceX measures: every
    request counts (no warmup excluded), lengths drawn in [range_ratio * L, L]. `book`
    replaces the shipped framework profiles (what `twin fit` tries)."""
    cfg = point_options(p).config(book)
    if p.lengths is not None or p.request_rate is not None:
        from scoville.twin.openloop import simulate_open  # it reads CalPoint

        return simulate_open(p, cfg, quick)
    if p.requests is not None:  # an offline run: its requests at once, however it is asked
        conc, n = [p.requests], p.requests
    else:
        conc = list(p.concurrencies) or [p.concurrency or 1]
        n = requests if requests is not None else requests_for(max(conc), quick)
    pts = sweep(
        cfg, p.isl_tokens, p.osl_tokens, conc, n, range_ratio=p.range_ratio, warmup_per_point=0
    )
    rows = frontier_rows(pts)
    row = rows[-1]
    return {
        "tput_per_gpu": row.tput_per_gpu,
        "tpot_ms": row.median_tpot_s * 1e3,
        "intvty": row.median_intvty,
        "ttft_ms": row.median_ttft_s * 1e3,
        "peak_tput_per_gpu": max(r.tput_per_gpu for r in rows),
    }


# runs a function over items and returns the results in the items' order
Mapper = Callable[[Callable[[Any], Any], list[Any]], list[Any]]


def serial_map(fn: Callable[[Any], Any], items: list[Any]) -> list[Any]:
    return [fn(x) for x in items]


@contextmanager
def point_mapper(jobs: int) -> Iterator[Mapper]:
    """A `Mapper` for simulating calibration points: in this process for `jobs` <= 1, else over
    a pool of `jobs` forked processes. Results come back in the items' order, so whatever is
    summed or tabulated from them is the same to the bit however they ran. `fn` must be a
    module-level function (the pool pickles it by name)."""
    if jobs <= 1:
        yield serial_map
        return
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        yield lambda fn, items: pool.map(fn, items, chunksize=1)


def _simulate(item: tuple[CalPoint, bool, int | None]) -> dict[str, float]:
    """`simulate_point` on one (point, quick, requests) triple: module level, so a process pool
    can run it."""
    return simulate_point(*item)


def validate(
    points: Sequence[CalPoint],
    requests_per_point: int | None = None,
    quick: bool = False,
    jobs: int = 1,
) -> list[Comparison]:
    """Simulate each point and compare every published metric it has; `jobs` processes
    simulate points at once (each point's prediction does not depend on it)."""
    items = [(p, quick, requests_per_point) for p in points]
    with point_mapper(min(jobs, len(items))) as run:
        preds = run(_simulate, items)
    out: list[Comparison] = []
    for p, predicted in zip(points, preds, strict=True):
        cfg = point_options(p).config()
        tags, ratio = regimes(p, cfg), medians_ratio(p, cfg.n_accelerators)
        for metric in COMPARED:
            value = getattr(p.published, metric)
            if value is not None:
                out.append(
                    Comparison(
                        p.id, p.split, metric, float(value), predicted[metric], tags, ratio,
                        predicted.get("served_share"),
                    )
                )  # fmt: skip
    return out
