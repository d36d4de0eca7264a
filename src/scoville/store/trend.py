"""Store-side reads for trends: the stored runs of one model and system, in run order."""

from __future__ import annotations

from scoville.analysis.history import RunRows
from scoville.errors import UserError
from scoville.store.results import ResultsStore


def history_runs(store: ResultsStore, model: str, system: str) -> list[RunRows]:
    """Every stored run with points of (model, system), oldest first."""
    runs = store.query(
        "SELECT DISTINCT r.run_id, r.run_utc FROM runs r JOIN points p USING (run_id) "
        "WHERE lower(p.model) = lower(?) AND lower(p.system) = lower(?) "
        "ORDER BY r.run_utc, r.run_id",
        [model, system],
    ).to_pylist()
    if not runs:
        raise UserError(
            f"The store at {store.root} holds no run of model {model!r} on system "
            f"{system!r}. List what it holds with `scoville store runs`."
        )
    out: list[RunRows] = []
    for r in runs:
        rows = [
            row
            for row in store.point_rows(str(r["run_id"]))
            if str(row.get("model", "")).lower() == model.lower()
            and str(row.get("system", "")).lower() == system.lower()
        ]
        out.append(RunRows(str(r["run_id"]), str(r["run_utc"]), rows))
    return out
