"""The send pacer: a burst of request starts is spread over turns of the event loop, so the
loop polls its sockets (and stamps arriving frames) between every few sends."""

from __future__ import annotations

import asyncio

from scoville.client.wire import SendPacer


async def _turns_of_20_starts(per_turn: int) -> list[int]:
    """The loop turn in which each of 20 requests, all ready at once, got to start."""
    loop = asyncio.get_running_loop()
    turn = 0
    stop = False

    def count() -> None:
        nonlocal turn
        turn += 1
        if not stop:
            loop.call_soon(count)

    loop.call_soon(count)
    pacer, started = SendPacer(per_turn), []

    async def start() -> None:
        await pacer.wait()
        started.append(turn)

    await asyncio.gather(*(start() for _ in range(20)))
    stop = True
    return started


def test_a_burst_of_20_goes_out_8_a_turn() -> None:
    turns = asyncio.run(_turns_of_20_starts(8))
    first = turns[0]
    # 8 in the first turn, 8 in a later one, the last 4 later still: never more than 8 a turn
    assert [t - first for t in turns[:8]] == [0] * 8
    assert len(set(turns[8:16])) == 1 and turns[8] > first
    assert len(set(turns[16:])) == 1 and turns[16] > turns[8]
    assert max(turns.count(t) for t in set(turns)) == 8


def test_a_lone_request_never_waits() -> None:
    async def one() -> int:
        pacer = SendPacer(8)
        before = asyncio.get_running_loop().time()
        for _ in range(8):  # fewer than a turn's allowance: no yield at all
            await pacer.wait()
        return int(asyncio.get_running_loop().time() - before)

    assert asyncio.run(one()) == 0
