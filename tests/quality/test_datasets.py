"""Loading user-brought files: each format, and errors that name the file, line and field."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from scoville.errors import DataError
from scoville.quality.datasets import load_items, resolve_tasks


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_gsm8k_final_answer(tmp_path: Path) -> None:
    f = _jsonl(tmp_path / "g.jsonl", [{"question": "2+2?", "answer": "2+2=4\n#### 4"}])
    (item,) = load_items("gsm8k", f)
    assert item.kind == "number" and item.answer == "4" and "2+2?" in item.prompt


def test_mmlu_and_gpqa_letters(tmp_path: Path) -> None:
    m = _jsonl(
        tmp_path / "m.jsonl", [{"question": "Q", "choices": ["a", "b", "c", "d"], "answer": 2}]
    )
    assert load_items("mmlu", m)[0].answer == "C"
    row = {"Question": "Q", "Correct Answer": "yes", "Incorrect Answer 1": "n1",
           "Incorrect Answer 2": "n2", "Incorrect Answer 3": "n3"}  # fmt: skip
    (g,) = load_items("gpqa", _jsonl(tmp_path / "q.jsonl", [row]))
    assert g.answer is not None and f"{g.answer}. yes" in g.prompt


def test_bfcl_ground_truth(tmp_path: Path) -> None:
    row = {
        "id": "simple_1",
        "question": [[{"role": "user", "content": "Weather in Paris?"}]],
        "function": [{"name": "get_weather"}],
        "ground_truth": [{"get_weather": {"city": ["Paris"]}}],
    }
    (item,) = load_items("bfcl", _jsonl(tmp_path / "b.jsonl", [row]))
    assert item.expect == {"name": "get_weather", "arguments": {"city": ["Paris"]}}
    assert "Weather in Paris?" in item.prompt


def test_missing_field_names_file_line_and_field(tmp_path: Path) -> None:
    f = _jsonl(tmp_path / "g.jsonl", [{"question": "a", "answer": "#### 1"}, {"question": "b"}])
    with pytest.raises(DataError, match=r"g\.jsonl, line 2: field 'answer' is missing"):
        load_items("gsm8k", f)


def test_bad_json_line_and_unknown_kind(tmp_path: Path) -> None:
    f = tmp_path / "i.jsonl"
    f.write_text('{"id": "a", "kind": "exact", "prompt": "p", "answer": "x"}\n{oops\n')
    with pytest.raises(DataError, match="line 2: not valid JSON"):
        load_items("items", f)
    _jsonl(f, [{"id": "a", "kind": "essay", "prompt": "p"}])
    with pytest.raises(DataError, match="field 'kind' is 'essay'"):
        load_items("items", f)


def test_parquet_and_missing_file(tmp_path: Path) -> None:
    f = tmp_path / "m.parquet"
    rows = [{"question": "Q", "choices": ["a", "b"], "answer": 1}]
    if importlib.util.find_spec("pyarrow") is None:
        f.write_bytes(b"PAR1")
        with pytest.raises(DataError, match="needs pyarrow"):
            load_items("mmlu", f)
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows), f)
        assert load_items("mmlu", f)[0].answer == "B"
    with pytest.raises(DataError, match="does not exist"):
        load_items("items", tmp_path / "none.jsonl")


def test_resolve_tasks(tmp_path: Path) -> None:
    f = _jsonl(
        tmp_path / "g.jsonl", [{"question": str(i), "answer": f"#### {i}"} for i in range(5)]
    )
    items = resolve_tasks(f"arith,gsm8k={f}", 3)
    assert [it.task for it in items] == ["arith"] * 3 + ["gsm8k"] * 3
    with pytest.raises(DataError, match="Unknown quality task 'mmlu-pro'"):
        resolve_tasks("mmlu-pro", 3)
