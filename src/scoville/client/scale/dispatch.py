"""Choosing how many client processes a point needs, and where they run.

`parse_workers` reads the `--workers` option ("1", "4", "ray", "ray:8",
"ray://head:10001?workers=16"); `workers_needed` sizes a local pool from the calibrated
envelope; `run_point_scaled` dispatches to local processes or Ray.
"""

from __future__ import annotations

import math
import re
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from scoville.client.driver import PointPlan
from scoville.client.scale.workers import WorkerResult, WorkerTarget, run_point_processes
from scoville.errors import UserError
from scoville.records.model import PointWindow, RequestRecord

_RAY_LOCAL = re.compile(r"^ray(?::(\d+))?$")
_RAY_REMOTE = re.compile(r"^(ray://[^?]+)(?:\?workers=(\d+))?$")


@dataclass(frozen=True, slots=True)
class WorkersSpec:
    """`inline`: the pipeline's own event loop (n=1); `processes`: n spawned local workers;
    `ray`: n Ray tasks on a local instance (address None) or a cluster."""

    kind: Literal["inline", "processes", "ray"]
    n: int = 1
    address: str | None = None


def parse_workers(text: str | int | None, default_ray_n: int = 2) -> WorkersSpec:
    """Parse `--workers`. Raises UserError with the accepted forms on anything else."""
    s = str(text).strip() if text is not None else "1"
    if s in ("", "1", "0"):
        return WorkersSpec("inline")
    if s.isdigit():
        return WorkersSpec("processes", int(s))
    m = _RAY_LOCAL.match(s)
    if m:
        return WorkersSpec("ray", int(m.group(1) or default_ray_n))
    m = _RAY_REMOTE.match(s)
    if m:
        return WorkersSpec("ray", int(m.group(2) or default_ray_n), m.group(1))
    raise UserError(
        f"--workers {s!r} is not understood. Use a number of local processes (e.g. 4), "
        "'ray' or 'ray:N' for a local Ray instance, or 'ray://HEAD:10001?workers=N' for a "
        "Ray cluster."
    )


def workers_needed(
    expected_chunks_per_s: float, envelope_chunks_per_s: float, headroom: float = 0.8
) -> int:
    """Local processes needed so each stays under `headroom` x the calibrated chunk rate
    (at least 1). With no envelope (<= 0) the answer is 1: nothing says more would help."""
    if envelope_chunks_per_s <= 0 or expected_chunks_per_s <= 0:
        return 1
    return max(1, math.ceil(expected_chunks_per_s / (headroom * envelope_chunks_per_s)))


def scaled_session(spec: WorkersSpec) -> AbstractContextManager[None]:
    """Around a whole sweep: for a local Ray instance, shut it down at the end and stop the
    processes Ray leaves behind (`ray_session.local_ray_session`); else nothing."""
    if spec.kind == "ray" and spec.address is None:
        from scoville.client.scale.ray_session import local_ray_session

        return local_ray_session()
    return nullcontext()


def run_point_scaled(
    target: WorkerTarget, plan: PointPlan, spec: WorkersSpec, work_dir: Path
) -> tuple[list[RequestRecord], PointWindow, list[WorkerResult]]:
    """Drive one point with the workers `spec` names (blocking; call via asyncio.to_thread).
    `inline` is the pipeline's business (it calls `run_point` itself)."""
    if spec.kind == "processes":
        return run_point_processes(target, plan, spec.n, work_dir)
    if spec.kind == "ray":
        from scoville.client.scale.ray_workers import run_point_ray

        return run_point_ray(target, plan, spec.n, spec.address)
    raise ValueError("inline points are run by the pipeline's own driver call")


def rerun_workers(row: dict[str, object], envelope_chunks_per_s: float, max_workers: int) -> int:
    """The automatic rule: a point whose client was saturated or beyond its envelope is run
    again with enough local processes for the chunk rate it reached (times 1.5, since a
    saturated client under-reports the rate it was asked for); 1 means keep the result."""
    flags = row.get("client_flags")
    beyond = isinstance(flags, list) and "beyond_client_envelope" in flags
    if not row.get("client_saturated") and not beyond:
        return 1
    rate = row.get("client_chunks_per_s")
    if not isinstance(rate, int | float) or envelope_chunks_per_s <= 0:
        return min(max_workers, 2)
    return min(max_workers, max(2, workers_needed(1.5 * rate, envelope_chunks_per_s)))
