"""The run-length prefix cache behaves exactly as the block-level one (same hits, same cached
tokens, same evictions) on any sequence of lookups, inserts and shrinks."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from scoville.twin.prefix import PrefixCache
from scoville.twin.prefix_runs import RunPrefixCache
from scoville.workload.agentic.runs import BlockRuns, runs_of

# a prompt: a chain (two namespaces) and block ids drawn from a small range, so prompts
# overlap, repeat and interleave
prompts = st.tuples(
    st.sampled_from(["a", "b"]),
    st.lists(st.integers(0, 40), min_size=1, max_size=25, unique=True),
)
ops = st.lists(
    st.tuples(st.sampled_from(["match", "insert", "shrink"]), prompts, st.integers(0, 600)),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(ops)
def test_run_cache_equals_block_cache(steps: list[tuple[str, tuple[str, list[int]], int]]) -> None:
    blocks, runs = PrefixCache(), RunPrefixCache()
    for op, (chain, ids), n in steps:
        keys = BlockRuns(chain, runs_of(ids))
        if op == "match":
            assert runs.match(keys, 16, n) == blocks.match(keys, 16, n)
        elif op == "insert":
            runs.insert(keys, 16)
            blocks.insert(keys, 16)
        else:
            runs.shrink_to(n)
            blocks.shrink_to(n)
        assert runs.cached_tokens == blocks.cached_tokens
        assert len(runs) == len(blocks)
    assert (runs.hit_tokens, runs.query_tokens) == (blocks.hit_tokens, blocks.query_tokens)


def test_hand_worked_eviction_takes_the_oldest_block_of_the_oldest_run() -> None:
    c = RunPrefixCache()
    c.insert(BlockRuns("s", ((0, 4),)), 10)  # blocks 0..3, 40 tokens
    c.insert(BlockRuns("s", ((10, 12),)), 10)  # blocks 10, 11: newest
    assert c.match(BlockRuns("s", ((0, 2), (2, 3))), 10, 100) == 30  # touches 0, 1, 2
    # LRU order now: 3, 10, 11, 0, 1, 2; shrinking to 35 tokens drops 3, 10 and 11
    c.shrink_to(35)
    assert (c.cached_tokens, len(c)) == (30, 3)
    assert c.match(BlockRuns("s", ((0, 4),)), 10, 100) == 30  # 0..2 cached, 3 gone
    assert c.match(BlockRuns("s", ((10, 12),)), 10, 100) == 0
    assert c.match(BlockRuns("s", ((0, 4),)), 10, 25) == 24  # at most prompt - 1


def test_plain_keys_and_runs_agree() -> None:
    assert runs_of((3, 4, 5, 9, 10, 2)) == ((3, 6), (9, 11), (2, 3))
    keys = BlockRuns("x", ((3, 6), (9, 11)))
    assert len(keys) == 5 and list(keys)[1] == keys[1] == hash(("x", 4))
    assert keys[-1] == hash(("x", 10))
