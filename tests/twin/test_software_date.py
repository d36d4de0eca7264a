"""The software's date as an input of the twin: a vendor's fitted trend over its calibrated
dates, a young port's slowdown in a model's first weeks, and calibration rows run at their run
date (`software.software_speed`, `Efficiency.at_speed`, `calibration.point_options`)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from scoville.cli import app
from scoville.errors import TargetError
from scoville.twin.calibration import CalPoint, Published, point_options
from scoville.twin.costmodel import StepBatch, StepCost, StepModel
from scoville.twin.free_params import FREE_PARAMS, point_owner
from scoville.twin.options import TwinOptions
from scoville.twin.profiles import ProfileBook, SoftwareTrend, load_profiles

DSV4 = "twin:MI355X/DeepSeek-V4-Pro?tp=8&precision=fp4&framework=sglang"
DECODE = StepBatch(n_decode=8, decode_ctx_tokens=8 * 4000, n_sampled=8)
BIG = StepBatch(n_decode=256, decode_ctx_tokens=256 * 9000, n_sampled=256)


def book_with(**amd: float) -> ProfileBook:
    """The shipped book with AMD's software trend set to `amd` (dates as shipped)."""
    book = load_profiles()
    trend = book.software["AMD"].model_copy(update=amd)
    return book.model_copy(update={"software": {**book.software, "AMD": trend}})


def step_s(url: str, book: ProfileBook, batch: StepBatch = DECODE, **opts: str) -> float:
    return cost(url, book, batch, **opts).total_s


def cost(url: str, book: ProfileBook, batch: StepBatch = DECODE, **opts: str) -> StepCost:
    base = TwinOptions.parse_url(url)
    cfg = base.model_copy(update=opts).config(book)
    return StepModel(cfg.hardware, cfg.model, cfg.parallel, cfg.efficiency).cost(batch)


def test_a_later_software_date_runs_the_same_step_faster_within_the_calibrated_dates() -> None:
    book = book_with(per_year=2.0, young=0.0)
    trend = book.software["AMD"]
    url = "twin:MI355X/DeepSeek-R1?tp=8&precision=fp4&framework=sglang"
    at_ref = step_s(url, book, software_date=trend.ref)
    assert step_s(url, book) == at_ref  # no date: the fitted factors as they are
    earlier = step_s(url, book, software_date="2025-12-01")
    later = step_s(url, book, software_date="2026-09-01")
    assert earlier > at_ref > later
    # outside the calibrated dates the trend is held, not extended
    assert step_s(url, book, software_date="2027-06-01") == step_s(
        url, book, software_date=trend.last
    )
    assert step_s(url, book, software_date="2025-06-01") == step_s(
        url, book, software_date=trend.first
    )
    # another vendor's trend does not move NVIDIA hardware
    h200 = "twin:H200/DeepSeek-R1?tp=8&framework=sglang"
    assert step_s(h200, book, software_date="2026-09-01") == step_s(
        h200, load_profiles(), software_date="2026-09-01"
    )


def test_a_faster_software_date_never_beats_the_roofline_nor_moves_collectives() -> None:
    book = book_with(per_year=3.0, young=0.0)
    url = "twin:MI355X/DeepSeek-R1?tp=8&precision=fp4&framework=sglang"
    for batch in (DECODE, BIG):
        fast = cost(url, book, batch, software_date=book.software["AMD"].last)
        slow = cost(url, book, batch, software_date=book.software["AMD"].first)
        assert fast.total_s < slow.total_s
        assert fast.total_s >= fast.floor_s and fast.comm_s == slow.comm_s
    cfg = TwinOptions.parse_url(url + "&software_date=2026-09-14").config(book)
    eff = cfg.efficiency
    assert max(eff.hbm_bw, eff.attention_hbm_bw, eff.gemm_max, eff.attention_compute) <= 1.0


def test_a_young_port_is_slower_and_fades_as_it_ages() -> None:
    book = book_with(per_year=1.0, young=3.0, young_days=10.0)
    day1, day20, day200 = (
        step_s(DSV4, book, software_date=d) for d in ("2026-04-25", "2026-05-14", "2026-11-10")
    )
    mature = step_s(DSV4, book)
    assert day1 > day20 > day200 and day1 > 2.5 * mature
    assert day200 == pytest.approx(mature, rel=1e-6)
    cfg = TwinOptions.parse_url(DSV4 + "&software_date=2026-04-25").config(book)
    assert "a port 1 days old" in cfg.labels["software"] and not cfg.notes
    # a declared kernel path replaces the young port's slowdown; a model whose release date
    # the catalogue does not hold has none
    untuned = DSV4 + "&kernels=untuned"
    assert step_s(untuned, book, software_date="2026-04-25") == step_s(untuned, book)
    k3 = "twin:MI355X/Kimi-K3?tp=8&precision=fp4&framework=sglang"
    assert step_s(k3, book, software_date="2026-09-01") == step_s(
        k3, book_with(per_year=1.0, young=0.0), software_date="2026-09-01"
    )


def test_a_software_date_must_be_a_day_after_the_models_release() -> None:
    with pytest.raises(TargetError, match="before the model's release"):
        TwinOptions.parse_url(DSV4 + "&software_date=2026-04-01").config()
    for bad in ("2026-13-01", "20260501", "May"):
        with pytest.raises(TargetError, match="must be a date, YYYY-MM-DD"):
            TwinOptions.parse_url(DSV4 + f"&software_date={bad}")
    r = CliRunner().invoke(app, ["simulate", "--software-date", "2026-02-30", "--no-bundle"])
    assert isinstance(r.exception, TargetError)


def test_the_trend_dates_are_days_in_order() -> None:
    for trend in load_profiles().software.values():
        assert trend.first <= trend.ref <= trend.last
    with pytest.raises(ValueError):
        SoftwareTrend(ref="2026-3-3", first="2025-10-06", last="2026-09-14")


def row(url: str, run_date: str | None) -> CalPoint:
    pub = Published(tput_per_gpu=1.0, tpot_ms=1.0)
    return CalPoint(id="x", url=url, isl_tokens=1, osl_tokens=1, published=pub, split="dev",
                    run_date=run_date, source="s")  # fmt: skip


def test_a_calibration_row_runs_at_its_run_date_and_informs_its_vendors_trend() -> None:
    assert point_options(row(DSV4, "2026-05-02")).software_date == "2026-05-02"
    assert point_options(row(DSV4, None)).software_date is None
    # a date in the URL wins over the row's
    assert point_options(row(DSV4 + "&software_date=2026-06-01", "2026-05-02")).software_date == (
        "2026-06-01"
    )
    params = {p.name: p for p in FREE_PARAMS if p.name.startswith("software.")}
    dated, undated = point_owner(row(DSV4, "2026-05-02")), point_owner(row(DSV4, None))
    untuned = point_owner(row(DSV4 + "&kernels=untuned", "2026-05-02"))
    nvidia = point_owner(row("twin:B200/DeepSeek-R1?tp=8&framework=sglang", "2026-05-02"))
    assert params["software.AMD.per_year"].touches(dated)
    assert params["software.AMD.young"].touches(dated)
    assert not params["software.AMD.per_year"].touches(undated)
    assert not params["software.AMD.young"].touches(untuned)  # informs the untuned scale only
    assert not params["software.AMD.per_year"].touches(nvidia)
    assert params["software.NVIDIA.young_days"].touches(nvidia)


def test_twin_validate_reports_runs_of_a_young_port_as_a_regime() -> None:
    from scoville.twin.calibration import YOUNG_PORT, regimes

    young = row(DSV4, "2026-05-02")
    old = row("twin:MI355X/DeepSeek-R1?tp=8&precision=fp4&framework=sglang", "2026-05-02")
    late = row(DSV4, "2026-08-01")
    assert YOUNG_PORT in regimes(young, point_options(young).config())
    assert YOUNG_PORT not in regimes(old, point_options(old).config())
    assert YOUNG_PORT not in regimes(late, point_options(late).config())
    assert YOUNG_PORT not in regimes(row(DSV4, None), point_options(row(DSV4, None)).config())


def test_the_run_manifest_says_the_software_date_and_what_it_did() -> None:
    from scoville.twin.target import twin_info

    dated = TwinOptions.parse_url(DSV4 + "&software_date=2026-05-02").config()
    assert "AMD's software of 2026-05-02" in twin_info(dated)["software"]
    assert twin_info(TwinOptions.parse_url(DSV4).config())["software"] == ""
