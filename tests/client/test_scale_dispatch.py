"""Parsing --workers and sizing the local pool from the envelope."""

from __future__ import annotations

import pytest

import scoville.client.scale.dispatch as scaleout
from scoville.errors import UserError

WorkersSpec = scaleout.WorkersSpec


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        (None, WorkersSpec("inline")),
        ("1", WorkersSpec("inline")),
        (4, WorkersSpec("processes", 4)),
        ("ray", WorkersSpec("ray", 2)),
        ("ray:8", WorkersSpec("ray", 8)),
        ("ray://head:10001", WorkersSpec("ray", 2, "ray://head:10001")),
        ("ray://10.0.0.5:10001?workers=16", WorkersSpec("ray", 16, "ray://10.0.0.5:10001")),
    ],
)
def test_parse_workers(text: object, spec: object) -> None:
    assert scaleout.parse_workers(text) == spec


@pytest.mark.parametrize("bad", ["-2", "ray:", "rays", "ray://", "two"])
def test_parse_workers_rejects(bad: str) -> None:
    with pytest.raises(UserError, match="--workers"):
        scaleout.parse_workers(bad)


def test_workers_needed() -> None:
    # envelope 10k chunks/s, 80 % headroom -> 8k per process
    assert scaleout.workers_needed(7_999, 10_000) == 1
    assert scaleout.workers_needed(8_001, 10_000) == 2
    assert scaleout.workers_needed(30_000, 10_000) == 4
    assert scaleout.workers_needed(30_000, 0) == 1


def test_rerun_workers_rule() -> None:
    clean = {"client_saturated": False, "client_flags": [], "client_chunks_per_s": 5_000.0}
    assert scaleout.rerun_workers(clean, 10_000, 8) == 1
    hot = {
        "client_saturated": True,
        "client_flags": ["client_cpu_saturated"],
        "client_chunks_per_s": 12_000.0,
    }
    # 1.5 x 12k = 18k chunks/s at 8k per process -> 3
    assert scaleout.rerun_workers(hot, 10_000, 8) == 3
    assert scaleout.rerun_workers(hot, 10_000, 2) == 2
    beyond = {"client_flags": ["beyond_client_envelope"], "client_chunks_per_s": 1_000.0}
    assert scaleout.rerun_workers(beyond, 10_000, 8) == 2
    assert scaleout.rerun_workers({"client_saturated": True}, 0, 8) == 2
