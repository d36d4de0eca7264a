"""Shared fixtures: a reference SSE server in a child process (its own CPU time, so the
client's timestamps are compared with what a separate process really sent)."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import pytest

from scoville.client.ports import free_port


def start_reference(
    ttft_ms: float, itl_ms: float, tokens_per_chunk: int = 1, fault: str = ""
) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "scoville.targets.reference_server",
            "--port",
            str(port),
            "--ttft-ms",
            str(ttft_ms),
            "--itl-ms",
            str(itl_ms),
            "--tokens-per-chunk",
            str(tokens_per_chunk),
            "--fault",
            fault,
        ]
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url + "/v1/models", timeout=1).read()
            return proc, url
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("reference server did not start")


def valid_but_for_load(point: dict[str, object]) -> bool:
    """The point is valid, or distrusted only by the client's own load rule (its lines start
    "client:"). The tool rightly flags a point whose event loop stalled, and on these VMs a
    light point's loop does stall: code run after 0.4 s idle was measured about 150x slower
    than hot (a record write 2.9 ms against 0.02 ms), so a completion's step took 11-15 ms,
    over the 10 ms loop-lag limit, on an idle machine. That says nothing about what these tests
    check (a lifecycle, a real server's answers). Any other reason still fails."""
    reasons = point.get("invalid_reasons") or []
    assert isinstance(reasons, list)
    return bool(point["valid"]) or (bool(reasons) and not but_load(reasons))


def but_load(reasons: list[str]) -> list[str]:
    """A point's reasons less the client's own load lines ("client: ..."; see
    `valid_but_for_load`)."""
    return [r for r in reasons if not str(r).startswith("client:")]


def _serving(ttft_ms: float, itl_ms: float, fault: str = "") -> Iterator[str]:
    proc, url = start_reference(ttft_ms, itl_ms, fault=fault)
    yield url
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(scope="session")
def reference_url() -> Iterator[str]:
    """Reference server: first frame 50 ms after arrival, then one token every 100 ms."""
    yield from _serving(50.0, 100.0)


@pytest.fixture(scope="session")
def wire_url() -> Iterator[str]:
    """Reference server of the wire test: first token after 40 ms, then one every 8 ms."""
    yield from _serving(40.0, 8.0)


@pytest.fixture(scope="session")
def cutting_url() -> Iterator[str]:
    """Reference server that cuts every stream after 3 frames (a 1-token probe passes)."""
    yield from _serving(2.0, 2.0, fault="cut:3")


@pytest.fixture(scope="session")
def ending_url() -> Iterator[str]:
    """Reference server whose model ends every output at once: no output token, usage kept."""
    yield from _serving(2.0, 1.0, fault="eos:0")


@pytest.fixture(scope="session")
def cut_at_once_url() -> Iterator[str]:
    """Reference server that cuts every stream before its first frame."""
    yield from _serving(2.0, 1.0, fault="cut:0")


@pytest.fixture(scope="session")
def fast_url() -> Iterator[str]:
    """Reference server: 5 ms to the first token, then 2 ms per token."""
    yield from _serving(5.0, 2.0)


@pytest.fixture(autouse=True)
def _no_configured_results_store(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Runs made by tests never land in a results store the developer configured."""
    monkeypatch.delenv("SCOVILLE_STORE", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.getbasetemp() / "xdg-config"))
