"""Calibration rows measured as MLPerf measures: requests whose lengths come from a dataset's
length profile (`twin/lengths.py`), sent all at once (Offline) or at Poisson arrivals of a
stated rate over the deployment (Server and Interactive). `calibration.simulate_point` hands
such rows here.

An open-loop row's run lasts minutes (MLPerf's at least 600 s), so it is simulated on a window
of at most OPEN_LOOP_CAP requests (QUICK_CAP when fitting), the first tenth not measured (the
deployment fills up), and its throughput is the measured requests' tokens over the span of
their completions: the rate a long run settles at, which is the offered load where the
deployment keeps up and its service rate where it does not. Its TTFT and TPOT are the medians
over the measured requests (MLPerf's 50th percentiles, per request as `docs/METRICS.md`). An
all-at-once run of more requests than fill its deployment's batches OFFLINE_WAVES times is
simulated on that many (`request_cap`): its ramp-up and drain stay a small share.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scoville.client.plan import length_requests
from scoville.twin.cluster import TwinConfig
from scoville.twin.fast import run_point
from scoville.twin.frontier import frontier_rows
from scoville.twin.lengths import dataset_requests, seed_of
from scoville.workload.arrivals import arrival_offsets_ns

if TYPE_CHECKING:
    from scoville.twin.calibration import CalPoint

OPEN_LOOP_CAP, QUICK_CAP = 20_000, 3_000
WARMUP_SHARE = 0.1  # of an open-loop window, not measured
OFFLINE_WAVES = 20


def request_cap(p: CalPoint, cfg: TwinConfig, quick: bool) -> int:
    """How many of a row's requests are simulated: an open-loop run's window (OPEN_LOOP_CAP,
    QUICK_CAP when fitting); an all-at-once run's as many as fill every replica's batch
    OFFLINE_WAVES times (at least OPEN_LOOP_CAP), so its ramp-up and drain stay a small share."""
    if p.request_rate is not None:
        return QUICK_CAP if quick else OPEN_LOOP_CAP
    ranks = cfg.parallel.dp if cfg.parallel.dp_attention else 1
    batch = cfg.engine.max_num_seqs * ranks * cfg.replicas
    return max(QUICK_CAP if quick else OPEN_LOOP_CAP, OFFLINE_WAVES * batch)


def simulate_open(p: CalPoint, cfg: TwinConfig, quick: bool = False) -> dict[str, float]:
    """Predicted metrics of a row with a length profile or an arrival rate."""
    if p.requests is None:
        raise ValueError(f"calibration point {p.id}: a dataset or open-loop row says `requests`")
    n = min(p.requests, request_cap(p, cfg, quick))
    seed = seed_of(p.id)
    if p.lengths is not None:
        reqs = dataset_requests(p.lengths, n, seed, tag="r")
    else:
        reqs = length_requests(n, p.isl_tokens, p.osl_tokens, p.range_ratio, seed, tag="r")
    if p.request_rate is None:  # every request at once
        res = run_point(cfg, reqs, p.id, concurrency=n)
        row = frontier_rows([res])[-1]
        tput = row.tput_per_gpu
    else:
        warm = int(n * WARMUP_SHARE)
        arrivals = arrival_offsets_ns(n, p.request_rate, 1.0, seed)
        res = run_point(cfg, reqs, p.id, arrival_ns=arrivals, warmup=warm)
        row = frontier_rows([res])[-1]
        ok = [r for r in res.records if r.phase == "measure" and r.ok and r.chunk_ns]
        ends = [r.chunk_ns[-1] for r in ok]
        span_s = (max(ends) - min(ends)) / 1e9 if len(ends) > 1 else 0.0
        tokens = sum(r.input_tokens + r.output_tokens for r in ok)
        tput = tokens / span_s / cfg.n_accelerators if span_s > 0 else 0.0
    return {
        "tput_per_gpu": tput,
        "tpot_ms": row.median_tpot_s * 1e3,
        "intvty": row.median_intvty,
        "ttft_ms": row.median_ttft_s * 1e3,
        "peak_tput_per_gpu": tput,
    }
