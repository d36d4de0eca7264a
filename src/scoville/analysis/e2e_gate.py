"""AgentX's rule for agentic frontiers: a point may appear on any agentic frontier only if it
is on its configuration's E2E-normalised frontier (throughput over p90 E2E-normalised
interactivity, `p90_intvty_e2e` = 1 / p90(E2E_i / OSL_i)). A point fast per decoded token but
slow end to end (long queues, long prefills) is kept off every agentic chart."""

from __future__ import annotations

from collections.abc import Iterable

from scoville.analysis.frontier import frontiers
from scoville.analysis.rows import GroupKey, Row

E2E_INTERACTIVITY = "p90_intvty_e2e"


def e2e_frontier_points(
    rows: Iterable[Row], y_metric: str = "tput_per_gpu"
) -> set[tuple[GroupKey, str]]:
    """(configuration, point_id) of every point on its E2E-normalised frontier."""
    return {
        (key, p.point_id)
        for key, f in frontiers(rows, E2E_INTERACTIVITY, y_metric).items()
        for p in f.points
    }


def gate_agentic(rows: Iterable[Row], y_metric: str = "tput_per_gpu") -> list[Row]:
    """The rows allowed onto agentic frontiers (valid and on the E2E-normalised frontier)."""
    all_rows = list(rows)
    return [r for r, ok in zip(all_rows, e2e_gate_marks(all_rows, y_metric), strict=True) if ok]


OFF_E2E_FRONTIER = "off the E2E-normalised frontier (AgentX: never on an agentic frontier)"


def e2e_gate_marks(rows: Iterable[Row], y_metric: str = "tput_per_gpu") -> list[bool]:
    """For each row in order: may it appear on an agentic frontier (valid and on its
    configuration's E2E-normalised frontier of `y_metric`)?"""
    all_rows = list(rows)
    keep = e2e_frontier_points(all_rows, y_metric)
    return [(GroupKey.of(r), str(r.get("point_id"))) in keep for r in all_rows]
