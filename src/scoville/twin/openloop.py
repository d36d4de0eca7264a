"""Calibration rows measured as MLPerf measures: requests whose lengths come from a dataset's
length profile (`twin/lengths.py`), sent all at once (Offline) or at Poisson arrivals of a
stated rate over the deployment (Server and Interactive). `calibration.simulate_point` hands
such rows here.

An open-loop row's run lasts minutes to hours (MLPerf's at least 600 s), so it is simulated on
as many of its requests as `request_cap` affords (QUICK_CAP when fitting), the first tenth not
measured (the deployment fills up), and its throughput is the tokens served while requests
still arrive (from the first measured arrival to the last, `steady_rate`): the rate a long run
settles at, which is the offered load where the deployment keeps up and its service rate where
it does not, with the window's own drain (the longest outputs end long after the last arrival)
left out, as a long run all but leaves it out. Its TTFT and TPOT are the medians over the
measured requests (MLPerf's 50th percentiles, per request as `docs/METRICS.md`).
`served_share` is that throughput over the load offered in the same span: below SERVED_FLOOR
the twin's deployment does not keep up with the rate (its queue grows with the window, its
TTFT with it: a rate past the capacity the twin predicts) or is still filling up when the
window ends; `twin validate` names such rows.

An all-at-once run is simulated on as many requests as fill its engines' seats a few times
(`request_cap`), and its throughput read over whole turnovers of those seats after the first
(`offline_rate`): the full batch turning over, as a ten-minute run almost entirely is.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from scoville.client.plan import length_requests
from scoville.client.seam import GenerateRequest
from scoville.records.model import RequestRecord
from scoville.twin.cluster import TwinConfig, seat_limit
from scoville.twin.fast import run_point
from scoville.twin.frontier import frontier_rows
from scoville.twin.lengths import dataset_requests, seed_of
from scoville.workload.arrivals import arrival_offsets_ns

if TYPE_CHECKING:
    from scoville.twin.calibration import CalPoint

OPEN_LOOP_CAP, QUICK_CAP = 20_000, 3_000
# an open-loop window runs as long as the run itself up to this many requests and (beyond
# OPEN_LOOP_CAP) this many output tokens: 20-30 s of simulation on one core
OPEN_LOOP_REQUESTS, OPEN_LOOP_TOKENS = 250_000, 100_000_000
WARMUP_SHARE = 0.1  # of an open-loop window, not measured
SERVED_FLOOR = 0.95  # of the offered load: below it the twin does not keep up with the rate
OFFLINE_WAVES, QUICK_WAVES, MIN_OFFLINE = 8, 2, 1_000
# output tokens an all-at-once row is simulated on, over as many of its replicas as they afford
OFFLINE_TOKENS = 800_000_000


def steady_rate(records: Sequence[RequestRecord], lo_ns: int, hi_ns: int) -> float:
    """Tokens a second the deployment served between `lo_ns` and `hi_ns`: every output token
    streamed in the window, and the prompt of every request whose first token came in it."""
    if hi_ns <= lo_ns:
        return 0.0
    tokens = 0
    for r in records:
        if not r.chunk_ns:
            continue
        a, b = bisect_left(r.chunk_ns, lo_ns), bisect_left(r.chunk_ns, hi_ns)
        tokens += sum(r.chunk_tokens[a:b])
        if lo_ns <= r.chunk_ns[0] < hi_ns:
            tokens += r.input_tokens
    return tokens / ((hi_ns - lo_ns) / 1e9)


def offered_rate(
    reqs: Sequence[GenerateRequest], arrival_ns: Sequence[int], lo_ns: int, hi_ns: int
) -> float:
    """Tokens a second offered between `lo_ns` and `hi_ns`: the prompt and output of every
    request that arrives in the window (what `steady_rate` counts where the deployment keeps
    up)."""
    if hi_ns <= lo_ns:
        return 0.0
    tokens = sum(
        r.input_tokens + r.max_tokens
        for r, t in zip(reqs, arrival_ns, strict=True)
        if lo_ns <= t < hi_ns
    )
    return tokens / ((hi_ns - lo_ns) / 1e9)


def request_cap(p: CalPoint, seats: int, quick: bool) -> int:
    """How many of a row's requests are simulated: an open-loop run's as many as the run
    itself sent, up to OPEN_LOOP_REQUESTS and, beyond OPEN_LOOP_CAP, OPEN_LOOP_TOKENS output
    tokens (QUICK_CAP when fitting); an all-at-once run's as many as fill the deployment's
    `seats` OFFLINE_WAVES times (QUICK_WAVES when fitting), at least MIN_OFFLINE.

    An open-loop run near its deployment's capacity fills up over many request times (its
    batch grows, each step slows, every request stays longer), for a quarter of an hour on
    some of MLPerf's Server runs; a run of a few minutes' arrivals reads its TPOT and TTFT
    before they settle, far below what a run of MLPerf's length reports."""
    if p.request_rate is not None:
        if quick:
            return QUICK_CAP
        by_tokens = max(OPEN_LOOP_CAP, OPEN_LOOP_TOKENS // max(1, p.osl_tokens))
        return min(OPEN_LOOP_REQUESTS, by_tokens)
    return max(MIN_OFFLINE, (QUICK_WAVES if quick else OFFLINE_WAVES) * seats)


def replicas_within(cfg: TwinConfig, n: int, osl: int) -> tuple[TwinConfig, int]:
    """An all-at-once run over identical replicas, each given the same share of the requests,
    simulated on as many of them as OFFLINE_TOKENS output tokens afford: a replica's throughput
    per GPU is the deployment's, and a rack-scale run (hundreds of thousands of seats, millions
    of requests) would not fit in memory whole. Returns the deployment simulated and its
    requests."""
    if cfg.disagg is not None or cfg.replicas <= 1 or n * osl <= OFFLINE_TOKENS:
        return cfg, n
    keep = max(1, OFFLINE_TOKENS * cfg.replicas // (n * osl))
    return replace(cfg, replicas=keep), n * keep // cfg.replicas


def offline_rate(records: Sequence[RequestRecord], seats: int, fallback: float) -> float:
    """Tokens a second an all-at-once run serves with its batch full and requests still
    waiting (`steady_rate`), over whole turnovers of its seats: from the first token of its
    `seats`-th request (every seat taken once) to that of its k x `seats`-th, k the most whole
    batches the run holds, so that waves of sequences that start and end together are counted
    whole. `fallback` (the whole run's rate) where the run holds fewer than two batches."""
    firsts = sorted(r.chunk_ns[0] for r in records if r.chunk_ns)
    k = len(firsts) // seats
    if k < 2:
        return fallback
    lo, hi = firsts[seats - 1], firsts[k * seats - 1]
    return steady_rate(records, lo, hi) if hi > lo else fallback


def simulate_open(p: CalPoint, cfg: TwinConfig, quick: bool = False) -> dict[str, float]:
    """Predicted metrics of a row with a length profile or an arrival rate."""
    if p.requests is None:
        raise ValueError(f"calibration point {p.id}: a dataset or open-loop row says `requests`")
    seats = seat_limit(cfg)
    n = min(p.requests, request_cap(p, seats, quick))
    if p.request_rate is None:
        cfg, n = replicas_within(cfg, n, p.osl_tokens)
        seats = seat_limit(cfg)
    seed = seed_of(p.id)
    if p.lengths is not None:
        reqs = dataset_requests(p.lengths, n, seed, tag="r", output_mean=p.osl_tokens)
    else:
        reqs = length_requests(n, p.isl_tokens, p.osl_tokens, p.range_ratio, seed, tag="r")
    extra: dict[str, float] = {}  # an open-loop row's served share (an all-at-once run has none)
    if p.request_rate is None:  # every request at once
        res = run_point(cfg, reqs, p.id, concurrency=n)
        row = frontier_rows([res])[-1]
        whole = row.tput_per_gpu * cfg.n_accelerators
        tput = offline_rate(res.records, seats, whole) / cfg.n_accelerators
    else:
        warm = int(n * WARMUP_SHARE)
        arrivals = arrival_offsets_ns(n, p.request_rate, 1.0, seed)
        res = run_point(cfg, reqs, p.id, arrival_ns=arrivals, warmup=warm)
        row = frontier_rows([res])[-1]
        lo, hi = arrivals[warm], arrivals[-1]
        served = steady_rate(res.records, lo, hi)
        tput = served / cfg.n_accelerators
        offered = offered_rate(reqs, arrivals, lo, hi)
        extra["served_share"] = served / offered if offered > 0 else 1.0
    return {
        "tput_per_gpu": tput,
        "tpot_ms": row.median_tpot_s * 1e3,
        "intvty": row.median_intvty,
        "ttft_ms": row.median_ttft_s * 1e3,
        "peak_tput_per_gpu": tput,
        **extra,
    }
