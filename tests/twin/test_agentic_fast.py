"""Agentic replay on the twin's event engine (`FastLanes`) gives the lane driver's results:
the same agentic summary metrics within 1 % on a short window, sub-agents included."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scoville.replay import build_spec, run_replay

# both engines on one small window: 12 lanes x 60 s over 16 sessions with frequent sub-agents
# (spawn, join and background), far from the hour the benchmark runs, so the lane driver
# finishes in CI time
WINDOW = {
    "lanes": [12],
    "window_s": 60.0,
    "source.synthetic.sessions": 16,
    "source.synthetic.subagent_probability": 0.3,
    "source.synthetic.background_probability": 0.3,
}
METRICS = (
    "n_sent",
    "n_primers",
    "n_plays",
    "window_s",
    "output_tput_per_accelerator",
    "req_per_s",
    "intvty_agentx",
    "intvty_inferencex",
    "median_e2e_intvty",
    "median_ttft_hit",
    "p90_ttft_hit",
    "median_ttft_miss",
    "p90_ttft_miss",
    "cache_hit_rate_measured",
    "cache_hit_rate_theoretical",
    "median_session_makespan",
    "request_time_share",
)


def _replay(tmp_path: Path, executor: str | None) -> tuple[dict[str, Any], list[str]]:
    url = "twin:H200/gpt-oss-120b?tp=8" + (f"&executor={executor}" if executor else "")
    spec = build_spec("synthetic", None, {"target.url": url, **WINDOW})
    out = run_replay(spec, tmp_path / (executor or "default"), nonce=11)
    (row,) = out.rows
    return row, out.notes


def test_event_engine_matches_the_lane_driver_within_one_percent(tmp_path: Path) -> None:
    driver, driver_notes = _replay(tmp_path, "driver")
    fast, fast_notes = _replay(tmp_path, None)  # the default for the twin
    assert any("event engine" in n for n in fast_notes)
    assert not any("event engine" in n for n in driver_notes)
    assert driver["n_sent"] > 50 and driver["n_cache_hit"] > 0 and driver["n_cache_miss"] > 0
    for key in METRICS:
        assert fast[key] == pytest.approx(driver[key], rel=0.01), key
    assert fast["valid"] == driver["valid"]


def test_live_assistant_turns_stay_on_the_lane_driver(tmp_path: Path) -> None:
    spec = build_spec(
        "synthetic",
        None,
        {
            "target.url": "twin:H200/gpt-oss-120b?tp=8",
            "assistant_turns": "live",
            "lanes": [1],
            "window_s": 5.0,
            "source.synthetic.sessions": 2,
        },
    )
    out = run_replay(spec, tmp_path, nonce=3)
    assert not any("event engine" in n for n in out.notes)
    assert out.rows[0]["n_sent"] > 0


def test_timestamp_replay_matches_the_lane_driver_within_one_percent(tmp_path: Path) -> None:
    rows = {}
    for executor in ("driver", "fast"):
        values = {
            "target.url": f"twin:H200/gpt-oss-120b?tp=8&executor={executor}",
            "schedule": "timestamps",
            "window_s": 120.0,
            "cache_bust": False,
        }
        spec = build_spec("mooncake-conversation", None, values)
        (rows[executor],) = run_replay(spec, tmp_path / executor, nonce=5).rows
    assert rows["driver"]["n_sent"] > 100
    per_play = ("n_primers", "n_plays", "median_session_makespan")  # one play per session here
    for key in ("lanes", *(k for k in METRICS if k not in per_play)):
        assert rows["fast"][key] == pytest.approx(rows["driver"][key], rel=0.01), key


def test_warm_up_per_lane_runs_on_the_event_engine_as_on_the_lane_driver(tmp_path: Path) -> None:
    """Three warm-up requests a lane: recorded as phase warmup by both engines, out of every
    metric, and the measured window gives the same figures."""
    over = {**WINDOW, "lanes": [4], "window_s": 30.0, "warmup.requests_per_lane": 3}
    rows = {}
    for executor in ("driver", "fast"):
        url = f"twin:H200/gpt-oss-120b?tp=8&executor={executor}"
        spec = build_spec("synthetic", None, {**over, "target.url": url})
        out = run_replay(spec, tmp_path / executor, nonce=5)
        (rows[executor],) = out.rows
        assert out.run_dir is not None
        manifest = json.loads((out.run_dir / "manifest.json").read_text())
        assert manifest["target"]["warmup_requests"] == {rows[executor]["point_id"]: 12}
    for key in METRICS:
        assert rows["fast"][key] == pytest.approx(rows["driver"][key], rel=0.01), key
