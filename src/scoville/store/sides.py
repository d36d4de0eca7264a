"""The two sides of `scoville check` as `RunSample`s: from a run directory, a stored run id,
or a store query (its most recent run), with per-request arrays derived by the store's SQL.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from scoville.analysis.bootstrap import RequestArrays
from scoville.analysis.comparable import unlike_runs
from scoville.analysis.regression import PointArrays, RunSample
from scoville.analysis.rows import GroupKey, Row, num
from scoville.errors import UserError
from scoville.store.results import DERIVED_REQUESTS, ResultsStore
from scoville.store.source import read_source
from scoville.store.tables import requests_table

_MEASURED = (
    "SELECT point_id, input_tokens::DOUBLE AS input_tokens, output_tokens::DOUBLE AS "
    "output_tokens, e2e_s, ttft_s, tpot_s FROM requests WHERE run_id = ? AND phase = 'measure' "
    "AND error IS NULL AND first_chunk_ns IS NOT NULL ORDER BY point_id"
)


def point_arrays(measured: pa.Table, rows: list[Row]) -> PointArrays:
    """Group the measured requests per point; each point's window comes from its row."""
    windows = {str(r.get("point_id")): num(r, "window_s") for r in rows}
    pids = np.asarray(measured.column("point_id").to_pylist(), dtype=object)
    cols = {c: measured.column(c).to_numpy(zero_copy_only=False) for c in measured.column_names}
    out: dict[str, tuple[RequestArrays, float]] = {}
    for pid in dict.fromkeys(pids.tolist()):
        sel = pids == pid
        window_s = windows.get(str(pid))
        if not window_s:
            continue
        f = {c: np.asarray(cols[c][sel], dtype=np.float64) for c in cols if c != "point_id"}
        arrays = RequestArrays(
            f["input_tokens"], f["output_tokens"], f["e2e_s"], f["ttft_s"], f["tpot_s"]
        )
        out[str(pid)] = (arrays, window_s)
    return out


def _n_acc(rows: list[Row]) -> int:
    return int(next((num(r, "n_accelerators") for r in rows if num(r, "n_accelerators")), 1) or 1)


def sample_from_path(path: Path) -> RunSample:
    src = read_source(path)
    if not src.records:
        return RunSample(src.run_id, src.rows, {}, _n_acc(src.rows))
    table = requests_table(src.records, src.run_id)
    with duckdb.connect() as con:
        con.register("raw", table)
        con.execute("CREATE VIEW requests AS " + DERIVED_REQUESTS.format(source="raw"))
        measured = con.sql(_MEASURED, params=[src.run_id]).to_arrow_table()
    return RunSample(src.run_id, src.rows, point_arrays(measured, src.rows), _n_acc(src.rows))


def sample_from_store(store: ResultsStore, run_id: str) -> RunSample:
    rows = store.point_rows(run_id)
    measured = store.query(_MEASURED, [run_id])
    return RunSample(run_id, rows, point_arrays(measured, rows), _n_acc(rows))


def resolve(store: ResultsStore, ref: str, like: RunSample | None = None) -> RunSample:
    """A run directory or result file; else a run id in the store; else "latest" (the most
    recent stored run of `like`'s configuration that is like for like with it); else SQL over
    the store whose result has a `run_id` column (the most recent of those runs). `like`
    itself is never chosen as its own baseline."""
    if Path(ref).exists():
        return sample_from_path(Path(ref))
    ids = store.run_ids() if (store.root / "catalog").is_dir() else []
    if ref in ids:
        return sample_from_store(store, ref)
    params: list[object] = []
    if ref == "latest" and like is not None:
        return _latest_like(store, ids, like)
    elif not ref.lstrip().lower().startswith(("select", "with", "from")):
        raise UserError(
            f"{ref!r} is not a path, not a run id in the store at {store.root}, not "
            '"latest" and not a SQL query. Give a run directory, a stored run id, latest, or '
            "e.g. \"SELECT run_id FROM runs WHERE model = 'gpt-oss-120b'\"."
        )
    got = store.query(ref, params)
    if "run_id" not in got.column_names:
        raise UserError(
            f"The baseline query must return a run_id column; it returned {got.column_names}."
        )
    exclude = like.run_id if like is not None else None
    wanted = {str(v) for v in got.column("run_id").to_pylist() if v is not None and v != exclude}
    latest = [i for i in ids if i in wanted]
    if not latest:
        raise UserError(f"The baseline selection {ref!r} matched no other stored run.")
    return sample_from_store(store, latest[-1])


def _latest_like(store: ResultsStore, ids: list[str], like: RunSample) -> RunSample:
    """The newest stored run with `like`'s configuration labels that is like for like with it
    (`comparable.unlike_runs`: the rule `history` splits its series by)."""
    row = like.rows[0] if like.rows else {}
    labels = GroupKey.of(row).as_dict()
    where = " AND ".join(f"p.{k} = ?" for k in labels)
    got = store.query(
        f"SELECT DISTINCT p.run_id FROM points p WHERE {where}", list(labels.values())
    )
    same_labels = {str(v) for v in got.column("run_id").to_pylist()} - {like.run_id}
    for run_id in reversed([i for i in ids if i in same_labels]):
        if not unlike_runs(store.point_rows(run_id), like.rows):
            return sample_from_store(store, run_id)
    raise UserError(
        f"The store at {store.root} holds no other run of {GroupKey.of(row).label()} like "
        f"{like.run_id} (same ISL, OSL, range ratio and precision) to use as the latest baseline."
    )
