"""How busy this machine was while a test measured the client: the reference emitter in its own
process on one quiet stream (its stamps' p99 error), and the CPU other processes took during a
run (`OtherCpu`, from /proc), so a missed timing bound is blamed on the client only if quiet."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from scoville.client.selftest.calibrate import LevelResult, measure_level, reference_process

BUSY_STAMP_P99_MS = 2.0  # one stream at a frame every 10 ms stamped later than this at p99
# Other processes busier than this during a run (cores, `OtherCpu`) may have spoiled its
# timing. Measured on this 2-core VM over the 512-stream run (2.7 s): quiet 0.004-0.022;
# loads at 5-30 % duty or in bursts 0.05-0.49, every median under 0.6 ms; 1 or 2 busy loops
# 0.85-1.49, TTFT median 0.4-2.1 ms (over 1 ms in 4 of 8 runs). The limit sits well above
# the quiet floor and well below the least load seen to spoil a median.
BUSY_OTHER_CORES = 0.1
TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")


def reference_level(streams: int, itl_s: float, tokens: int) -> LevelResult:
    """`streams` closed-loop lanes of `tokens` frames every `itl_s` against the emitter."""
    with reference_process(ttft_s=0.02, itl_s=itl_s) as url:
        return asyncio.run(
            measure_level(url, streams, tokens, requests_per_stream=2, ttft_s=0.02, itl_s=itl_s)
        )


def too_busy(quiet: LevelResult) -> bool:
    """Whether one quiet stream's true stamp error (against the emitter's write times) shows
    other processes delaying this one: then no figure here is the client's own."""
    return quiet.ts_err_p99_ms is None or quiet.ts_err_p99_ms > BUSY_STAMP_P99_MS


class OtherCpu:
    """CPU time taken, from construction to `cores()`, by every process outside this one's
    tree (this process and its children, e.g. the reference server) plus the hypervisor's
    steal time, per wall second: 1.0 means another process held one core all along.

    It is the change in the sum, over those processes, of utime + stime + cutime + cstime
    (/proc/<pid>/stat): a process that ends in the window moves its whole time into its
    parent's cutime, so the sum stays exact; steal is from the `cpu` line of /proc/stat.
    A spare process timing its own 1 ms sleeps was tried and rejected: the test's own load
    delays it too (p99 1.0-1.4 ms quiet), and busy loops, which the scheduler ranks behind a
    sleeper, barely move it (1.2-2.6 ms) while they spoil the client's medians."""

    def __init__(self) -> None:
        self._t0_ns = time.monotonic_ns()
        self._ticks0 = _other_ticks()

    def cores(self) -> float:
        used_s = (_other_ticks() - self._ticks0) * TICK_S
        return used_s / max((time.monotonic_ns() - self._t0_ns) / 1e9, 1e-9)


def _other_ticks() -> int:
    """Clock ticks so far of all processes outside this one's tree, and the steal ticks."""
    ticks: dict[int, int] = {}
    parent: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # it exited while we looked
            continue
        f = text[text.rindex(")") + 2 :].split()  # fields from the 3rd on; a name may hold ")"
        pid = int(stat.parent.name)
        parent[pid] = int(f[1])
        ticks[pid] = sum(int(x) for x in f[11:15])
    mine = _tree(os.getpid(), parent)
    steal = int(Path("/proc/stat").read_text().split(maxsplit=9)[8])
    return steal + sum(t for pid, t in ticks.items() if pid not in mine)


def _tree(root: int, parent: dict[int, int]) -> set[int]:
    """`root` and all its descendants, from a pid -> parent pid map."""
    children: dict[int, list[int]] = {}
    for pid, ppid in parent.items():
        children.setdefault(ppid, []).append(pid)
    tree, todo = set(), [root]
    while todo:
        pid = todo.pop()
        tree.add(pid)
        todo += children.get(pid, [])
    return tree
