"""Explicit limits on what scoville reads, with the error that names what broke them: input
files (size, binary content, UTF-8), YAML (aliases that expand past a node budget, recursive
aliases), and the bounds of the numbers a spec or a trace may declare.

Every reader of a user's file (spec, claim file, trace, import file) goes through `read_text`
and, for YAML, `load_yaml`, so a binary file, a 2 GB file or an alias bomb gets one paragraph
naming the file, never a traceback or gigabytes of memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from scoville.errors import UserError

MAX_SPEC_BYTES = 1 << 20  # a spec or claim file: 1 MiB is thousands of points
MAX_DATA_BYTES = 1 << 30  # a trace or result file read whole: 1 GiB
MAX_YAML_NODES = 100_000  # YAML nodes after alias expansion
MAX_SEQUENCE_TOKENS = 10_000_000  # ISL/OSL of one request (the largest context windows)
MAX_CONCURRENCY = 100_000  # requests in flight, lanes
MAX_REQUESTS_PER_POINT = 10_000_000
MAX_RATE_PER_S = 1_000_000.0
MAX_PROMPT_TEXT_TOKENS = 200_000_000  # prompt text a sweep builds in memory (~1 GB)


def read_text(
    path: Path, what: str, max_bytes: int = MAX_SPEC_BYTES, error: type[UserError] = UserError
) -> str:
    """The UTF-8 text of `path`, or `error` saying which limit it broke: it does not exist,
    is larger than `max_bytes`, holds NUL bytes (a binary file), or is not UTF-8."""
    if not path.is_file():
        raise error(f"{what} {path} does not exist (or is not a file).")
    size = path.stat().st_size
    if size > max_bytes:
        raise error(
            f"{what} {path} is {size:,} bytes, over the {max_bytes:,}-byte limit for such a "
            "file; is it the right file?"
        )
    data = path.read_bytes()
    if b"\0" in data:
        at = data.index(b"\0")
        raise error(f"{what} {path} is a binary file (a NUL byte at offset {at}), not text.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise error(
            f"{what} {path} is not UTF-8 text (byte 0x{data[exc.start]:02x} at line {line}); "
            "save it as UTF-8."
        ) from None


def load_yaml(
    text: str, source: str, error: type[UserError] = UserError, syntax: str = "YAML"
) -> Any:
    """`text` as YAML (the safe loader), after checking that its aliases neither refer to the
    node that contains them (recursive YAML) nor expand past `MAX_YAML_NODES` nodes.
    `syntax` names the format in the message (e.g. the file's suffix)."""
    try:
        _check_expansion(text, source, error)
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise error(
            f"{source} is not valid {syntax}: {exc}. Fix the syntax and run again."
        ) from None


def _check_expansion(text: str, source: str, error: type[UserError]) -> None:
    """Walk YAML events counting nodes as aliases would expand them (an anchored node's size
    is counted again at each alias) without building anything."""
    sizes: dict[str, int] = {}
    stack: list[list[Any]] = []  # [anchor, nodes inside so far] of each open collection
    total = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        n = 0
        if isinstance(event, yaml.AliasEvent):
            if event.anchor in {a for a, _ in stack}:
                line = event.start_mark.line + 1 if event.start_mark else 0
                raise error(
                    f"{source} line {line}: the alias *{event.anchor} refers to a node that "
                    "contains it (recursive YAML); scoville reads only finite documents."
                )
            n = sizes.get(str(event.anchor), 1)
        elif isinstance(event, yaml.ScalarEvent):
            n = 1
            if event.anchor:
                sizes[event.anchor] = 1
        elif isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            stack.append([event.anchor, 1])
            total += 1
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            anchor, count = stack.pop()
            if anchor:
                sizes[anchor] = count
            if stack:
                stack[-1][1] += count
            continue
        total += n
        if stack:
            stack[-1][1] += n
        if total > MAX_YAML_NODES:
            raise error(
                f"{source} expands to more than {MAX_YAML_NODES:,} YAML nodes through its "
                "aliases (*name); write the values out or use fewer aliases."
            )
