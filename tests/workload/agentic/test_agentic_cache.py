"""Theoretical prefix-cache hits and context scaling, against hand-computed values."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from scoville.workload.agentic.cache import (
    PrefixTracker,
    fit_factor,
    min_block_tokens,
    scale_session,
    theoretical_hits,
)
from scoville.workload.agentic.session import Agent, Session, Turn
from scoville.workload.agentic.weka import weka_sessions

DATA = Path(__file__).parent / "data"


def test_weka_small_hits_by_hand() -> None:
    # In time order: root0 [1-4] 0 hits; root1 [1-7] 4; sa1.0 [100,101] 0; sa2 [200] 0;
    # sa1.1 [100-103] 2; root2 [1-9] 7; sa3 [300,301] 0; root3 [1-10] 9; sa4 [400,401] 0.
    tally = theoretical_hits(weka_sessions(DATA / "weka_small.json"))
    assert (tally.requests, tally.blocks, tally.hit_blocks) == (9, 41, 22)
    assert tally.input_tokens == 2328
    assert tally.hit_tokens == 256 + 128 + 448 + 576
    assert abs(tally.block_hit_rate - 22 / 41) < 1e-12


def test_prefix_semantics_stop_at_first_miss() -> None:
    tr = PrefixTracker()
    assert tr.observe(["a", "b", "c"], 150, 64) == 0
    assert tr.observe(["a", "x", "c"], 150, 64) == 64  # "c" is cached but follows a miss
    assert tr.observe(["a", "b", "c", "d"], 200, 64) == 192
    assert tr.observe(["a", "b"], 100, 64) == 100  # capped at the input length


def test_namespaces_never_share() -> None:
    a = Session("a", (Agent("root", (Turn(64, 1, (1,)),)),), 64, "ns-a")
    b = Session("b", (Agent("root", (Turn(64, 1, (1,), t_s=1.0),)),), 64, "ns-b")
    c = Session("c", (Agent("root", (Turn(64, 1, (1,), t_s=2.0),)),), 64, "ns-a")
    assert theoretical_hits([a, b, c]).hit_blocks == 1


@given(st.lists(st.lists(st.integers(0, 20), min_size=1, max_size=12), min_size=1, max_size=30))
def test_hit_rate_is_a_fraction_and_replay_is_all_hits(lists: list[list[int]]) -> None:
    tr = PrefixTracker()
    for h in lists:
        tr.observe(h, len(h) * 8, 8)
    first = tr.tally()
    assert 0 <= first.hit_blocks <= first.blocks
    for h in lists:  # a second pass over the same requests hits every block
        assert tr.observe(h, len(h) * 8, 8) == len(h) * 8


def test_scale_session_keeps_structure() -> None:
    s = Session(
        "s", (Agent("root", (Turn(1000, 200, (1, 2)), Turn(1100, 10, (1, 2, 3)))),), 512, "ns"
    )
    scaled, applied = scale_session(s, 1 / 64)
    assert scaled.block_size_tokens == 8 and applied == 8 / 512
    assert [(t.input_tokens, t.output_tokens, t.hash_ids) for t in scaled.root.turns] == [
        (16, 3, (1, 2)),  # 1000/64 = 15.6 -> 16; 200/64 = 3.1 -> 3
        (17, 1, (1, 2, 3)),  # 1100/64 = 17.2 -> 17; 10/64 -> at least 1
    ]
    blocked, applied2 = scale_session(s, 1 / 1000, min_block=4)
    assert blocked.block_size_tokens == 4 and applied2 == 4 / 512
    assert scale_session(s, 1.0) == (s, 1.0)


def test_fit_factor_and_min_block() -> None:
    s = Session("s", (Agent("root", (Turn(9000, 1000, (1,)),)),), 64, "ns")
    assert fit_factor([s], 2000, headroom=0.9) == 0.18
    assert fit_factor([s], 100_000) == 1.0
    assert min_block_tokens(256, 256) == 1
    assert min_block_tokens(257, 256) == 2
    assert min_block_tokens(70_000, 256) == 3


def test_shipped_mooncake_traces_golden_hit_rates() -> None:
    """Golden values from an independent one-off script over the published files (block hits
    in file order, unlimited cache)."""
    from scoville.workload.agentic.build import builtin_path
    from scoville.workload.agentic.mooncake import mooncake_sessions

    conv = mooncake_sessions(builtin_path("mooncake-conversation"))
    assert len(conv) == 7373 and max(len(s.root.turns) for s in conv) == 43
    tally = theoretical_hits(conv)
    assert (tally.requests, tally.hit_blocks / tally.blocks) == (12031, 0.3664124783362218)
    syn = theoretical_hits(mooncake_sessions(builtin_path("mooncake-synthetic"), "requests"))
    assert abs(syn.block_hit_rate - 0.6396038629109676) < 1e-12


def test_build_drops_sessions_over_the_request_cap_and_says_so() -> None:
    import pytest

    from scoville.errors import DataError
    from scoville.spec.agentic import AgenticSpec
    from scoville.workload.agentic.build import build_workload

    # weka_small: root 256..600 in, largest request 600 + 5 tokens
    path = str(DATA / "weka_small.json")
    spec = AgenticSpec.model_validate(
        {"source": {"kind": "weka", "path": path}, "context": {"max_request_tokens": 604}}
    )
    with pytest.raises(DataError, match="Every session"):
        build_workload(spec)
    spec = AgenticSpec.model_validate(
        {"source": {"kind": "weka", "path": path}, "context": {"max_request_tokens": 605}}
    )
    wl = build_workload(spec)
    assert len(wl.sessions) == 1 and "0 of 1 sessions dropped" in " ".join(wl.notes)
