"""`scoville replay` wiring: spec from the command line, a fake target, a bundle on disk."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "client"))
from agentic_fakes import FakeAgentServer

from scoville.client.seam import MonotonicClock
from scoville.errors import DataError, SpecError
from scoville.records.sink import read_records
from scoville.replay import build_spec, run_replay
from scoville.spec.model import BenchmarkSpec
from scoville.targets.base import Target
from scoville.workload.tokenizers import TiktokenTokenizer

DATA = Path(__file__).parents[1] / "workload" / "agentic" / "data"


def _opener(seen: list[BenchmarkSpec]):  # type: ignore[no-untyped-def]
    def open_fake(spec: BenchmarkSpec) -> Target:
        seen.append(spec)
        clock = MonotonicClock()
        return Target(
            server=FakeAgentServer(clock, tpot_s=0.0005),
            clock=clock,
            model="fake",
            tokenizer=TiktokenTokenizer("cl100k_base"),
            kind="fake",
        )

    return open_fake


def test_replay_of_the_mooncake_slice_writes_records_and_rows(tmp_path: Path) -> None:
    spec = build_spec(
        str(DATA / "mooncake_conversation_head300.jsonl"),
        None,
        {
            "lanes": [1, 2],
            "window_s": 0.4,
            "idle_gap_cap_s": 0.01,
            "context.target_window_tokens": 4096,
            "source.max_sessions": 40,
        },
    )
    assert spec.source.kind == "mooncake"
    seen: list[BenchmarkSpec] = []
    out = run_replay(spec, tmp_path, nonce=7, opener=_opener(seen))
    assert seen[0].load.concurrency == (1, 2)
    assert seen[0].shape.isl_tokens + seen[0].shape.osl_tokens <= 4096
    assert any("scaled by" in n for n in out.notes)
    assert [r["lanes"] for r in out.rows] == [1.0, 2.0]
    # the slice's own unlimited-cache promise (its first 40 sessions, recorded order)
    assert 0.0 < out.rows[0]["trace_hit_rate_tokens"] < 1.0
    assert out.rows[0]["context_scale_factor"] < 1.0
    for r in out.rows:
        assert r["n_ok"] > 0 and r["diagnostic"] and not r["valid"]
        assert 0.0 <= r["cache_hit_rate_measured"] <= 1.0
    assert out.run_dir is not None
    records, windows = read_records(out.run_dir / "records.jsonl")
    assert len(windows) == 2 and {w.mode for w in windows} == {"lanes"}
    assert len(records) == len(out.records)
    agentic = json.loads((out.run_dir / "agentic.json").read_text())
    assert agentic["spec"]["lanes"] == [1, 2]


def test_warmup_per_lane_is_recorded_counted_and_kept_out_of_metrics(tmp_path: Path) -> None:
    values = {"lanes": [1, 2], "window_s": 0.3, "idle_gap_cap_s": 0.01}
    values |= {"context.target_window_tokens": 4096, "source.max_sessions": 20}
    values |= {"warmup.requests_per_lane": 10}
    spec = build_spec(str(DATA / "mooncake_conversation_head300.jsonl"), None, values)
    out = run_replay(spec, tmp_path, nonce=7, opener=_opener([]))
    assert out.run_dir is not None
    manifest = json.loads((out.run_dir / "manifest.json").read_text())
    assert manifest["target"]["warmup_requests"] == {"lanes1": 10, "lanes2": 20}  # 10 a lane
    warm = [r for r in out.records if r.phase == "warmup"]
    assert len(warm) == 30
    for r in out.rows:
        measured = [x for x in out.records if x.point_id == r["point_id"] and x.phase == "measure"]
        assert r["n_sent"] == len(measured)
        assert r["on_e2e_frontier"] is False  # a diagnostic (too short) point is never on it


def test_spec_errors_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="lanes"):
        build_spec("synthetic", None, {"lanes": [0]})
    with pytest.raises(DataError, match="neither"):
        build_spec(str(tmp_path / "missing.jsonl"), None, {})
    odd = tmp_path / "odd.jsonl"
    odd.write_text('{"hello": 1}\n')
    with pytest.raises(DataError, match="unknown trace format"):
        build_spec(str(odd), None, {})
    spec_file = tmp_path / "s.yaml"
    spec_file.write_text("lanes: [3]\nwindow_s: 60\nsource: {kind: synthetic}\n")
    spec = build_spec(None, spec_file, {"window_s": 30})
    assert spec.lanes == (3,) and spec.window_s == 30 and spec.source.kind == "synthetic"


def test_cli_help_and_bad_lanes() -> None:
    from typer.testing import CliRunner

    from scoville.commands.agentic import app

    runner = CliRunner()
    res = runner.invoke(app, ["--help"])
    assert res.exit_code == 0 and "--lanes" in res.output and "--window-s" in res.output
    res = runner.invoke(app, ["synthetic", "--lanes", "1,x"])
    assert isinstance(res.exception, SpecError) and "--lanes" in str(res.exception)
