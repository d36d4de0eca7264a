"""Typer options built from the flag tables of `scoville.spec.flags`: the option's name is the
parameter's, its help the spec field's description (so it is written once)."""

from __future__ import annotations

from typing import Any

import typer
from pydantic import BaseModel

from scoville.spec.flags import RUN_FLAGS, Flag, flag_help, option_name


def spec_option(
    name: str, model: type[BaseModel] | None = None, table: dict[str, Flag] | None = None
) -> Any:
    """`typer.Option` for flag `name` of `table` (default: the run flags of BenchmarkSpec)."""
    if model is None:
        from scoville.spec.model import BenchmarkSpec

        model = BenchmarkSpec
    table = RUN_FLAGS if table is None else table
    return typer.Option(option_name(name), help=flag_help(model, table, name))
