"""`scoville twin fit`: fit the twin's named free parameters (`free_params.FREE_PARAMS`) on the
calibration table's dev split only (the test split stays held out), by coordinate search over
multiplicative steps (and, for a value at its floor, points spread over its range).

The objective is the weighted mean |log(predicted / published)| (capped at a factor of 2) of
per-GPU throughput, median TPOT and, at half weight, median TTFT over the dev points a parameter
touches (its framework, vendor or kernel stack; every point for the global collective-latency
scale). The fitted values are written back to the profile book with the date, the split they
were fitted on, and the dev error before and after.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Sequence

from scoville.twin.calibration import (
    THROUGHPUTS,
    CalPoint,
    Mapper,
    point_mapper,
    serial_map,
    simulate_point,
    stalled_start,
)
from scoville.twin.free_params import (
    FREE_PARAMS,
    FreeParam,
    fittable,
    lone_formats,
    lone_row,
    point_owner,
)
from scoville.twin.profiles import ProfileBook

# The metrics the loss reads, with their weights. TTFT weighs half: it is not a target of the
# twin's accuracy, and a published median under load also holds client and frontend time the
# twin does not model, but it is the only measured figure that sets prefill speed apart from
# decode speed (a mixed step's cost holds both)
METRIC_WEIGHTS = {"tput_per_gpu": 1.0, "tpot_ms": 1.0, "ttft_ms": 0.5}
STEPS = (0.5, 0.7, 0.85, 1.18, 1.4, 2.0)  # multiplicative trials per parameter and pass
# `twin fit --fine`: trials of 5 and 10 %, to refine a fitted book. The coarse grid's nearest
# trials either side of a value are 15-18 % away, so a coarse fit can stop a parameter up to
# about 8 % from the dev optimum its own steps cannot reach (both vendors' software trend
# stopped at the first coarse step, x1.18 a year)
FINE_STEPS = (0.9, 0.95, 1.05, 1.1)
# a value within ESCAPE_FACTOR of its floor, where the range spans at least ESCAPE_SPAN, is also
# tried at ESCAPE_POINTS points spread geometrically over the range (`trial_values`)
ESCAPE_FACTOR = 10.0
ESCAPE_SPAN = 100.0
ESCAPE_POINTS = 3
LOG_ERROR_CAP = math.log(2.0)  # an error beyond 2x (or 1/2) counts as 2x


def _predict(item: tuple[CalPoint, ProfileBook]) -> dict[str, float]:
    """One point's quick prediction under one book (a module-level function, so that a process
    pool can run it)."""
    point, book = item
    return simulate_point(point, quick=True, book=book)


def loss(points: Sequence[CalPoint], book: ProfileBook, mapper: Mapper = serial_map) -> float:
    """Weighted mean |log(pred / published)|, each capped at LOG_ERROR_CAP, over the target
    metrics of `points` (quick simulation; METRIC_WEIGHTS). The cap keeps a row the model cannot
    explain (a 4x error from a path it does not describe) from steering parameters that every
    other row shares. A stalled start's throughput (`stalled_start`) is left out: it holds a
    stall the twin does not simulate. So are an open-loop row's TPOT and TTFT: a quick window
    (QUICK_CAP arrivals) ends before a run near capacity settles, and its latencies are the
    fill-up's, far below the settled run's (`openloop.request_cap`); its throughput, read while
    requests arrive, stays. `mapper` runs the simulations (a process pool's map with
    `jobs`); the sum is taken in the points' order, so the loss is the same to the bit however
    they ran."""
    total = weights = 0.0
    preds = mapper(_predict, [(p, book) for p in points])
    for p, pred in zip(points, preds, strict=True):
        stalled, open_loop = stalled_start(p), p.request_rate is not None
        for m, w in METRIC_WEIGHTS.items():
            if (stalled and m in THROUGHPUTS) or (open_loop and m not in THROUGHPUTS):
                continue
            pub = getattr(p.published, m)
            if pub is not None and pred[m] > 0:
                total += w * min(LOG_ERROR_CAP, abs(math.log(pred[m] / pub)))
                weights += w
    return total / weights if weights else 0.0


def fit(
    points: Sequence[CalPoint],
    book: ProfileBook,
    params: Sequence[FreeParam] = FREE_PARAMS,
    passes: int = 2,
    log: Callable[[str], None] = lambda _s: None,
    jobs: int = 1,
    steps: Sequence[float] = STEPS,
) -> tuple[ProfileBook, float, float]:
    """Coordinate search on dev points only; returns (book, dev loss before, after). `jobs`
    processes simulate a trial's points at once (the result does not depend on it). `steps`
    are the multiplicative trials of each parameter in each pass, each taken from the best
    value so far (STEPS, or FINE_STEPS to refine; `trial_values` adds points spread over the
    range for a value at its floor)."""
    with point_mapper(jobs) as mapper:
        return _fit(points, book, params, passes, log, mapper, steps)


def trial_values(
    prm: FreeParam, best: Callable[[], float], steps: Sequence[float]
) -> Iterator[float]:
    """The values a pass tries for `prm`: each multiplicative step from the best value so far
    (`best()`, read at each step), clipped to the bounds; then, where the pass's first value sat
    within ESCAPE_FACTOR of a floor at least ESCAPE_SPAN below the ceiling, ESCAPE_POINTS points
    spread geometrically over the range. A step of x2 cannot carry a cost from its 0.1 us floor
    to the tens of microseconds a path may need in any number of passes a fit can afford; the
    spread points can (trtllm-serve's expert-parallel cost sat at 0.3 us from
    2026-12-06T04:00Z to 17:28Z, docs/design/twin.md). A value already tried in the pass (a
    clipped step's repeat, the first value itself) is not tried again: its loss is known, and
    it lost to a best that has only improved since."""
    start = best()
    tried = {start}
    spread: list[float] = []
    if prm.lo > 0 and start < prm.lo * ESCAPE_FACTOR and prm.hi >= prm.lo * ESCAPE_SPAN:
        span = prm.hi / prm.lo
        spread = [prm.lo * span ** (k / (ESCAPE_POINTS + 1)) for k in range(1, ESCAPE_POINTS + 1)]
    for v in itertools.chain((min(prm.hi, max(prm.lo, best() * s)) for s in steps), spread):
        if v not in tried:
            tried.add(v)
            yield v


def _fit(
    points: Sequence[CalPoint],
    book: ProfileBook,
    params: Sequence[FreeParam],
    passes: int,
    log: Callable[[str], None],
    mapper: Mapper,
    steps: Sequence[float],
) -> tuple[ProfileBook, float, float]:
    dev = [p for p in points if p.split == "dev"]
    owners = {p.id: point_owner(p, book) for p in dev}
    lone = lone_formats(owners.values())
    before = loss(dev, book, mapper)
    for _ in range(passes):
        for prm in params:
            mine = [p for p in dev if prm.touches(owners[p.id])]
            if prm.family_wide:
                mine = [p for p in mine if not lone_row(owners[p.id], lone)]
            if not fittable(prm, [owners[p.id] for p in mine]):
                continue
            best_v, best_l = prm.get(book), loss(mine, book, mapper)
            # late binding on purpose: each step goes from the best value found so far
            for v in trial_values(prm, lambda: best_v, steps):  # noqa: B023
                trial = loss(mine, prm.set(book, v), mapper)
                if trial < best_l - 1e-4:
                    best_v, best_l = v, trial
            book = prm.set(book, best_v)
            log(f"{prm.name} = {best_v:.6g} (dev loss over {len(mine)} points {best_l:.4f})")
    return book, before, loss(dev, book, mapper)
