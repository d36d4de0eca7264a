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


def test_summary_row_fields_are_the_table() -> None:
    """Every SummaryRow field is a table metric (request metrics as <stat>_<name>) or a named
    non-metric field, and every table metric is a field."""
    from dataclasses import fields

    from scoville.metrics.row import NON_METRIC_FIELDS, SummaryRow
    from scoville.metrics.table import STATS

    row_fields = {f.name for f in fields(SummaryRow)}
    expected = set(NON_METRIC_FIELDS)
    for m in METRICS:
        if m.scope == "request":
            expected |= {f"{stat}_{m.name}" for stat in STATS}
        else:
            expected.add(m.name)
    assert row_fields == expected
