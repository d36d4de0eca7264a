"""The template probe before a sweep reads the server's prompt count, whatever the output."""

from __future__ import annotations

import asyncio

import pytest

from scoville.errors import TargetError
from scoville.spec.load import load_spec
from scoville.sweep import template_overhead
from scoville.targets.registry import open_target


def _probe(url: str) -> tuple[int, str]:
    spec = load_spec(None, [f"target.url={url}"])
    target = open_target(spec)

    async def go() -> tuple[int, str]:
        try:
            return await template_overhead(target, spec)
        finally:
            await target.close()

    return asyncio.run(go())


def test_a_stream_the_models_first_token_ended_still_gives_the_prompt_count(
    ending_url: str,
) -> None:
    # the model ends its output at once (a chat template's end token, say): no output token,
    # a well-ended stream with usage; the probe needs the prompt count, not an output
    assert _probe(ending_url) == (0, "template overhead 0 tokens (measured)")


def test_a_stream_cut_before_its_end_still_fails_the_probe(cut_at_once_url: str) -> None:
    with pytest.raises(TargetError, match="failed a 1-token probe request"):
        _probe(cut_at_once_url)
