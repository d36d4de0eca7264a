"""InferenceX and AIPerf imports, and the InferenceX export, on fixtures written by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scoville.analysis.importers import rows_from_aiperf, rows_to_inferencex
from scoville.analysis.load import load_rows
from scoville.errors import DataError

DATA = Path(__file__).parent / "data"


def test_inferencex_agg_rows() -> None:
    rows = load_rows(DATA / "inferencex_agg_b200.json")
    assert [r["point_id"] for r in rows] == ["c4", "c64"]
    r4, r64 = rows
    assert (r4["system"], r4["framework"], r4["precision"], r4["spec_decode"]) == (
        "b200",
        "vllm",
        "fp4",
        "none",
    )
    assert r4["n_accelerators"] == 8 and r4["isl"] == 8192
    assert r4["median_e2e"] == 4.3 and r4["p99_ttft"] == 0.4 and r4["std_ttft"] == 0.03
    assert r4["median_intvty"] == 250.0 and r4["p99_intvty"] == 125.0  # 1/p99 TPOT: kept
    assert "mean_intvty" not in r4  # 1/mean TPOT is not our mean(1/TPOT): dropped
    assert r64["p99_intvty"] == pytest.approx(1 / 0.03)  # derived from p99_tpot
    assert r64["input_tput_per_gpu"] == pytest.approx(8000.0)  # 9000 - 1000, aggregated
    assert r4.get("tput_per_kw") is None  # no power in agg rows


def test_inferencex_dashboard_row_with_power_and_disagg() -> None:
    (r,) = load_rows(DATA / "inferencex_dashboard_gb200.json")
    assert r["system"] == "gb200" and r["spec_decode"] == "mtp" and r["disagg"] is True
    assert r["n_accelerators"] == 24  # 8 prefill + 16 decode
    assert r["power_boundary"] == "board-measured"
    assert r["tput_per_kw"] == pytest.approx(10000.0)  # 6000 tok/s/GPU at 600 W
    assert r["median_e2e"] == 27.6


def test_aiperf_profile_export() -> None:
    (r,) = load_rows(DATA / "profile_export_aiperf.json")
    assert r["model"] == "openai/gpt-oss-20b" and r["conc"] == 32 and r["point_id"] == "c32"
    assert r["median_e2e"] == pytest.approx(1.5) and r["p99_ttft"] == pytest.approx(0.24)
    assert r["median_tpot"] == pytest.approx(0.014)
    # Tail-aligned: pX = 1 / pX(ITL); the mean is AIPerf's per-user throughput average.
    assert r["median_intvty"] == pytest.approx(1 / 0.014)
    assert r["p99_intvty"] == pytest.approx(1 / 0.021) and r["mean_intvty"] == 68.0
    # 100000 input tokens over 10 s + 1000 output tok/s = 11000 tok/s over 2 GPUs (telemetry).
    assert r["n_accelerators"] == 2
    assert r["tput_per_gpu"] == pytest.approx(5500.0)
    assert r["power_w_per_accelerator"] == pytest.approx(400.0)
    assert r["tput_per_kw"] == pytest.approx(13750.0)


def test_aiperf_labels_and_accelerators_from_caller() -> None:
    doc = json.loads((DATA / "profile_export_aiperf.json").read_text())
    (r,) = rows_from_aiperf(doc, "x", n_accelerators=8, system="H200", framework="vllm")
    assert r["system"] == "H200" and r["tput_per_gpu"] == pytest.approx(11000 / 8)


def test_export_round_trips_through_import() -> None:
    rows = load_rows(DATA / "inferencex_agg_b200.json")
    exported = rows_to_inferencex(rows)
    assert exported[0]["median_e2el"] == 4.3 and exported[0]["tp"] == 8
    assert exported[0]["median_intvty"] == pytest.approx(250.0)  # 1 / median_tpot
    assert exported[0]["p99_intvty"] == pytest.approx(125.0)  # their convention: 1 / p99 TPOT
    again = load_rows_from_doc(exported)
    for k in ("tput_per_gpu", "median_ttft", "median_e2e", "median_intvty", "system", "conc"):
        assert again[0][k] == rows[0][k]


def load_rows_from_doc(doc: object) -> list[dict[str, object]]:
    from scoville.analysis.importers import rows_from_inferencex

    return [dict(r) for r in rows_from_inferencex(doc, "mem")]


def test_bad_inputs_name_the_problem(tmp_path: Path) -> None:
    p = tmp_path / "x.json"
    p.write_text('{"hw": "b200", "tput_per_gpu": "lots"}')
    with pytest.raises(DataError, match="tput_per_gpu"):
        load_rows(p)
    p.write_text('{"something": 1}')
    with pytest.raises(DataError, match="unknown result format"):
        load_rows(p)
    p.write_text("{not json")
    with pytest.raises(DataError, match="not valid JSON"):
        load_rows(p)
    with pytest.raises(DataError, match="does not exist"):
        load_rows(tmp_path / "missing")


def test_directory_of_runs_is_a_group(tmp_path: Path) -> None:
    for name, system in (("r1", "A"), ("r2", "B")):
        (tmp_path / name).mkdir()
        doc = {
            "schema": "scoville.summary/1",
            "run_id": name,
            "labels": {"system": system},
            "points": [{"point_id": "c1", "tput_per_gpu": 1.0, "system": None}],
        }
        (tmp_path / name / "summary.json").write_text(json.dumps(doc))
    rows = load_rows(tmp_path)
    assert [(r["run_id"], r["system"]) for r in rows] == [("r1", "A"), ("r2", "B")]
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match=r"no summary\.json"):
        load_rows(tmp_path / "empty")
