"""Sources: Mooncake JSONL and AgentX/WEKA traces into session graphs; bad input is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scoville.errors import DataError
from scoville.workload.agentic.mooncake import (
    group_by_prefix,
    mooncake_sessions,
    read_mooncake_requests,
)
from scoville.workload.agentic.weka import weka_sessions

DATA = Path(__file__).parent / "data"


def _write(tmp_path: Path, name: str, lines: list[str]) -> Path:
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return p


def test_mooncake_groups_by_shared_prefix(tmp_path: Path) -> None:
    rows = [
        {"timestamp": 0, "input_length": 1000, "output_length": 10, "hash_ids": [0, 1]},
        {"timestamp": 1000, "input_length": 900, "output_length": 10, "hash_ids": [0, 7]},
        {"timestamp": 3000, "input_length": 1500, "output_length": 10, "hash_ids": [0, 1, 2]},
        {"timestamp": 4500, "input_length": 1400, "output_length": 0, "hash_ids": [0, 7, 8]},
    ]
    p = _write(tmp_path, "t.jsonl", [json.dumps(r) for r in rows])
    sessions = mooncake_sessions(p)
    assert [[t.hash_ids for t in s.root.turns] for s in sessions] == [
        [(0, 1), (0, 1, 2)],
        [(0, 7), (0, 7, 8)],
    ]
    # think time = start-to-start gap within the session; output 0 becomes max_tokens 1
    assert [t.think_s for t in sessions[0].root.turns] == [0.0, 3.0]
    assert [t.think_s for t in sessions[1].root.turns] == [0.0, 3.5]
    assert sessions[1].root.turns[1].output_tokens == 1
    assert sessions[0].block_size_tokens == 512
    assert sessions[0].source.endswith("t.jsonl:1")


def test_mooncake_requests_mode_keeps_every_line_alone() -> None:
    sessions = mooncake_sessions(DATA / "mooncake_conversation_head300.jsonl", mode="requests")
    assert len(sessions) == 300
    assert all(len(s.root.turns) == 1 for s in sessions)


def test_mooncake_shipped_slice_groups_into_multi_turn_sessions() -> None:
    reqs = read_mooncake_requests(DATA / "mooncake_conversation_head300.jsonl")
    groups = group_by_prefix(reqs, 2)
    assert sum(len(g) for g in groups) == 300
    assert any(len(g) > 1 for g in groups)
    for g in groups:  # every continuation shares >= 2 leading blocks with an earlier member
        for j in g[1:]:
            h = reqs[j].hash_ids
            assert any(reqs[i].hash_ids[:2] == h[:2] for i in g if i < j)


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("{not json", "not valid JSON"),
        ('{"timestamp": 0, "input_length": 5, "output_length": 1}', "'hash_ids'"),
        ('{"timestamp": -1, "input_length": 5, "output_length": 1, "hash_ids": []}', "timestamp"),
        (
            '{"timestamp": 0, "input_length": "5", "output_length": 1, "hash_ids": []}',
            "input_length",
        ),
        ("[1, 2]", "JSON object"),
    ],
)
def test_mooncake_bad_line_names_file_and_line(tmp_path: Path, line: str, needle: str) -> None:
    good = '{"timestamp": 0, "input_length": 5, "output_length": 1, "hash_ids": [1]}'
    p = _write(tmp_path, "bad.jsonl", [good, line])
    with pytest.raises(DataError, match=needle) as exc:
        mooncake_sessions(p)
    assert f"{p}:2" in str(exc.value)


def test_weka_graph_read_by_hand() -> None:
    [s] = weka_sessions(DATA / "weka_small.json")
    assert s.block_size_tokens == 64 and s.namespace == "weka:trace_t1"
    ids = [a.agent_id for a in s.agents]
    assert ids == ["root", "root/agent_001", "root/agent_002", "root/agent_003", "root/agent_004"]
    root = s.root
    assert [t.input_tokens for t in root.turns] == [256, 400, 520, 600]
    # turn 1 has no think_time: end-to-start gap 5.0 - (0.0 + api_time 2.0)
    assert [t.think_s for t in root.turns] == [0.0, 3.0, 2.0, 1.0]
    a1, a2, a3, a4 = s.agents[1:]
    assert (a1.spawn_after, a1.join_before) == (1, 2)
    assert (a2.spawn_after, a2.join_before) == (1, 2)
    assert a2.turns[0].t_s == 7.25  # relative inner time shifted by the marker's t
    assert a2.turns[0].think_s == 0.25
    assert (a3.spawn_after, a3.join_before) == (2, None)  # async_launched: background
    assert (a4.spawn_after, a4.join_before) == (3, None)  # no parent turn follows: background
    assert [t.think_s for t in a1.turns] == [0.5, 1.0]


def _trace(requests: list[object]) -> dict[str, object]:
    return {"id": "x", "block_size": 64, "hash_id_scope": "local", "requests": requests}


@pytest.mark.parametrize(
    ("obj", "needle"),
    [
        ({"id": "x", "requests": []}, "missing 'block_size'"),
        (_trace([{"t": 0, "type": "q", "in": 1, "out": 1}]), "unknown request type 'q'"),
        (_trace([{"t": 0, "type": "n", "in": -3, "out": 1}]), "'in' must be a number"),
        (_trace([]), "no 'n'/'s' requests"),
        (
            {**_trace([{"t": 0, "type": "n", "in": 1, "out": 1}]), "hash_id_scope": "x"},
            "hash_id_scope",
        ),
        (
            _trace(
                [
                    {"t": 0, "type": "n", "in": 1, "out": 1},
                    {"t": 1, "type": "subagent", "agent_id": "a", "requests": []},
                ]
            ),
            "no 'requests'",
        ),
    ],
)
def test_weka_bad_input_is_refused(tmp_path: Path, obj: object, needle: str) -> None:
    p = tmp_path / "trace.json"
    p.write_text(json.dumps(obj))
    with pytest.raises(DataError, match=needle) as exc:
        weka_sessions(p)
    assert str(p) in str(exc.value)


def test_weka_jsonl_and_directory(tmp_path: Path) -> None:
    one = json.dumps(_trace([{"t": 0, "type": "n", "in": 5, "out": 2, "hash_ids": [1]}]))
    (tmp_path / "a.jsonl").write_text(one + "\n" + one.replace('"x"', '"y"') + "\n")
    (tmp_path / "b.json").write_text((DATA / "weka_small.json").read_text())
    (tmp_path / "notes.txt").write_text("ignored: not a trace file")
    sessions = weka_sessions(tmp_path)
    assert [s.session_id for s in sessions] == ["x", "y", "trace_t1"]
    (tmp_path / "c.json").write_text("{broken")
    with pytest.raises(DataError, match=r"c\.json"):
        weka_sessions(tmp_path)


def test_missing_trace_file_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="does not exist"):
        weka_sessions(tmp_path / "nope.json")
    with pytest.raises(DataError, match="does not exist"):
        mooncake_sessions(tmp_path / "nope.jsonl")
