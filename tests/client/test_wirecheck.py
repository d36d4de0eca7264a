"""The pcap reader and the exchange timing, on a capture written by hand with known times."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from scoville.client.wirecheck import exchanges, read_pcap, wire_times

SERVER, CLIENT = 8000, 40000
MS = 1_000_000


def _packet(t_ns: int, src: int, dst: int, payload: bytes) -> bytes:
    tcp = struct.pack("!HHIIBBHHH", src, dst, 0, 0, 5 << 4, 0x18, 65535, 0, 0) + payload
    ip = struct.pack(
        "!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0, 64, 6, 0, b"\x7f\0\0\1", b"\x7f\0\0\1"
    )
    frame = b"\0" * 12 + b"\x08\x00" + ip + tcp
    sec, ns = divmod(t_ns, 1_000_000_000)
    return struct.pack("<IIII", sec, ns, len(frame), len(frame)) + frame


def _frame(text: str) -> bytes:
    body = b'data: {"choices":[{"text":"' + text.encode() + b'"}]}\n\n'
    return f"{len(body):x}\r\n".encode() + body + b"\r\n"  # one HTTP chunk per frame


def _capture(path: Path) -> None:
    header = struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 262144, 1)  # ns, Ethernet
    t0 = 1_000_000_000
    resp_head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    split = _frame(" tok")
    packets = [
        _packet(t0, CLIENT, SERVER, b'POST /v1/completions HTTP/1.1\r\n\r\n{"user": "a"}'),
        _packet(t0 + 40 * MS, SERVER, CLIENT, resp_head + _frame(" tok")),
        _packet(t0 + 48 * MS, SERVER, CLIENT, _frame(" tok")),
        _packet(t0 + 56 * MS, SERVER, CLIENT, _frame("") + b"e\r\ndata: [DONE]\n\n\r\n"),
        _packet(2 * t0, CLIENT, SERVER, b"POST /v1/completions HTTP/1.1\r\n\r\n"),
        _packet(2 * t0 + 1 * MS, CLIENT, SERVER, b'{"user": "b"}'),  # body in a 2nd segment
        _packet(2 * t0 + 42 * MS, SERVER, CLIENT, resp_head + _frame(" tok")),
        _packet(2 * t0 + 49 * MS, SERVER, CLIENT, split[:20]),
        _packet(2 * t0 + 50 * MS, SERVER, CLIENT, split[20:]),  # the frame completes here
    ]
    path.write_bytes(header + b"".join(packets))


def test_exchanges_on_one_keep_alive_connection(tmp_path: Path) -> None:
    pcap = tmp_path / "hand.pcap"
    _capture(pcap)
    assert len(read_pcap(pcap)) == 9
    assert [ex.user for ex in exchanges(read_pcap(pcap), SERVER)] == ["a", "b"]
    w = wire_times(pcap, SERVER)
    assert w.ttft_ns == {"a": 40 * MS, "b": 41 * MS}  # from the last request packet
    assert w.ttft_from_first_byte_ns == {"a": 40 * MS, "b": 42 * MS}
    assert w.itl_ns == {"a": [8 * MS], "b": [8 * MS]}  # the usage frame carries no text


def test_a_file_that_is_not_a_pcap_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "x.pcap"
    bad.write_bytes(b"\x00" * 40)
    with pytest.raises(ValueError, match="not a classic pcap"):
        read_pcap(bad)
