"""SSE framing: however the bytes are split into reads, the same frames come out."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from scoville.client.openai_sse import parse_frames
from scoville.client.seam import Exchange
from scoville.client.sse import SSEParser

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
    parser = SSEParser()
    pos, t = 0, 0
    for n in cuts * (len(data) // max(1, sum(cuts)) + 1):
        if pos >= len(data):
            break
        parser.feed(data[pos : pos + n], t)
        pos += n
        t += 1
    parser.feed(data[pos:], t)
    ex = Exchange(start_ns=0)
    assert parse_frames(parser.frames, ex) is True
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


@given(
    texts,
    st.sampled_from([b"\n", b"\r\n", b"\r"]),
    st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=30),
)
def test_cr_lf_and_crlf_endings_give_the_same_frames(
    parts: list[str], eol: bytes, cuts: list[int]
) -> None:
    """Any legal line ending, split anywhere (a CRLF may straddle two reads)."""
    data = _stream(parts).replace(b"\n", eol)
    parser, pos = SSEParser(), 0
    for n in cuts * (len(data) // max(1, sum(cuts)) + 1):
        parser.feed(data[pos : pos + n], pos)
        pos += n
        if pos >= len(data):
            break
    parser.feed(data[pos:], pos)
    ex = Exchange(start_ns=0)
    assert parse_frames(parser.frames, ex) is True
    assert ex.chunk_text == parts and parser.stray_lines == 0


def test_multi_line_data_comments_and_fields() -> None:
    parser = SSEParser()
    parser.feed(b': keep-alive\r\nevent: x\r\nid: 3\r\ndata: {"a":\r\ndata:1}\r\n\r\n', 7)
    parser.feed(b"data: [DONE]\r", 8)
    parser.feed(b"\n\r\n", 9)  # the LF after a CR that ended the previous read is not a line
    assert parser.frames == [(7, b'{"a":\n1}'), (9, b"[DONE]")]
    assert parser.stray_lines == 0 and parser.pending_bytes == 0


def test_lines_without_data_are_counted_as_stray() -> None:
    parser = SSEParser()
    parser.feed(b'{"choices": []}\n\n{"choices": []}\n\n', 1)
    assert parser.frames == [] and parser.stray_lines == 2
    assert parser.stray_sample == b'{"choices": []}'


def test_a_huge_frame_in_small_reads_is_framed_once() -> None:
    """50 MB in 64 KiB reads: one frame; each read costs its own size (checked by the
    benchmark benchmarks/sse_parser.py; here the frame must simply come out whole)."""
    payload = b"x" * 5_000_000
    data = b"data: " + payload + b"\r\n\r\n"
    parser = SSEParser()
    for i in range(0, len(data), 65536):
        parser.feed(data[i : i + 65536], i)
    assert len(parser.frames) == 1 and parser.frames[0][1] == payload
