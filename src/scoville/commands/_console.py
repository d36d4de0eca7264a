"""The one console factory every command prints with (numbers: `scoville.figures`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


def console(*, stderr: bool = False) -> Console:
    """A rich console for a command's output (or for errors, with `stderr`)."""
    from rich.console import Console

    return Console(stderr=stderr)
