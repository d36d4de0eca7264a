"""The twin's prefix cache against a trace's theoretical hit rate (Mooncake conversation)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scoville.replay import build_spec, run_replay


def _replay(tmp_path: Path, prefix_cache: str) -> dict[str, object]:
    spec = build_spec(
        "mooncake-conversation",
        None,
        {
            "target.url": f"twin:H200/gpt-oss-120b?tp=8&prefix_cache={prefix_cache}",
            "schedule": "timestamps",
            "window_s": 120.0,
            "cache_bust": False,
        },
    )
    (row,) = run_replay(spec, tmp_path / prefix_cache).rows
    return row


def test_unlimited_cache_reaches_the_theoretical_rate_and_a_small_one_falls_below(
    tmp_path: Path,
) -> None:
    unlimited = _replay(tmp_path, "unlimited")
    theory = unlimited["cache_hit_rate_theoretical"]
    assert isinstance(theory, float) and theory > 0.1
    assert unlimited["cache_hit_rate_measured"] == pytest.approx(theory, abs=1e-3)
    small = _replay(tmp_path, "100000")
    assert small["cache_hit_rate_measured"] < 0.5 * theory
