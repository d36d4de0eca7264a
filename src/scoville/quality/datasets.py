"""Quality items from local files: JSONL, Parquet (with pyarrow) and the Hugging Face
`datasets` on-disk format (with `datasets`). Never a download.

Row formats: `items` (scoville's own: id, kind, prompt, answer/schema/expect), `gsm8k`
(question, answer with '#### N'), `mmlu` (question, choices, answer index or letter), `gpqa`
(Question, Correct Answer, Incorrect Answer 1-3), `bfcl` (question, function, ground_truth).
A row missing a field is a `DataError` naming the file, the line (or row) and the field.
"""

from __future__ import annotations

import importlib.util
import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from scoville.errors import DataError
from scoville.quality.items import KINDS, Item

Row = dict[str, Any]
LETTERS = "ABCDEFGHIJ"


def _rows_jsonl(path: Path) -> Iterator[tuple[str, Row]]:
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise DataError(f"{path}, line {n}: not valid JSON ({exc}).") from None
            if not isinstance(row, dict):
                raise DataError(f"{path}, line {n}: expected a JSON object per line.")
            yield f"line {n}", row


def _rows_parquet(path: Path) -> Iterator[tuple[str, Row]]:
    if importlib.util.find_spec("pyarrow") is None:
        raise DataError(f"{path} is Parquet, which needs pyarrow: pip install pyarrow.")
    import pyarrow.parquet as pq

    for n, row in enumerate(pq.read_table(path).to_pylist(), 1):
        yield f"row {n}", row


def _rows_hf_disk(path: Path) -> Iterator[tuple[str, Row]]:
    if importlib.util.find_spec("datasets") is None:
        raise DataError(
            f"{path} is a Hugging Face `datasets` directory, which needs the datasets "
            "library: pip install datasets (or export the split to JSONL)."
        )
    import datasets

    ds = datasets.load_from_disk(str(path))
    if isinstance(ds, datasets.DatasetDict):
        raise DataError(
            f"{path} holds several splits ({', '.join(ds)}); pass one split's directory, "
            f"e.g. {path / next(iter(ds))}."
        )
    for n, row in enumerate(ds, 1):
        yield f"row {n}", dict(row)


def read_rows(path: Path) -> Iterator[tuple[str, Row]]:
    """(where, row) for every row of a JSONL file, a Parquet file or a datasets directory."""
    if path.is_dir():
        return _rows_hf_disk(path)
    if not path.is_file():
        raise DataError(f"Quality data file {path} does not exist.")
    if path.suffix == ".parquet":
        return _rows_parquet(path)
    return _rows_jsonl(path)


def _field(row: Row, name: str, where: str, path: Path) -> Any:
    if name not in row or row[name] is None:
        raise DataError(
            f"{path}, {where}: field '{name}' is missing. Rows of this format need "
            f"'{name}'; fix the row or pick the format that matches the file."
        )
    return row[name]


def _choice_prompt(question: str, options: list[str]) -> str:
    lines = [f"Question: {question.strip()}"]
    lines += [f"{LETTERS[i]}. {str(o).strip()}" for i, o in enumerate(options)]
    return "\n".join([*lines, "Answer:"])


def from_items(row: Row, where: str, path: Path) -> Item:
    kind = _field(row, "kind", where, path)
    if kind not in KINDS:
        raise DataError(f"{path}, {where}: field 'kind' is '{kind}'; use one of {KINDS}.")
    if kind in ("exact", "number", "choice"):
        _field(row, "answer", where, path)
    if kind in ("json", "tool"):
        _field(row, "expect", where, path)
    return Item(
        item_id=str(_field(row, "id", where, path)),
        task=str(row.get("task", path.stem)),
        kind=kind,
        prompt=str(_field(row, "prompt", where, path)),
        answer=None if row.get("answer") is None else str(row["answer"]),
        schema=row.get("schema"),
        expect=row.get("expect"),
        max_tokens=int(row.get("max_tokens", 32)),
        stop=tuple(row.get("stop", ())),
    )


def from_gsm8k(row: Row, where: str, path: Path) -> Item:
    answer = str(_field(row, "answer", where, path))
    final = answer.rsplit("####", 1)[-1].strip().replace(",", "")
    q = str(_field(row, "question", where, path))
    return Item(
        f"gsm8k-{where}", "gsm8k", "number", f"Question: {q}\nAnswer:", final, max_tokens=256
    )


def from_mmlu(row: Row, where: str, path: Path) -> Item:
    options = list(_field(row, "choices", where, path))
    raw = _field(row, "answer", where, path)
    letter = LETTERS[int(raw)] if isinstance(raw, int) else str(raw).strip().upper()
    prompt = _choice_prompt(str(_field(row, "question", where, path)), options)
    return Item(f"mmlu-{where}", "mmlu", "choice", prompt, letter, max_tokens=4, stop=("\n",))


def from_gpqa(row: Row, where: str, path: Path) -> Item:
    right = str(_field(row, "Correct Answer", where, path))
    wrong = [str(_field(row, f"Incorrect Answer {i}", where, path)) for i in (1, 2, 3)]
    options = [right, *wrong]
    random.Random(f"gpqa-{where}").shuffle(options)  # fixed order per row, answer not always A
    prompt = _choice_prompt(str(_field(row, "Question", where, path)), options)
    letter = LETTERS[options.index(right)]
    return Item(f"gpqa-{where}", "gpqa", "choice", prompt, letter, max_tokens=4, stop=("\n",))


def from_bfcl(row: Row, where: str, path: Path) -> Item:
    question = _field(row, "question", where, path)
    if isinstance(question, list):  # BFCL: [[{"role": "user", "content": ...}], ...]
        turns = question[0] if question and isinstance(question[0], list) else question
        question = " ".join(str(t.get("content", "")) for t in turns if isinstance(t, dict))
    functions = _field(row, "function", where, path)
    truth = _field(row, "ground_truth", where, path)
    first = truth[0] if isinstance(truth, list) and truth else truth
    if not isinstance(first, dict) or len(first) != 1:
        raise DataError(
            f"{path}, {where}: field 'ground_truth' must be [{{name: {{arg: [values]}}}}]."
        )
    name, args = next(iter(first.items()))
    prompt = (
        f"Functions: {json.dumps(functions)}\nUser: {question}\n"
        'Reply with one call as JSON {"name": ..., "arguments": {...}}.\nCall:'
    )
    expect = {"name": name, "arguments": args}
    rid = str(row.get("id", where))
    return Item(f"bfcl-{rid}", "bfcl", "tool", prompt, expect=expect, max_tokens=128, stop=("\n",))


FORMATS: dict[str, Callable[[Row, str, Path], Item]] = {
    "items": from_items,
    "gsm8k": from_gsm8k,
    "mmlu": from_mmlu,
    "gpqa": from_gpqa,
    "bfcl": from_bfcl,
}


def load_items(fmt: str, path: Path, limit: int | None = None) -> list[Item]:
    """Read up to `limit` items of format `fmt` from `path`."""
    convert = FORMATS.get(fmt)
    if convert is None:
        raise DataError(f"Unknown quality data format '{fmt}'; use one of {', '.join(FORMATS)}.")
    items: list[Item] = []
    for where, row in read_rows(path):
        if limit is not None and len(items) >= limit:
            break
        items.append(convert(row, where, path))
    if not items:
        raise DataError(f"{path} holds no rows.")
    return items


DEFAULT_TASKS = "copy,kv,arith,json,free"


def resolve_tasks(text: str, items_per_task: int, seed: int = 0) -> list[Item]:
    """Items for a comma list of tasks: generated ones by name (copy, kv, arith, json, free)
    and files as FORMAT=PATH (e.g. gsm8k=test.jsonl, items=mine.jsonl)."""
    from scoville.quality.generate import GENERATORS, generate

    items: list[Item] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if "=" in part:
            fmt, path = part.split("=", 1)
            items += load_items(fmt.strip(), Path(path.strip()).expanduser(), items_per_task)
        elif part in GENERATORS:
            items += generate(part, items_per_task, seed)
        else:
            raise DataError(
                f"Unknown quality task '{part}'. Generated tasks: {', '.join(GENERATORS)}; "
                f"files: FORMAT=PATH with FORMAT one of {', '.join(FORMATS)}."
            )
    if not items:
        raise DataError("--tasks names no task; e.g. --tasks copy,kv,arith,json,free.")
    return items
