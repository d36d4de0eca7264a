"""`scoville calibrate`: how far can this client be trusted on this machine?

Drives a reference SSE server whose emission schedule is known (first token after `ttft_s`,
then one frame every `itl_s`; it records when it wrote each frame) with the real client and
driver at rising stream counts. Per level it measures the client's timestamp error (client
arrival stamp minus server write time, same system-wide monotonic clock), the chunk rate it
kept up with, its event-loop lag and CPU share. The envelope is the highest level that passed.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import numpy as np

from scoville.client.driver import PointPlan, run_point
from scoville.client.openai_sse import OpenAIStreamingServer
from scoville.client.ports import free_port
from scoville.client.seam import GenerateRequest, MonotonicClock
from scoville.client.selftest.integrity import (
    CPU_SHARE_LIMIT,
    ClientMonitor,
    Thresholds,
    cpu_share,
    saturation_flags,
)
from scoville.errors import DataError
from scoville.records.model import PointWindow, RequestRecord
from scoville.records.sink import Sink

SCHEMA = "scoville.calibration/1"
DEFAULT_LEVELS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


@dataclass(frozen=True, slots=True)
class Criteria:
    """A level is trustworthy when every one holds (defaults: p99 timestamp error within
    max(1 ms, 2 x the one-stream floor), a single core under 90 % busy, at least 90 % of the
    offered chunk rate, no failures). The floor is what this machine gives an idle client
    (timer and scheduler noise, other processes); the envelope is where load adds to it."""

    ts_err_p99_ms: float = 1.0
    floor_factor: float = 2.0
    cpu_share: float = CPU_SHARE_LIMIT
    min_rate_ratio: float = 0.90
    server_lag_p99_ms: float = 5.0  # beyond this the reference server, not the client, limits


@dataclass(frozen=True, slots=True)
class LevelResult:
    streams: int
    requests: int
    failed: int
    chunks: int
    offered_chunks_per_s: float
    achieved_chunks_per_s: float
    ts_err_p50_ms: float | None
    ts_err_p99_ms: float | None
    ts_err_max_ms: float | None
    server_lag_p99_ms: float | None
    loop_lag_p99_ms: float | None
    client_cpu_share: float | None
    flags: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not (set(self.flags) - NOTES)


@dataclass(frozen=True, slots=True)
class Envelope:
    """Results are trustworthy up to `max_streams` concurrent streams and `max_chunks_per_s`
    SSE frames per second on this client process. `limited_by` says what ended the sweep."""

    max_streams: int
    max_chunks_per_s: float
    # "client" (a level failed), "machine" (it failed while the client was mostly idle),
    # "reference_server" (it could not offer more), "sweep_end",
    # "nothing_passed"
    limited_by: str
    floor_ts_err_p99_ms: float | None  # p99 timestamp error of the first (lightest) level
    itl_s: float
    ttft_s: float
    criteria: Criteria
    levels: tuple[LevelResult, ...] = field(default=())

    def to_json_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["schema"] = SCHEMA
        return d

    @classmethod
    def from_json_dict(cls, d: dict[str, Any]) -> Envelope:
        levels = tuple(
            LevelResult(**{**x, "flags": tuple(x["flags"])}) for x in d.get("levels", ())
        )
        return cls(
            max_streams=int(d["max_streams"]),
            max_chunks_per_s=float(d["max_chunks_per_s"]),
            limited_by=str(d["limited_by"]),
            floor_ts_err_p99_ms=d.get("floor_ts_err_p99_ms"),
            itl_s=float(d["itl_s"]),
            ttft_s=float(d["ttft_s"]),
            criteria=Criteria(**d.get("criteria", {})),
            levels=levels,
        )


def save_envelope(env: Envelope, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(env.to_json_dict(), indent=1))


def load_envelope(path: Path) -> Envelope:
    try:
        return Envelope.from_json_dict(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataError(
            f"Cannot read the client envelope {path} ({exc}). Run `scoville "
            "calibrate --out PATH` to write one, or leave --envelope out."
        ) from None


class _Collect(Sink):
    def __init__(self) -> None:
        self.records: list[RequestRecord] = []

    def write(self, record: RequestRecord) -> None:
        self.records.append(record)

    def write_window(self, window: PointWindow) -> None:
        pass


def _p(values: Sequence[float], q: float) -> float | None:
    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if values else None


def timing_errors(
    records: Sequence[RequestRecord], truth: dict[str, Any], ttft_s: float, itl_s: float
) -> tuple[list[float], list[float]]:
    """(client stamp - server write) per frame, and (server write - intended write) per frame,
    both in ms, matched by frame index within each request. The intended times are the
    server's own (`intended_ns`, the emitter) or arrival + ttft + i x itl."""
    ts_err: list[float] = []
    server_lag: list[float] = []
    for r in records:
        t = truth.get(r.request_id)
        if t is None or not r.ok:
            continue
        emit = t["emit_ns"]
        for c, e in zip(r.chunk_ns, emit, strict=False):
            ts_err.append((c - e) / 1e6)
        intended = t.get("intended_ns") or [
            t["arrived_ns"] + (ttft_s + i * itl_s) * 1e9 for i in range(len(emit))
        ]
        server_lag.extend((e - i) / 1e6 for e, i in zip(emit, intended, strict=False))
    return ts_err, server_lag


def ts_err_limit_ms(criteria: Criteria, floor_p99_ms: float | None) -> float:
    """The p99 timestamp error a level may have: max(absolute limit, factor x floor)."""
    return max(criteria.ts_err_p99_ms, criteria.floor_factor * (floor_p99_ms or 0.0))


# Flags that are notes, not failures: a late reference server loaded the client less than
# planned, which the level's achieved chunk rate already accounts for.
# "machine_contended": the timestamps were late while this process used under half a core, so
# other processes took the CPU; calibrate again on a quiet machine.
NOTES = frozenset({"reference_server_late", "machine_contended"})


def judge(
    level: LevelResult, criteria: Criteria, floor_p99_ms: float | None = None
) -> tuple[str, ...]:
    """The criteria a level failed, as flags (empty = trustworthy); NOTES may be present."""
    flags: list[str] = []
    if level.failed:
        flags.append("failures")
    limit = ts_err_limit_ms(criteria, floor_p99_ms)
    if level.ts_err_p99_ms is None or level.ts_err_p99_ms > limit:
        flags.append("timestamp_error")
        if level.client_cpu_share is not None and level.client_cpu_share < 0.5:
            flags.append("machine_contended")
    # the run-time rule (`integrity.saturation_flags`): CPU share and loop lag, same limits
    flags += saturation_flags(
        {"client_cpu_share": level.client_cpu_share, "loop_lag_p99_ms": level.loop_lag_p99_ms},
        thresholds=Thresholds(cpu_share=criteria.cpu_share),
    )
    slack = (
        level.server_lag_p99_ms is not None and level.server_lag_p99_ms > criteria.server_lag_p99_ms
    )
    if slack:
        flags.append("reference_server_late")
    elif level.achieved_chunks_per_s < criteria.min_rate_ratio * level.offered_chunks_per_s:
        flags.append("rate_shortfall")  # the server kept time, so the client fell behind
    return tuple(flags)


def _requests(tag: str, n: int, tokens: int) -> list[GenerateRequest]:
    """`n` requests whose `user` field names them, so the server's truth can be matched."""
    return [
        GenerateRequest(
            request_id=f"{tag}-{i}",
            api="completions",
            input_tokens=1,
            max_tokens=tokens,
            prompt="calibrate",
            extra_body={"user": f"{tag}-{i}"},
        )
        for i in range(n)
    ]


async def measure_level(
    base_url: str,
    streams: int,
    tokens_per_request: int = 100,
    requests_per_stream: int = 2,
    ttft_s: float = 0.020,
    itl_s: float = 0.010,
    criteria: Criteria | None = None,
    floor_p99_ms: float | None = None,
) -> LevelResult:
    """Drive `streams` closed-loop lanes through the real client and driver; compare."""
    clock = MonotonicClock()
    server = OpenAIStreamingServer(base_url, "reference", clock)
    reqs = _requests(
        f"cal{streams}-{clock.now_ns()}", streams * requests_per_stream, tokens_per_request
    )
    plan = PointPlan(f"s{streams}", "concurrency", streams, (), reqs, concurrency=streams)
    sink, monitor = _Collect(), ClientMonitor(clock)
    await monitor.start()
    try:
        window = await run_point(server, clock, plan, sink)
    finally:
        lag = await monitor.stop()
        await server.close()
    async with aiohttp.ClientSession() as s, s.get(base_url.rstrip("/") + "/_truth") as resp:
        truth = await resp.json()
    ts_err, server_lag = timing_errors(sink.records, truth, ttft_s, itl_s)
    window_s = max(1e-9, (window.end_ns - window.start_ns) / 1e9)
    chunks = sum(len(r.chunk_ns) for r in sink.records)
    t = np.asarray(lag.lag_t_ns)
    in_win = np.asarray(lag.lag_ns)[(t >= window.start_ns) & (t <= window.end_ns)]
    level = LevelResult(
        streams=streams,
        requests=len(sink.records),
        failed=sum(1 for r in sink.records if not r.ok),
        chunks=chunks,
        offered_chunks_per_s=streams * tokens_per_request / (ttft_s + tokens_per_request * itl_s),
        achieved_chunks_per_s=chunks / window_s,
        ts_err_p50_ms=_p(ts_err, 50),
        ts_err_p99_ms=_p(ts_err, 99),
        ts_err_max_ms=max(ts_err) if ts_err else None,
        server_lag_p99_ms=_p(server_lag, 99),
        loop_lag_p99_ms=_p(list(in_win / 1e6), 99),
        client_cpu_share=cpu_share(lag, window.start_ns, window.end_ns),
        flags=(),
    )
    return _with_flags(level, criteria or Criteria(), floor_p99_ms)


def _with_flags(level: LevelResult, criteria: Criteria, floor_p99_ms: float | None) -> LevelResult:
    d = asdict(level)
    d["flags"] = judge(level, criteria, floor_p99_ms)
    return LevelResult(**d)


async def calibrate(
    base_url: str,
    levels: Sequence[int] = DEFAULT_LEVELS,
    ttft_s: float = 0.020,
    itl_s: float = 0.010,
    tokens_per_request: int = 100,
    requests_per_stream: int = 2,
    criteria: Criteria | None = None,
    on_level: Any = None,
) -> Envelope:
    """Sweep `levels` (stream counts) until one fails twice in a row (a failing level is
    measured again once: contention from other processes is bursty, client saturation is
    not); the envelope is the best level that passed. `base_url` must serve the same
    `ttft_s`/`itl_s` schedule. `on_level(level)` sees every measurement, retries included."""
    crit = criteria or Criteria()
    done: list[LevelResult] = []
    limited_by = "sweep_end"
    floor: float | None = None
    for streams in levels:
        args = (base_url, streams, tokens_per_request, requests_per_stream, ttft_s, itl_s)
        level = await measure_level(*args, crit, floor)
        if floor is not None and not level.passed:
            # one retry: noise from other processes comes in bursts, saturation persists
            if on_level is not None:
                on_level(level)
            level = await measure_level(*args, crit, floor)
        if floor is None:
            floor = level.ts_err_p99_ms
            level = _with_flags(level, crit, floor)
        done.append(level)
        if on_level is not None:
            on_level(level)
        if not level.passed:
            # late timestamps while this process used under half a core: the machine, not us
            limited_by = "machine" if "machine_contended" in level.flags else "client"
            break
        if len(done) >= 2 and level.achieved_chunks_per_s < 1.2 * done[-2].achieved_chunks_per_s:
            limited_by = "reference_server"  # more streams, no more chunks: cannot push further
            break
    passed = [lv for lv in done if lv.passed]
    if not passed:
        limited_by = "nothing_passed"
    best = max(passed, key=lambda lv: lv.achieved_chunks_per_s) if passed else None
    return Envelope(
        max_streams=best.streams if best else 0,
        max_chunks_per_s=best.achieved_chunks_per_s if best else 0.0,
        limited_by=limited_by,
        floor_ts_err_p99_ms=floor,
        itl_s=itl_s,
        ttft_s=ttft_s,
        criteria=crit,
        levels=tuple(done),
    )


def point_chunk_rate_per_s(records: Sequence[RequestRecord], window: PointWindow) -> float:
    """SSE frames per second the client received during one point's window (all phases)."""
    n = sum(
        1
        for r in records
        if r.point_id == window.point_id
        for t in r.chunk_ns
        if window.start_ns <= t <= window.end_ns
    )
    return n / max(1e-9, (window.end_ns - window.start_ns) / 1e9)


def envelope_flags(streams: float, chunks_per_s: float, env: Envelope) -> list[str]:
    """`beyond_client_envelope` when a point asked more of the client than calibration showed
    it can do on this machine (more concurrent streams, or a higher frame rate)."""
    if streams > env.max_streams or chunks_per_s > env.max_chunks_per_s:
        return ["beyond_client_envelope"]
    return []


@contextlib.contextmanager
def reference_process(
    ttft_s: float = 0.020,
    itl_s: float = 0.010,
    start_timeout_s: float = 20.0,
    module: str = "scoville.client.selftest.emitter",
) -> Iterator[str]:
    """Run a reference SSE server in its own process on a free loopback port, so it does not
    share the client's event loop or core; yields its URL. `module` is the emitter (default,
    cheapest per frame) or `scoville.targets.reference_server`; both serve /_truth."""
    port = free_port()
    argv = [sys.executable, "-m", module, "--port", str(port)]
    argv += ["--ttft-ms", str(ttft_s * 1e3), "--itl-ms", str(itl_s * 1e3)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + start_timeout_s
        while True:
            try:
                with urllib.request.urlopen(url + "/v1/models", timeout=1.0):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    err = proc.stderr.read().decode()[-500:] if proc.stderr else ""
                    raise RuntimeError(f"reference server did not start: {err}") from None
                time.sleep(0.05)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)
