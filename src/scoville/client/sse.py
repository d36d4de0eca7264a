"""Incremental Server-Sent Events framing: bytes in, `data:` payloads out, in linear time.

The transport feeds each block read from the socket (with its arrival stamp); complete events
come out as (t_ns, payload) with the stamp of the block that completed them. Lines may end in
CR, LF or CRLF (the SSE specification allows all three, even mixed, and a CRLF may be split
across two reads). Each byte is scanned a bounded number of times, so a 50 MB frame costs fifty
times a 1 MB frame, not 2,500 times.
"""

from __future__ import annotations

_FIELDS = (b"event", b"id", b"retry")  # fields an OpenAI stream may carry besides `data`


class SSEParser:
    """Feed blocks with `feed(block, t_ns)`; completed payloads are appended to `frames`.

    `stray_lines` counts non-empty lines that are neither a comment (`:`) nor a known field:
    an OpenAI stream with such lines and no `data:` is malformed, not cut. `pending_bytes` is
    the size of the unfinished event (a stream that ends with bytes pending was cut mid-frame).
    """

    __slots__ = ("_data", "_line", "_skip_lf", "frames", "stray_lines", "stray_sample")

    def __init__(self) -> None:
        self.frames: list[tuple[int, bytes]] = []
        self.stray_lines = 0
        self.stray_sample = b""
        self._line = bytearray()  # the unfinished line (amortised O(1) appends)
        self._data: list[bytes] = []  # the `data:` lines of the unfinished event
        self._skip_lf = False  # the previous block ended in CR: a leading LF belongs to it

    @property
    def pending_bytes(self) -> int:
        return len(self._line) + sum(len(d) for d in self._data)

    def feed(self, block: bytes, t_ns: int) -> None:
        """Consume one block that arrived at `t_ns`."""
        if self._skip_lf and block[:1] == b"\n":
            block = block[1:]
        self._skip_lf = False
        if b"\r" in block:
            self._skip_lf = block.endswith(b"\r")
            block = block.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        if not self._line and not self._data and block.endswith(b"\n\n"):
            self._whole_events(block, t_ns)
            return
        lines = block.split(b"\n")
        if len(lines) == 1:
            self._line += block
            return
        self._line += lines[0]
        self._end_line(bytes(self._line), t_ns)
        for line in lines[1:-1]:
            self._end_line(line, t_ns)
        self._line = bytearray(lines[-1])

    def _whole_events(self, block: bytes, t_ns: int) -> None:
        """The common case, a read holding whole events only: one split, and a one-line
        `data:` event is taken without going line by line."""
        for event in block[:-2].split(b"\n\n"):
            if event.startswith(b"data:") and b"\n" not in event:
                self.frames.append((t_ns, event[5:].strip()))
                continue
            for line in event.split(b"\n"):
                self._end_line(line, t_ns)
            self._end_line(b"", t_ns)

    def _end_line(self, line: bytes, t_ns: int) -> None:
        if not line:  # a blank line ends the event
            if self._data:
                payload = self._data[0] if len(self._data) == 1 else b"\n".join(self._data)
                self.frames.append((t_ns, payload.strip()))
                self._data = []
            return
        if line.startswith(b"data:"):
            value = line[5:]
            self._data.append(value[1:] if value.startswith(b" ") else value)
        elif not line.startswith(b":") and line.split(b":", 1)[0].strip() not in _FIELDS:
            self.stray_lines += 1
            if not self.stray_sample:
                self.stray_sample = line[:80]


def split_frames(data: bytes, t_ns: int = 0) -> list[tuple[int, bytes]]:
    """All complete payloads of `data` fed as one block (tests and tools)."""
    parser = SSEParser()
    parser.feed(data, t_ns)
    return parser.frames
