"""The metric table is the one definition: docs/METRICS.md must embed it unchanged."""

from pathlib import Path

from scoville.metrics.table import METRICS, metrics_markdown

DOC = Path(__file__).resolve().parents[2] / "docs" / "METRICS.md"


def test_metrics_doc_embeds_the_table() -> None:
    assert metrics_markdown() in DOC.read_text(encoding="utf-8")


def test_every_metric_has_unit_direction_and_formula() -> None:
    names = [m.name for m in METRICS]
    assert len(names) == len(set(names))
    for m in METRICS:
        assert m.unit and m.formula and m.direction in ("lower", "higher", "none")
