"""The life of a local Ray instance started for a sweep: `local_ray_session` shuts it down
when the sweep ends and stops every process it left behind.

`ray.shutdown()` stops the raylet and GCS it started, but their children DashboardAgent and
RuntimeEnvAgent are reparented and keep running after scoville exits. So the processes Ray
started are listed (every descendant of the children this process gained while the session
was open) before the shutdown, and those still alive after it are terminated, then killed.
Linux only (it reads /proc); elsewhere only `ray.shutdown()` runs.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

PROC = Path("/proc")


def _children_map() -> dict[int, list[int]]:
    """ppid -> pids, from /proc (empty where there is no /proc)."""
    out: dict[int, list[int]] = {}
    for entry in PROC.glob("[0-9]*/stat") if PROC.is_dir() else ():
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = entry.read_text().rsplit(")", 1)[1].split()
            out.setdefault(int(fields[1]), []).append(int(entry.parent.name))
    return out


def _descendants(roots: set[int], tree: dict[int, list[int]]) -> set[int]:
    seen: set[int] = set()
    todo = list(roots)
    while todo:
        pid = todo.pop()
        if pid not in seen:
            seen.add(pid)
            todo.extend(tree.get(pid, ()))
    return seen


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop_processes(pids: set[int], grace_s: float = 5.0) -> set[int]:
    """SIGTERM each live pid, wait up to `grace_s`, SIGKILL what remains; returns the pids
    that had to be stopped."""
    live = {p for p in pids if _alive(p)}
    for pid in live:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(_alive(p) for p in live):
        time.sleep(0.05)
    for pid in live:
        if _alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    return live


@contextlib.contextmanager
def local_ray_session() -> Iterator[None]:
    """Around a sweep that may start a local Ray instance (see the module docstring)."""
    before = set(_children_map().get(os.getpid(), ()))
    try:
        yield
    finally:
        tree = _children_map()
        started = set(tree.get(os.getpid(), ())) - before
        ray_pids = _descendants(started, tree)
        with contextlib.suppress(ImportError):
            import ray

            if ray.is_initialized():
                ray.shutdown()
        stop_processes(ray_pids)
