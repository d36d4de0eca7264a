"""SSE framing cost against frame size: one `data:` frame of 1, 10 and 50 MB fed in 64 KiB
reads (as the socket delivers it), LF and CRLF endings. Prints CPU seconds and ns per byte
(CPU time, so other load on the machine does not blur it); the cost per byte must stay flat
as the frame grows (a parser that re-joins and re-splits its buffer on every read grows
linearly per byte instead: quadratic in the frame).

    python benchmarks/sse_parser.py [--sizes-mb 1,10,50] [--read-kib 64] [--old]

`--old` also times the former framing (buffer re-joined and re-split per read), for scale;
it is skipped above 10 MB, where it takes tens of seconds.
"""

from __future__ import annotations

import argparse
import time

from scoville.client.sse import SSEParser


def _old_split(buffer: bytes, t_ns: int, frames: list[tuple[int, bytes]]) -> bytes:
    *events, tail = buffer.split(b"\n\n")
    for event in events:
        for line in event.split(b"\n"):
            if line.startswith(b"data:"):
                frames.append((t_ns, line[5:].strip()))
    return tail


def _reads(size_b: int, eol: bytes, read_b: int) -> list[bytes]:
    data = b'data: {"choices":[{"text":"' + b"x" * size_b + b'"}]}' + eol + eol
    return [data[i : i + read_b] for i in range(0, len(data), read_b)]


def time_new(reads: list[bytes]) -> float:
    parser = SSEParser()
    t0 = time.process_time()
    for i, block in enumerate(reads):
        parser.feed(block, i)
    elapsed = time.process_time() - t0
    assert len(parser.frames) == 1
    return elapsed


def time_old(reads: list[bytes]) -> float:
    frames: list[tuple[int, bytes]] = []
    tail = b""
    t0 = time.process_time()
    for i, block in enumerate(reads):
        tail = _old_split(tail + block, i, frames)
    elapsed = time.process_time() - t0
    assert len(frames) == 1
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes-mb", default="1,10,50")
    ap.add_argument("--read-kib", type=int, default=64)
    ap.add_argument("--old", action="store_true")
    a = ap.parse_args()
    print(f"{'frame':>8} {'endings':>7} {'seconds':>9} {'ns/byte':>8} {'old s':>8}")
    for mb in (float(x) for x in a.sizes_mb.split(",")):
        size_b = int(mb * 1_000_000)
        for name, eol in (("LF", b"\n"), ("CRLF", b"\r\n")):
            reads = _reads(size_b, eol, a.read_kib * 1024)
            s = min(time_new(reads) for _ in range(3))
            # the former framing knew LF only: a CRLF stream gave it no frame at all
            use_old = a.old and mb <= 10 and eol == b"\n"
            old = f"{time_old(reads):8.2f}" if use_old else "       -"
            print(f"{mb:>6g}MB {name:>7} {s:9.4f} {s / size_b * 1e9:8.3f} {old}")


if __name__ == "__main__":
    main()
