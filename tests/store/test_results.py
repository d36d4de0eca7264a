"""The results store: where it lives, what `add` writes, and what SQL over it returns."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from scoville.errors import UserError
from scoville.store.results import ResultsStore, add_if_configured, add_paths, store_path

DATA = Path(__file__).resolve().parents[1] / "analysis" / "data"


def test_store_path_precedence(tmp_path: Path) -> None:
    home = {"XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    assert store_path(None, home) == tmp_path / "data" / "scoville" / "store"
    cfg = tmp_path / "cfg" / "scoville" / "config.toml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text('[store]\npath = "/srv/results"\n', encoding="utf-8")
    assert store_path(None, home) == Path("/srv/results")
    assert store_path(None, {**home, "SCOVILLE_STORE": "/x/y"}) == Path("/x/y")
    assert store_path(tmp_path / "explicit", home) == tmp_path / "explicit"


def test_default_store_is_never_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    env = {"XDG_CONFIG_HOME": str(tmp_path / "nothing")}
    got = store_path(None, env)
    assert got.is_absolute() and got.parts[-3:] == ("share", "scoville", "store")


def test_add_writes_one_file_per_run_and_part(tmp_path: Path, twin_runs: dict[str, Path]) -> None:
    store = ResultsStore(tmp_path / "store")
    entries = add_paths(store, [twin_runs["base"], twin_runs["slow"]])
    assert [(e.n_points, e.n_requests) for e in entries] == [(3, 252), (3, 252)]
    for part in ("catalog", "points", "requests"):
        assert len(list((tmp_path / "store" / part).glob("*.parquet"))) == 2
    runs = store.query("SELECT spec_hash, target_fingerprint, system, model FROM runs").to_pylist()
    assert {r["system"] for r in runs} == {"H200"} and {r["model"] for r in runs} == {
        "gpt-oss-120b"
    }
    assert len({r["target_fingerprint"] for r in runs}) == 2  # hbm_efficiency differs
    # 10 + 40 + 160 measured requests (the spec's default requests per point: 10 x concurrency)
    measured = store.query(
        "SELECT point_id, count(*) AS n FROM requests WHERE phase = 'measure' AND run_id = ? "
        "GROUP BY point_id ORDER BY n",
        [entries[0].run_id],
    ).to_pylist()
    assert [(r["point_id"], r["n"]) for r in measured] == [("c1", 10), ("c4", 40), ("c16", 160)]


def test_adding_again_replaces(tmp_path: Path, twin_runs: dict[str, Path]) -> None:
    store = ResultsStore(tmp_path / "store")
    add_paths(store, [twin_runs["base"]])
    add_paths(store, [twin_runs["base"]])
    assert store.query("SELECT count(*) AS n FROM points").to_pylist() == [{"n": 3}]


def test_two_runs_under_one_id_are_both_kept(tmp_path: Path, twin_runs: dict[str, Path]) -> None:
    """Two runs of one spec started in the same second into two folders share a directory
    name; the second is stored beside the first, never over it."""
    other = tmp_path / "elsewhere" / twin_runs["base"].name
    shutil.copytree(twin_runs["base"], other)
    manifest = json.loads((other / "manifest.json").read_text())
    manifest["started_utc"] = manifest["started_utc"][:19] + ".999999+00:00"  # same second
    (other / "manifest.json").write_text(json.dumps(manifest))
    store = ResultsStore(tmp_path / "store")
    add_paths(store, [twin_runs["base"], other, other])  # the second add of `other` replaces
    ids = [r["run_id"] for r in store.query("SELECT run_id FROM runs ORDER BY run_id").to_pylist()]
    assert len(ids) == 2 and ids[0] == twin_runs["base"].name and ids[1].startswith(ids[0] + "-")
    assert store.query("SELECT count(*) AS n FROM points").to_pylist() == [{"n": 6}]


def test_store_seconds_match_the_summary(tmp_path: Path, twin_runs: dict[str, Path]) -> None:
    store = ResultsStore(tmp_path / "store")
    add_paths(store, [twin_runs["base"]])
    got = store.query(
        "SELECT p.median_ttft, p.median_e2e, quantile_cont(r.ttft_s, 0.5) AS ttft, "
        "quantile_cont(r.e2e_s, 0.5) AS e2e FROM requests r JOIN points p USING (run_id, "
        "point_id) WHERE r.phase = 'measure' AND r.error IS NULL AND point_id = 'c16' "
        "GROUP BY ALL"
    ).to_pylist()[0]
    assert got["ttft"] == pytest.approx(got["median_ttft"], rel=1e-12)
    assert got["e2e"] == pytest.approx(got["median_e2e"], rel=1e-12)


def test_imported_results_land_in_the_same_tables(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "store")
    add_paths(store, [DATA / "inferencex_agg_b200.json", DATA / "profile_export_aiperf.json"])
    kinds = store.query("SELECT source_kind, n_requests FROM runs ORDER BY 1").to_pylist()
    assert kinds == [
        {"source_kind": "aiperf", "n_requests": 0},
        {"source_kind": "inferencex", "n_requests": 0},
    ]
    assert store.query("SELECT count(*) AS n FROM points").to_pylist()[0]["n"] >= 2
    # no run holds records, yet the requests view has every column (what `check` reads)
    sql = "SELECT count(*) AS n FROM requests WHERE phase = 'measure' AND e2e_s > 0"
    assert store.query(sql).to_pylist() == [{"n": 0}]


def test_bad_sql_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="store query failed"):
        ResultsStore(tmp_path).query("SELEC 1")


def test_automatic_add_only_when_configured(
    tmp_path: Path, twin_runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SCOVILLE_STORE", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    assert add_if_configured(twin_runs["base"]) is None
    monkeypatch.setenv("SCOVILLE_STORE", str(tmp_path / "auto"))
    entry = add_if_configured(twin_runs["base"])
    assert entry is not None and ResultsStore(tmp_path / "auto").run_ids() == [entry.run_id]


def test_a_run_lands_in_the_configured_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_on_twin: Callable[[Path, str], Path]
) -> None:
    monkeypatch.setenv("SCOVILLE_STORE", str(tmp_path / "auto"))
    run_dir = run_on_twin(tmp_path / "runs", "twin:H200/gpt-oss-120b?tp=8")
    assert ResultsStore(tmp_path / "auto").run_ids() == [run_dir.name]
