"""Economics: InferenceX's $/M-token formula on hand-checked rows, TCO and qualified tasks."""

from __future__ import annotations

from pathlib import Path

import pytest

from scoville.analysis.cost import (
    TaskOutcome,
    TcoInputs,
    cost_per_qualified_task,
    outcomes_from_records,
    row_token_costs,
    usd_per_million_tokens,
)
from scoville.analysis.load import load_rows
from scoville.records.model import ErrorKind, RequestRecord

DATA = Path(__file__).parent / "data"


def test_inferencex_formula_by_hand() -> None:
    # $2.50/GPU-hr at 1000 tok/s/GPU: 3.6 M tokens per GPU-hour -> $0.6944/M.
    assert usd_per_million_tokens(2.50, 1000.0) == pytest.approx(0.694444, rel=1e-6)
    with pytest.raises(ValueError):
        usd_per_million_tokens(2.5, 0.0)


def test_costs_of_an_imported_inferencex_row() -> None:
    row = load_rows(DATA / "inferencex_agg_b200.json")[0]  # 1200 / 1070 / 130 tok/s/GPU
    c = row_token_costs(row, 3.00)
    assert c.total_usd_per_m == pytest.approx(3 / 4.32)  # 0.6944
    assert c.input_usd_per_m == pytest.approx(3 / 3.852)  # 0.7788
    assert c.output_usd_per_m == pytest.approx(3 / 0.468)  # 6.4103
    assert row_token_costs({"tput_per_gpu": 0}, 3.0).total_usd_per_m is None


def test_tco_hourly_cost_by_hand() -> None:
    t = TcoInputs(
        accelerator_capex_usd=30000,
        system_capex_usd=10000,
        network_capex_usd=5000,
        depreciation_years=5,
        power_w=1000,
        power_price_usd_per_kwh=0.08,
        pue=1.25,
        utilisation=0.5,
        operations_usd_per_year=876,
    )
    assert t.capex_usd_per_hour() == pytest.approx(45000 / 43800)
    assert t.energy_usd_per_hour() == pytest.approx(0.1)  # 1 kW x 1.25 x $0.08
    assert t.usd_per_accelerator_hour() == pytest.approx((45000 / 43800 + 0.1 + 0.1) / 0.5)
    with pytest.raises(ValueError):
        TcoInputs(1, 1, 1, 5, 1, 1, utilisation=0)


def test_failed_slow_and_wrong_tasks_are_paid_but_not_counted() -> None:
    outcomes = (
        [TaskOutcome(True, 1.0, True)] * 5
        + [TaskOutcome(False, None)] * 2
        + [TaskOutcome(True, 9.0, True)]
        + [TaskOutcome(True, 1.0, False)]
        + [TaskOutcome(True, 1.0, None)]
    )
    q = cost_per_qualified_task(outcomes, 2.0, n_accelerators=8, window_s=3600, latency_slo_s=5)
    assert (q.n_tasks, q.n_qualified, q.n_failed, q.n_too_slow, q.n_wrong) == (10, 5, 2, 1, 2)
    assert q.total_usd == pytest.approx(16.0)
    assert q.usd_per_task == pytest.approx(1.6)
    assert q.usd_per_qualified_task == pytest.approx(3.2)
    lax = cost_per_qualified_task(outcomes, 2.0, 8, 3600, None, require_quality=False)
    assert lax.n_qualified == 8


def test_outcomes_from_records() -> None:
    ok = RequestRecord("a", "c1", "measure", 0, 2_000_000_000, chunk_ns=(1,), chunk_tokens=(1,))
    bad = RequestRecord("b", "c1", "measure", 0, 5, error=ErrorKind.HTTP_5XX)
    warm = RequestRecord("w", "c1", "warmup", 0, 5, chunk_ns=(1,), chunk_tokens=(1,))
    got = outcomes_from_records([ok, bad, warm], quality={"a": True})
    assert got == [TaskOutcome(True, 2.0, True), TaskOutcome(False, None, None)]
