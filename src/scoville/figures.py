"""How a figure is written as text, in one place: every command, table and report note formats
numbers with these (a leaf module like `scoville.errors`: any stage may import it).

`num`: thousands separated from 100 up, else `digits` significant digits; `fixed`: a set
number of decimals. Absent values (None, or not a number) read "-".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def num(v: object, unit: str = "", digits: int = 3) -> str:
    """A figure: '12,345' from 100 up, '0.0123' / '4.56' (`digits` significant) below."""
    if v is None:
        return "-"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return f"{v}{unit}"
    text = f"{v:,.0f}" if abs(v) >= 100 else f"{v:.{digits}g}"
    return text + unit


def fixed(v: object, decimals: int = 1, scale: float = 1.0) -> str:
    """`v * scale` with `decimals` decimals and thousands separators; '-' when not a number."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return "-"
    return f"{float(v) * scale:,.{decimals}f}"


def ok_of_sent(row: Mapping[str, Any]) -> str:
    """ "ok/sent" of a summary row; "?" for a count the row does not have (imported results
    state no request counts)."""
    ok, sent = row.get("n_ok"), row.get("n_sent")
    return f"{'?' if ok is None else ok}/{'?' if sent is None else sent}"
