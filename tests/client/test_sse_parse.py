"""SSE framing: however the bytes are split into reads, the same frames come out."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from scoville.client.openai_sse import parse_frames, split_sse
from scoville.client.seam import Exchange

texts = st.lists(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8),
    min_size=1,
    max_size=12,
)


def _stream(parts: list[str]) -> bytes:
    frames = [
        json.dumps({"choices": [{"index": 0, "text": t, "finish_reason": None}]}) for t in parts
    ]
    frames.append(
        json.dumps(
            {
                "choices": [{"index": 0, "text": "", "finish_reason": "length"}],
                "usage": {"prompt_tokens": 5, "completion_tokens": len(parts)},
            }
        )
    )
    return b"".join(b"data: " + f.encode() + b"\n\n" for f in frames) + b"data: [DONE]\n\n"


@given(texts, st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=60))
def test_any_split_gives_the_same_frames(parts: list[str], cuts: list[int]) -> None:
    data = _stream(parts)
    frames: list[tuple[int, bytes]] = []
    tail, pos, t = b"", 0, 0
    for n in cuts * (len(data) // max(1, sum(cuts)) + 1):
        if pos >= len(data):
            break
        tail = split_sse(tail + data[pos : pos + n], t, frames)
        pos += n
        t += 1
    tail = split_sse(tail + data[pos:], t, frames)
    ex = Exchange(start_ns=0)
    assert parse_frames(frames, ex) is True
    assert ex.chunk_text == parts
    assert ex.completion_tokens == len(parts) and ex.prompt_tokens == 5
    assert ex.finish_reason == "length" and ex.error is None
    assert ex.chunk_ns == sorted(ex.chunk_ns)


def test_chat_deltas_and_reasoning_count_as_output() -> None:
    frames = [
        (1, json.dumps({"choices": [{"delta": {"role": "assistant"}}]}).encode()),
        (2, json.dumps({"choices": [{"delta": {"reasoning_content": "hm"}}]}).encode()),
        (3, json.dumps({"choices": [{"delta": {"content": "hi"}}]}).encode()),
        (4, b"[DONE]"),
    ]
    ex = Exchange(start_ns=0)
    assert parse_frames(frames, ex)
    assert ex.chunk_ns == [2, 3] and ex.chunk_text == ["hm", "hi"]


def test_bad_json_is_malformed() -> None:
    ex = Exchange(start_ns=0)
    parse_frames([(1, b"{nope")], ex)
    assert ex.error is not None and ex.error.value == "malformed"
