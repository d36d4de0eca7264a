"""The client's timestamps against the wire: read a loopback packet capture (pcap, as written
by `tcpdump -i lo --time-stamp-precision=nano -w FILE`) and time each HTTP exchange on it.

Wire TTFT of a request = first response packet completing an SSE frame with output text -
last packet of the request (client to server); wire ITL = gaps between the packets that
complete consecutive text frames. Requests are matched to records by the body field `user`
(the request id), or else by an `X-Request-ID` header (other clients' ids). Only what a
loopback capture of plain HTTP/1.1 needs: Ethernet or Linux cooked (SLL) framing, IPv4, TCP,
payload order by capture order.
"""

from __future__ import annotations

import itertools
import math
import os
import re
import shutil
import signal
import statistics
import struct
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from scoville.records.model import RequestRecord

_MAGIC_NS = 0xA1B23C4D
_MAGIC_US = 0xA1B2C3D4
_LINK_HEADER = {1: 14, 113: 16, 0: 4}  # Ethernet, Linux cooked (SLL), BSD loopback
_USER = re.compile(rb'"user"\s*:\s*"([^"]+)"')
_REQUEST_ID = re.compile(rb"(?im)^x-request-id:\s*(\S+)\s*$")
_TEXT_FRAME = re.compile(rb"data: ?(\{.*?)(?:\n\n|\r\n\r\n)", re.S)
_HAS_TEXT = re.compile(rb'"(?:text|content)"\s*:\s*"[^"]')


@dataclass(frozen=True, slots=True)
class Packet:
    t_ns: int  # capture time (the kernel's clock; only differences are used)
    src_port: int
    dst_port: int
    payload: bytes


def read_pcap(path: Path) -> list[Packet]:
    """The TCP packets with a payload in a classic pcap file (nanosecond or microsecond)."""
    data = path.read_bytes()
    if len(data) < 24:
        raise ValueError(f"{path}: not a pcap file (only {len(data)} bytes)")
    magic_le = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic_le in (_MAGIC_NS, _MAGIC_US) else ">"
    magic = struct.unpack(endian + "I", data[:4])[0]
    if magic not in (_MAGIC_NS, _MAGIC_US):
        raise ValueError(f"{path}: not a classic pcap file (magic {magic_le:#x})")
    frac_ns = 1 if magic == _MAGIC_NS else 1000
    link = struct.unpack(endian + "I", data[20:24])[0]
    if link not in _LINK_HEADER:
        raise ValueError(f"{path}: link type {link} is not Ethernet, SLL or loopback")
    out, pos, rec = [], 24, struct.Struct(endian + "IIII")
    while pos + 16 <= len(data):
        sec, frac, incl, _orig = rec.unpack_from(data, pos)
        frame = data[pos + 16 : pos + 16 + incl]
        pos += 16 + incl
        pkt = _tcp(frame[_LINK_HEADER[link] :], sec * 1_000_000_000 + frac * frac_ns)
        if pkt is not None:
            out.append(pkt)
    return out


def _tcp(ip: bytes, t_ns: int) -> Packet | None:
    if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 6:  # IPv4 carrying TCP only
        return None
    ihl = (ip[0] & 0x0F) * 4
    total = struct.unpack("!H", ip[2:4])[0]
    tcp = ip[ihl:total]
    if len(tcp) < 20:
        return None
    src, dst = struct.unpack("!HH", tcp[:4])
    payload = tcp[(tcp[12] >> 4) * 4 :]
    return Packet(t_ns, src, dst, payload) if payload else None


@dataclass(slots=True)
class WireExchange:
    """One request and its streamed answer on one connection."""

    request: bytearray = field(default_factory=bytearray)
    first_request_ns: int = 0
    last_request_ns: int = 0
    response: bytearray = field(default_factory=bytearray)
    marks: list[tuple[int, int]] = field(default_factory=list)  # (end offset, t_ns) per packet

    @property
    def user(self) -> str | None:
        m = _USER.search(bytes(self.request)) or _REQUEST_ID.search(bytes(self.request))
        return m.group(1).decode() if m else None

    def text_frame_ns(self) -> list[int]:
        """Capture time of the packet completing each SSE frame that carries output text."""
        times, body, k = [], bytes(self.response), 0
        for m in _TEXT_FRAME.finditer(body):
            if not _HAS_TEXT.search(m.group(1)):
                continue
            while self.marks[k][0] < m.end():
                k += 1
            times.append(self.marks[k][1])
        return times


def exchanges(packets: list[Packet], server_port: int) -> list[WireExchange]:
    """Split each connection to `server_port` into request/response exchanges: a client
    packet after response bytes starts the next exchange (HTTP/1.1 keep-alive, no
    pipelining)."""
    open_by_port: dict[int, WireExchange] = {}
    done: list[WireExchange] = []
    for p in packets:
        if p.dst_port == server_port:
            ex = open_by_port.get(p.src_port)
            if ex is None or ex.response:
                ex = open_by_port[p.src_port] = WireExchange(first_request_ns=p.t_ns)
                done.append(ex)
            ex.request += p.payload
            ex.last_request_ns = p.t_ns
        elif p.src_port == server_port and (ex := open_by_port.get(p.dst_port)) is not None:
            ex.response += p.payload
            ex.marks.append((len(ex.response), p.t_ns))
    return done


@dataclass(frozen=True, slots=True)
class WireTimes:
    """Per request id: wire TTFT (ns, from the last request byte) and text-frame gaps (ns)."""

    ttft_ns: dict[str, int]
    itl_ns: dict[str, list[int]]
    ttft_from_first_byte_ns: dict[str, int]


def wire_times(pcap: Path, server_port: int) -> WireTimes:
    ttft, itl, first = {}, {}, {}
    for ex in exchanges(read_pcap(pcap), server_port):
        user, frames = ex.user, ex.text_frame_ns()
        if user is None or not frames:
            continue
        ttft[user] = frames[0] - ex.last_request_ns
        first[user] = frames[0] - ex.first_request_ns
        itl[user] = [b - a for a, b in itertools.pairwise(frames)]
    return WireTimes(ttft, itl, first)


class LoopbackCapture:
    """`tcpdump` on the loopback interface, nanosecond stamps, for one TCP port:
    `start()` returns None once it listens, or the reason it cannot run; `stop()` returns
    the number of packets the kernel dropped (a capture with drops is not ground truth)."""

    def __init__(self, path: Path, port: int, buffer_kib: int = 65536) -> None:
        self.path, self.port, self.buffer_kib = path, port, buffer_kib
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self, wait_s: float = 10.0) -> str | None:
        exe = shutil.which("tcpdump")
        if exe is None:
            return "tcpdump is not installed (apt-get install -y tcpdump)"
        cmd = [exe, "-i", "lo", "--time-stamp-precision=nano", "-B", str(self.buffer_kib)]
        cmd += ["-U", "-n", "-w", str(self.path), f"tcp port {self.port}"]
        self._proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        assert self._proc.stderr is not None
        os.set_blocking(self._proc.stderr.fileno(), False)
        seen, deadline = b"", time.monotonic() + wait_s
        while time.monotonic() < deadline:
            seen += self._proc.stderr.read() or b""
            if b"listening on" in seen:
                time.sleep(0.2)  # the filter is attached just after the message
                return None
            if self._proc.poll() is not None:
                return f"tcpdump cannot capture on lo: {seen.decode(errors='replace').strip()}"
            time.sleep(0.02)
        self._proc.kill()
        return f"tcpdump did not start listening within {wait_s:g} s"

    def stop(self) -> int:
        """Stop capturing (flushes the file); the kernel's drop count."""
        if self._proc is None:
            return 0
        time.sleep(0.2)  # let the last packets reach the capture buffer
        self._proc.send_signal(signal.SIGINT)
        _out, err = self._proc.communicate(timeout=30)
        m = re.search(rb"(\d+) packets? dropped by kernel", err)
        return int(m.group(1)) if m else 0


def compare(records: Sequence[RequestRecord], wire: WireTimes) -> dict[str, float]:
    """Medians (ms) of the client's TTFT and ITL and of the wire's, over the successful
    records the capture saw; `ttft_diff_ms` is the median per-request difference and
    `ttft_diff_p90_ms` its 90th percentile (numpy's linear definition), which shows a lag that
    hits only part of a wave (a pause while the first frames arrive) and the medians hide."""
    ok = [r for r in records if r.ok and r.request_id in wire.ttft_ns]
    if not ok:
        raise ValueError("no successful record matches a request on the wire")
    client_ttft = [(r.chunk_ns[0] - r.start_ns) / 1e6 for r in ok]
    wire_ttft = [wire.ttft_ns[r.request_id] / 1e6 for r in ok]
    client_itl = [(b - a) / 1e6 for r in ok for a, b in itertools.pairwise(r.chunk_ns)]
    wire_itl = [g / 1e6 for r in ok for g in wire.itl_ns[r.request_id]]
    diffs = [c - w for c, w in zip(client_ttft, wire_ttft, strict=True)]
    from_send = [(r.chunk_ns[0] - r.send_ns) / 1e6 for r in ok if r.send_ns is not None]
    return {
        "matched": float(len(ok)),
        "client_ttft_ms": statistics.median(client_ttft),
        "wire_ttft_ms": statistics.median(wire_ttft),
        "ttft_diff_ms": statistics.median(diffs),
        "ttft_diff_p90_ms": float(np.quantile(diffs, 0.9)),
        "client_ttft_from_send_ms": statistics.median(from_send) if from_send else math.nan,
        "wire_ttft_first_byte_ms": statistics.median(
            wire.ttft_from_first_byte_ns[r.request_id] / 1e6 for r in ok
        ),
        "client_itl_ms": statistics.median(client_itl),
        "wire_itl_ms": statistics.median(wire_itl),
    }
