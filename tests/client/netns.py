"""A loopback-only network namespace for the Ray tests (Ray must not reach the network)."""

from __future__ import annotations

import os
import subprocess

import pytest


def loopback_netns(prefix: str) -> str:
    """A new network namespace with only `lo` up, named after `prefix` and this process; the
    calling test is skipped when one cannot be made (it needs root and iproute2)."""
    name = f"{prefix}-{os.getpid()}"
    for cmd in (
        ["ip", "netns", "add", name],
        ["ip", "netns", "exec", name, "ip", "link", "set", "lo", "up"],
    ):
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            subprocess.run(["ip", "netns", "delete", name], capture_output=True)
            pytest.skip(
                f"cannot make a loopback-only network namespace ({proc.stderr.strip()}); "
                "the Ray tests need one (root + iproute2) to keep Ray off the network"
            )
    return name
