"""One quality item: a prompt, how to judge the answer, and how long it may be.

Kinds: `exact` (first line equals the answer), `number` (GSM8K-style final number), `choice`
(a multiple-choice letter), `json` (valid JSON matching a schema and expected values), `tool`
(a JSON function call: right name and arguments), `free` (no answer: token agreement and
logprob divergence only).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Kind = Literal["exact", "number", "choice", "json", "tool", "free"]
KINDS: tuple[Kind, ...] = ("exact", "number", "choice", "json", "tool", "free")


@dataclass(frozen=True, slots=True)
class Item:
    """`answer` for exact/number/choice; `schema` and `expect` (field -> value) for json;
    `expect` = {"name": ..., "arguments": {arg: value or [acceptable values]}} for tool.
    `stop`: stop strings sent with the request (the answer ends there)."""

    item_id: str
    task: str
    kind: Kind
    prompt: str
    answer: str | None = None
    schema: dict[str, Any] | None = None
    expect: dict[str, Any] | None = None
    max_tokens: int = 32
    stop: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def judged(self) -> bool:
        """True when the item has a right answer (every kind but `free`)."""
        return self.kind != "free"
