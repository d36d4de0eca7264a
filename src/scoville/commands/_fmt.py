"""The one console factory and number formatter every command prints with.

Numbers: `num` for a figure of any size (thousands separated from 100 up, else 3
significant digits), `fixed` for a column with a set number of decimals; "-" means absent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


def console(*, stderr: bool = False) -> Console:
    """A rich console for a command's output (or for errors, with `stderr`)."""
    from rich.console import Console

    return Console(stderr=stderr)


def num(v: float | None, unit: str = "") -> str:
    """A figure: '12,345' from 100 up, '0.0123' / '4.56' (3 significant digits) below."""
    if v is None:
        return "-"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return f"{v}{unit}"
    text = f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"
    return text + unit


def fixed(v: object, decimals: int = 1, scale: float = 1.0) -> str:
    """`v * scale` with `decimals` decimals and thousands separators; '-' when not a number."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return "-"
    return f"{float(v) * scale:,.{decimals}f}"
