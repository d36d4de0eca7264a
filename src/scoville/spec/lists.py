"""The one comma-list parser: every command-line list (concurrency, rates, lanes, levels)
goes through `parse_list`, so every bad list gets the same kind of message."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import TypeVar

from scoville.errors import SpecError

T = TypeVar("T", int, float)


def parse_list(
    text: str,
    option: str,
    kind: Callable[[str], T] = int,
    *,
    minimum: float | None = None,
    rising: bool = False,
    example: str = "1,2,4",
) -> list[T]:
    """`text` as a comma list of `kind` values. Raises `SpecError` naming the option, the
    offending item and an example when an item does not parse, is not finite, is below
    `minimum`, or (with `rising`) when the list does not rise strictly."""
    items = [part.strip() for part in str(text).split(",") if part.strip()]
    noun = "integers" if kind is int else "numbers"
    if not items:
        raise SpecError(f"{option} is empty; give a comma list of {noun}, e.g. {example}.")
    values: list[T] = []
    for item in items:
        try:
            value = kind(item)
        except ValueError:
            raise SpecError(
                f"{option} {text!r}: {item!r} is not one of a comma list of {noun}; "
                f"give e.g. {option} {example}."
            ) from None
        if isinstance(value, float) and not math.isfinite(value):
            raise SpecError(f"{option} {text!r}: {item!r} is not a finite number.")
        if minimum is not None and value < minimum:
            raise SpecError(f"{option} {text!r}: {item!r} is below the minimum {minimum:g}.")
        values.append(value)
    if rising and any(b <= a for a, b in itertools.pairwise(values)):
        raise SpecError(
            f"{option} {text!r} must be a rising list (each item larger than the last), "
            f"e.g. {option} {example}."
        )
    return values
