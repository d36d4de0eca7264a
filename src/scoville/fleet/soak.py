"""`scoville soak`: start a fleet (replica processes behind the router), keep a steady
closed-loop load on it for the spec's duration, apply the fault schedule, record every request.

Files in the run directory: `soak_spec.json`, `records.jsonl` (the usual sink, one window
"soak"), `replicas.jsonl` (the router's view: who served each request), `faults.jsonl` (each
fault event, monotonic ns), then `soak.json` and `soak.html` from `fleet/summary.py`.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from scoville.bundle.files import write_json
from scoville.client.driver import count_chunk_tokens, to_record
from scoville.client.openai_sse import OpenAIStreamingServer
from scoville.client.seam import GenerateRequest, MonotonicClock
from scoville.fleet.replicas import ReplicaProcess, embedded_command, start_all, twin_command
from scoville.fleet.router import Router
from scoville.fleet.spec import DropFault, KillFault, LatencyFault, SlowFault, SoakSpec
from scoville.records.model import ErrorKind, PointWindow, RequestRecord
from scoville.records.sink import RecordSink

POINT_ID = "soak"
Progress = Callable[[str], None]
_WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima".split()


@dataclass
class Tally:
    """Requests as the load generator counted them (checked against the files later)."""

    sent: int = 0
    ok: int = 0
    failed: int = 0
    cancelled: int = 0
    by_error: dict[str, int] = field(default_factory=dict)


def _replicas(spec: SoakSpec) -> list[ReplicaProcess]:
    if spec.replicas_kind == "embedded":
        from scoville.targets.embedded import gguf_path, verify_gguf

        verify_gguf(gguf_path())  # a clear message here, not in every child
        ctx = spec.isl_tokens * 2 + spec.osl_tokens + 64  # words may take 2 tokens each
        cmd = embedded_command(ctx_per_slot=ctx, threads=1)
    else:
        cmd = twin_command(spec.twin_speedup)
    return [ReplicaProcess(i, cmd, spec.streams_per_replica) for i in range(spec.replicas)]


class FaultLog:
    """Appends fault events to `faults.jsonl` (t_ns monotonic, t_s from the soak's start)."""

    def __init__(self, path: Path, t0_ns: int) -> None:
        self.t0_ns = t0_ns
        self._fh: IO[str] = path.open("a", encoding="utf-8")

    def event(self, fault: int, kind: str, action: str, **facts: Any) -> None:
        t_ns = time.monotonic_ns()
        row = {"fault": fault, "kind": kind, "action": action, "t_ns": t_ns}
        row |= {"t_s": (t_ns - self.t0_ns) / 1e9, **facts}
        self._fh.write(json.dumps(row) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()


async def _at(t0: float, at_s: float) -> None:
    await asyncio.sleep(max(0.0, t0 + at_s - time.monotonic()))


async def _apply(
    i: int, fault: Any, reps: list[ReplicaProcess], router: Router, log: FaultLog, t0: float
) -> None:
    """Run fault `i` of the schedule: start it at its time, end it after its span."""
    await _at(t0, fault.at_s)
    if isinstance(fault, KillFault):
        reps[fault.replica].kill()
        log.event(i, "kill", "start", replica=fault.replica)
        if fault.restart_after_s is not None:
            await _at(t0, fault.at_s + fault.restart_after_s)
            log.event(i, "kill", "restart", replica=fault.replica)
            took_s = await reps[fault.replica].start()
            log.event(i, "kill", "ready", replica=fault.replica, start_s=took_s)
        return
    targets = range(len(reps)) if fault.replica is None else (fault.replica,)
    knob, value = _knob(fault)
    for r in targets:
        setattr(router.faults[r], knob, value)
    log.event(i, fault.kind, "start", replica=fault.replica, **{knob: value})
    if fault.for_s is not None:
        await _at(t0, fault.at_s + fault.for_s)
        for r in targets:
            setattr(router.faults[r], knob, 1.0 if knob == "slow_factor" else 0.0)
        log.event(i, fault.kind, "end", replica=fault.replica)


def _knob(fault: SlowFault | LatencyFault | DropFault) -> tuple[str, float]:
    if isinstance(fault, SlowFault):
        return "slow_factor", fault.factor
    if isinstance(fault, LatencyFault):
        return "add_ms", fault.add_ms
    return "drop_fraction", fault.fraction


def _prompt(rng: random.Random, isl_tokens: int) -> str:
    return f"{rng.randrange(10**9):09d} " + " ".join(rng.choices(_WORDS, k=isl_tokens - 1))


async def _stream(
    k: int,
    spec: SoakSpec,
    server: OpenAIStreamingServer,
    sink: RecordSink,
    tally: Tally,
    end_at: float,
) -> None:
    """One closed-loop stream: send, wait for the answer, record, send again until `end_at`."""
    rng = random.Random(spec.seed * 1_000_003 + k)
    n = 0
    while time.monotonic() < end_at:
        rid = f"s{k}-{n}"
        n += 1
        req = GenerateRequest(
            request_id=rid,
            api="completions",
            input_tokens=spec.isl_tokens,
            max_tokens=spec.osl_tokens,
            prompt=_prompt(rng, spec.isl_tokens),
            extra_body={"user": rid},  # the router reads it to say who served the request
        )
        tally.sent += 1
        start_ns = time.monotonic_ns()
        try:
            ex = await server.generate(req)
        except asyncio.CancelledError:
            _write(sink, tally, _cancelled(req, start_ns, k))
            raise
        _write(
            sink,
            tally,
            to_record(ex, req, POINT_ID, "measure", count_chunk_tokens(ex, None), worker=str(k)),
        )


def _cancelled(req: GenerateRequest, start_ns: int, k: int) -> RequestRecord:
    return RequestRecord(
        request_id=req.request_id,
        point_id=POINT_ID,
        phase="measure",
        start_ns=start_ns,
        end_ns=time.monotonic_ns(),
        expected_input_tokens=req.input_tokens,
        expected_output_tokens=req.max_tokens,
        token_source="none",
        error=ErrorKind.CANCELLED,
        error_detail="soak ended while the request was in flight",
        worker=str(k),
    )


def _write(sink: RecordSink, tally: Tally, rec: RequestRecord) -> None:
    sink.write(rec)
    if rec.error is None:
        tally.ok += 1
    elif rec.error == ErrorKind.CANCELLED:
        tally.cancelled += 1
    else:
        tally.failed += 1
        tally.by_error[rec.error.value] = tally.by_error.get(rec.error.value, 0) + 1


async def run_soak(spec: SoakSpec, run_dir: Path, say: Progress = print) -> Tally:
    """Start the fleet, load it for `spec.duration_s`, apply the faults, stop everything."""
    run_dir.mkdir(parents=True, exist_ok=True)
    write_json(run_dir / "soak_spec.json", spec.model_dump(mode="json"))
    reps = _replicas(spec)
    say(f"starting {spec.replicas} {spec.replicas_kind} replicas")
    await start_all(reps)
    router = Router([r.url for r in reps], run_dir / "replicas.jsonl", spec.router_retries)
    tally = Tally()
    try:
        url = await router.start()
        say(f"router {url}; soak of {spec.duration_s:g} s at {spec.streams} streams")
        await _drive(spec, reps, router, run_dir, tally)
    finally:
        await router.stop()
        for r in reps:
            r.stop()
    return tally


async def _drive(
    spec: SoakSpec, reps: list[ReplicaProcess], router: Router, run_dir: Path, tally: Tally
) -> None:
    clock = MonotonicClock()
    server = OpenAIStreamingServer(router.url, "default", clock, None, spec.request_timeout_s)
    t0_ns = time.monotonic_ns()
    t0 = t0_ns / 1e9
    log = FaultLog(run_dir / "faults.jsonl", t0_ns)
    log.event(-1, "soak", "start")
    with RecordSink(run_dir / "records.jsonl") as sink:
        faults = [
            asyncio.create_task(_apply(i, f, reps, router, log, t0))
            for i, f in enumerate(spec.faults)
        ]
        streams = [
            asyncio.create_task(_stream(k, spec, server, sink, tally, t0 + spec.duration_s))
            for k in range(spec.streams)
        ]
        try:  # in-flight requests at the end get up to their timeout, then are cancelled
            await asyncio.wait(streams, timeout=spec.duration_s + spec.request_timeout_s)
        finally:  # also on Ctrl-C: cancelled requests are recorded, the soak is closed
            for task in [*streams, *faults]:
                task.cancel()
            await asyncio.gather(*streams, *faults, return_exceptions=True)
            log.event(-1, "soak", "end")
            sink.write_window(
                PointWindow(
                    POINT_ID, t0_ns, time.monotonic_ns(), "concurrency", spec.streams, tally.sent
                )
            )
            await server.close()
            log.close()
