"""The unlimited prefix cache over runs reports exactly what `PrefixTracker` reports."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from scoville.workload.agentic.cache import PrefixTracker
from scoville.workload.agentic.runs import BlockRuns, RunSet, runs_of

requests = st.lists(
    st.tuples(
        st.sampled_from(["a", "b"]),
        st.lists(st.integers(0, 50), min_size=1, max_size=30, unique=True),
        st.integers(1, 2000),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(requests)
def test_run_set_equals_prefix_tracker(reqs: list[tuple[str, list[int], int]]) -> None:
    tracker, runs = PrefixTracker(), RunSet()
    for chain, ids, input_tokens in reqs:
        keys = BlockRuns(chain, runs_of(ids))
        assert runs.observe(keys, input_tokens, 64) == tracker.observe(keys, input_tokens, 64)


def test_hand_worked_run_set() -> None:
    s = RunSet()
    assert s.observe(BlockRuns("p", ((0, 10),)), 1000, 64) == 0
    # blocks 0..9 seen: a prompt of 0..9 then 11..12 hits 10 blocks; 10 was never seen
    assert s.observe(BlockRuns("p", ((0, 10), (11, 13))), 1000, 64) == 640
    assert s.observe(BlockRuns("p", ((0, 10), (10, 12))), 700, 64) == 640
    assert s.observe(BlockRuns("p", ((0, 13),)), 700, 64) == 700  # capped at the input
    assert s.observe(BlockRuns("q", ((0, 13),)), 700, 64) == 0  # another chain
