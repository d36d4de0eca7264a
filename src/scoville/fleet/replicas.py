"""Replica processes of a fleet: each is a child process serving on its own loopback port
(an HTTP twin, or embedded llama.cpp), which can be killed (SIGKILL) and restarted on the same
port. A registry of commands by kind; nothing here imports the twin (it runs as a command).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import aiohttp

from scoville.client.ports import free_port
from scoville.errors import TargetError
from scoville.targets.embedded import stop_process

CommandFor = Callable[[int, int], list[str]]  # (port, slots) -> argv


def twin_command(speedup: float) -> CommandFor:
    """`scoville twin serve` on `port` (the twin's default hardware and model)."""

    def argv(port: int, _slots: int) -> list[str]:
        code = "from scoville.cli import app; app()"
        serve = ["twin", "serve", "--port", str(port), "--speedup", str(speedup)]
        return [sys.executable, "-c", code, *serve]

    return argv


def embedded_command(ctx_per_slot: int, threads: int) -> CommandFor:
    """llama.cpp serving the embedded model on `port` with `slots` parallel slots."""

    def argv(port: int, slots: int) -> list[str]:
        return [
            *(sys.executable, "-m", "scoville.targets.embedded", "--port", str(port)),
            *("--parallel", str(slots), "--ctx-per-slot", str(ctx_per_slot)),
            *("--threads", str(threads)),
        ]

    return argv


class ReplicaProcess:
    """One replica: `start()` launches and waits for /health; `kill()` is SIGKILL."""

    def __init__(self, index: int, command: CommandFor, slots: int) -> None:
        self.index = index
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._argv = command(self.port, slots)
        self._proc: subprocess.Popen[bytes] | None = None
        self.log_path = Path(tempfile.gettempdir()) / f"scoville-replica-{self.port}.log"
        self.starts = 0

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    async def start(self, timeout_s: float = 120.0) -> float:
        """Launch and wait until /health answers 200; returns the seconds it took."""
        t0 = time.monotonic()
        with self.log_path.open("ab") as log:
            self._proc = subprocess.Popen(self._argv, stdout=log, stderr=subprocess.STDOUT)
        self.starts += 1
        async with aiohttp.ClientSession() as session:
            while time.monotonic() - t0 < timeout_s:
                if self._proc.poll() is not None:
                    raise TargetError(
                        f"Replica {self.index} exited at start (code "
                        f"{self._proc.returncode}); its log is {self.log_path}."
                    )
                if await _healthy(session, self.url):
                    return time.monotonic() - t0
                await asyncio.sleep(0.1)
        self.kill()
        raise TargetError(
            f"Replica {self.index} did not answer {self.url}/health within {timeout_s:.0f} s; "
            f"its log is {self.log_path}."
        )

    def kill(self) -> None:
        """SIGKILL: no goodbye to open streams, as when a process or its host dies."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        self._proc = None

    def stop(self) -> None:
        stop_process(self._proc)
        self._proc = None


async def _healthy(session: aiohttp.ClientSession, url: str) -> bool:
    try:
        timeout = aiohttp.ClientTimeout(total=2)
        async with session.get(url + "/health", timeout=timeout) as resp:
            return resp.status == 200
    except (aiohttp.ClientError, OSError, TimeoutError):
        return False


async def start_all(replicas: list[ReplicaProcess]) -> None:
    """Start every replica (in parallel); stop them all if one fails."""
    try:
        await asyncio.gather(*(r.start() for r in replicas))
    except BaseException:
        for r in replicas:
            r.stop()
        raise
