"""The results store: DuckDB over Parquet, so runs accumulate and can be queried together.

Layout under the store root: `catalog/<run>.parquet` (one catalogue row: spec hash, labels,
scoville version, target fingerprint, time), `points/<run>.parquet` (the run's summary rows)
and `requests/<run>.parquet` (its per-request records). Files are written whole and renamed
into place, the catalogue last, so a run is visible only once all of it is on disk; adding a
run again replaces it. Queries see three views: `runs`, `points`, `requests`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from scoville import __version__
from scoville.analysis.rows import GroupKey, Row
from scoville.errors import DataError, UserError
from scoville.store.source import RunSource, read_source
from scoville.store.tables import catalog_table, points_table, requests_table

ENV_VAR = "SCOVILLE_STORE"
PARTS = ("catalog", "points", "requests")
_SAFE_ID = re.compile(r"[^A-Za-z0-9._-]+")

# Seconds are derived here, from the recorded facts, by the metrics table's definitions.
DERIVED_REQUESTS = """SELECT *,
  (first_chunk_ns - start_ns) / 1e9 AS ttft_s,
  (end_ns - start_ns) / 1e9 AS e2e_s,
  CASE WHEN output_tokens > 1 AND first_chunk_ns IS NOT NULL
       THEN (end_ns - first_chunk_ns) / 1e9 / (output_tokens - 1) END AS tpot_s
FROM {source}
"""
_EMPTY = {
    "catalog": "CREATE VIEW runs AS SELECT NULL::VARCHAR AS run_id WHERE false",
    "points": "CREATE VIEW points AS SELECT NULL::VARCHAR AS run_id WHERE false",
}


def _config_store(env: Mapping[str, str]) -> Path | None:
    """`[store] path = "..."` in $XDG_CONFIG_HOME/scoville/config.toml (~/.config by default)."""
    import tomllib

    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    cfg = Path(base) / "scoville" / "config.toml"
    if not cfg.is_file():
        return None
    try:
        doc = tomllib.loads(cfg.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{cfg} is not valid TOML ({exc}).") from None
    path = (doc.get("store") or {}).get("path")
    if path is not None and not isinstance(path, str):
        raise UserError(f"{cfg}: [store] path must be a string.")
    return Path(path).expanduser() if path else None


def configured_store(env: Mapping[str, str] | None = None) -> Path | None:
    """The store a user chose: $SCOVILLE_STORE, else the config file; None if neither."""
    env = os.environ if env is None else env
    if env.get(ENV_VAR):
        return Path(env[ENV_VAR]).expanduser()
    return _config_store(env)


def store_path(explicit: Path | None = None, env: Mapping[str, str] | None = None) -> Path:
    """--store, else the configured store, else $XDG_DATA_HOME/scoville/store
    (~/.local/share/scoville/store): never the current directory."""
    if explicit is not None:
        return explicit
    env = os.environ if env is None else env
    chosen = configured_store(env)
    if chosen is not None:
        return chosen
    data = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "scoville" / "store"


@dataclass(frozen=True)
class CatalogEntry:
    run_id: str
    run_utc: str
    n_points: int
    n_requests: int
    labels: dict[str, Any]


def target_fingerprint(target: Mapping[str, Any]) -> str | None:
    """sha256 (16 hex) of the manifest's target facts, keys sorted: equal targets, equal print."""
    if not target:
        return None
    text = json.dumps(target, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _source_kind(rows: list[Row]) -> str:
    kinds = {str(r.get("imported_from")) for r in rows if r.get("imported_from")}
    return kinds.pop() if len(kinds) == 1 else ("run" if not kinds else "mixed")


def catalog_entry(src: RunSource, n_requests: int) -> dict[str, Any]:
    first = src.rows[0] if src.rows else {}
    labels: dict[str, Any] = GroupKey.of(first).as_dict()
    for k in ("isl", "osl"):
        if first.get(k) is not None:
            labels[k] = first.get(k)
    run_utc = src.manifest.get("started_utc") or datetime.now(UTC).isoformat()
    return {
        "run_id": src.run_id,
        "run_utc": str(run_utc),
        "added_utc": datetime.now(UTC).isoformat(),
        "spec_hash": src.spec.get("content_hash") or first.get("spec_hash"),
        "scoville_version": (src.manifest.get("client") or {}).get("scoville") or __version__,
        "target_fingerprint": target_fingerprint(src.manifest.get("target") or {}),
        "source_kind": _source_kind(src.rows),
        "source_path": str(src.path.resolve()),
        "labels": json.dumps(labels, sort_keys=True, default=str),
        **{k: str(v) for k, v in GroupKey.of(first).as_dict().items()},
        "n_points": len(src.rows),
        "n_requests": n_requests,
    }


class ResultsStore:
    """A store root on disk. Cheap to construct; nothing is opened until a query runs."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _file(self, part: str, run_id: str) -> Path:
        return self.root / part / f"{_SAFE_ID.sub('_', run_id)}.parquet"

    def _write(self, part: str, run_id: str, table: pa.Table) -> None:
        dest = self._file(part, run_id)
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")  # unique per writer
        # Dictionary pages for text (ids, labels); delta encoding for timestamps (rising
        # integer ns); lz4, which writes 10 M records about twice as fast as zstd.
        text = [
            f.name
            for f in table.schema
            if pa.types.is_string(f.type) or pa.types.is_dictionary(f.type)
        ]
        delta = {
            f.name: "DELTA_BINARY_PACKED"
            for f in table.schema
            if f.name.endswith("_ns") and pa.types.is_int64(f.type)
        }
        pq.write_table(table, tmp, compression="lz4", use_dictionary=text, column_encoding=delta)
        os.replace(tmp, dest)

    def add_tables(
        self, entry: Mapping[str, Any], points: pa.Table, requests: pa.Table | None
    ) -> CatalogEntry:
        """Write one run's tables (replacing an earlier copy), the catalogue row last."""
        run_id = str(entry["run_id"])
        self._file("requests", run_id).unlink(missing_ok=True)
        self._write("points", run_id, points)
        if requests is not None and requests.num_rows:
            self._write("requests", run_id, requests)
        self._write("catalog", run_id, catalog_table(entry))
        return CatalogEntry(
            run_id,
            str(entry["run_utc"]),
            int(entry["n_points"]),
            int(entry["n_requests"]),
            json.loads(str(entry["labels"])),
        )

    def _distinct_id(self, src: RunSource) -> str:
        """The run's id, unless the store holds another run under it (two runs of one spec
        started in the same second into different folders): then the id with a suffix from
        the start time, so neither replaces the other. The same run added again (or an import,
        which has no start time) keeps its id and replaces its earlier copy."""
        held = self._file("catalog", src.run_id)
        run_utc = src.manifest.get("started_utc")
        if not held.exists() or not run_utc:
            return src.run_id
        (before,) = pq.read_table(held, columns=["run_utc"]).column(0).to_pylist() or [None]
        if before is None or str(before) == str(run_utc):
            return src.run_id
        return f"{src.run_id}-{hashlib.sha256(str(run_utc).encode()).hexdigest()[:6]}"

    def add(self, src: RunSource) -> CatalogEntry:
        if not src.rows:
            raise DataError(f"{src.path} has no points to store.")
        src = replace(src, run_id=self._distinct_id(src))
        entry = catalog_entry(src, len(src.records))
        requests = requests_table(src.records, src.run_id) if src.records else None
        return self.add_tables(entry, points_table(src.rows, src.run_id), requests)

    def connect(self) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB with the views `runs`, `points`, `requests` over the files."""
        con = duckdb.connect()
        for part, view in zip(PARTS, ("runs", "points", "requests"), strict=True):
            folder = self.root / part
            if not folder.is_dir() or not any(folder.glob("*.parquet")):
                if part == "requests":  # every column, no row: a query over it reads nothing
                    con.register("no_requests", requests_table([], ""))
                    con.execute(
                        "CREATE VIEW requests AS " + DERIVED_REQUESTS.format(source="no_requests")
                    )
                else:
                    con.execute(_EMPTY[part])
                continue
            glob = str(folder / "*.parquet").replace("'", "''")
            if part == "requests":
                source = f"read_parquet('{glob}', union_by_name = true)"
                con.execute("CREATE VIEW requests AS " + DERIVED_REQUESTS.format(source=source))
            else:
                con.execute(
                    f"CREATE VIEW {view} AS SELECT * FROM "
                    f"read_parquet('{glob}', union_by_name = true)"
                )
        return con

    def query(self, sql: str, params: Iterable[Any] = ()) -> pa.Table:
        """Run SQL over the views; a bad query is the user's mistake (exit 2), not a crash."""
        with self.connect() as con:
            try:
                rel = con.sql(sql, params=list(params) or None)
                return rel.to_arrow_table() if rel is not None else pa.table({})
            except duckdb.Error as exc:
                raise UserError(
                    f"The store query failed: {str(exc).splitlines()[0]} "
                    "Tables: runs, points, requests (see `scoville store query "
                    "'DESCRIBE points'`)."
                ) from None

    def run_ids(self) -> list[str]:
        t = self.query("SELECT run_id FROM runs ORDER BY run_utc, run_id")
        return [str(v) for v in t.column("run_id").to_pylist()]

    def point_rows(self, run_id: str) -> list[Row]:
        """A stored run's point ROWs (nulls dropped, so absent stays absent)."""
        t = self.query("SELECT * FROM points WHERE run_id = ?", [run_id])
        return [{k: v for k, v in r.items() if v is not None} for r in t.to_pylist()]


def add_paths(store: ResultsStore, paths: Iterable[Path]) -> list[CatalogEntry]:
    """Add run directories, import directories or result files; a folder of runs adds each."""
    out: list[CatalogEntry] = []
    for p in paths:
        if p.is_dir() and not (p / "summary.json").exists():
            runs = sorted(c for c in p.iterdir() if (c / "summary.json").exists())
            if not runs:
                raise DataError(f"{p} is neither a run directory nor a folder of runs.")
            out.extend(store.add(read_source(c)) for c in runs)
        else:
            out.append(store.add(read_source(p)))
    return out


def add_if_configured(run_dir: Path) -> CatalogEntry | None:
    """Add a finished run to the store the user configured ($SCOVILLE_STORE or the config
    file); does nothing (None) when no store is configured. For the end of run/replay/simulate."""
    root = configured_store()
    if root is None:
        return None
    return ResultsStore(root).add(read_source(run_dir))
