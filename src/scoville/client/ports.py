"""A free loopback TCP port, for the servers scoville starts itself (embedded llama.cpp, the
calibration emitter, the reference server in tests and benchmarks)."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port the OS just reported free on 127.0.0.1 (another process may take it first)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
