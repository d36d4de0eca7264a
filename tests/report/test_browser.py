"""The report in headless Chromium (DevTools protocol): the charts render with the right
number of points and no console error or network request; a tooltip gives an invalid point's
reason; a legend click fades the other configuration. Skipped where Chromium is absent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chromium_cdp import CHROMIUM, Page, open_page
from report_fakes import sweep_a, write_run

from scoville.bundle.run import load_run
from scoville.report.html import render, report_runs

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed (Debian package `chromium`)"
)
DRAWN = "document.body && document.body.getAttribute('data-charts-drawn')"
TWIN = "H200 (scoville-twin, MXFP4)"
SYNTH = "A (vllm, fp8)"


def _twin_run(out: Path) -> Path:
    """A real run on the twin (with records, so the frontier has a band)."""
    from scoville.pipeline import run_benchmark
    from scoville.spec.model import BenchmarkSpec

    spec = BenchmarkSpec.model_validate(
        {
            "target": {"url": "twin:H200/gpt-oss-120b?tp=8", "tokenizer": "tiktoken:o200k_base"},
            "shape": {"isl_tokens": 1024, "osl_tokens": 256, "range_ratio": 0.5},
            "load": {"concurrency": [1, 4, 16, 64], "requests_per_point": 64, "warmup_requests": 0},
        }
    )
    return run_benchmark(spec, out).run_dir


@pytest.fixture(scope="module")
def page_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("browser")
    runs = [_twin_run(tmp / "runs"), write_run(tmp / "synthetic", sweep_a(), "A")]
    path = tmp / "report.html"
    path.write_text(render(report_runs([load_run(r) for r in runs]), "browser check"))
    return path


async def _centre(page: Page, selector: str, text: str = "") -> tuple[float, float]:
    js = (
        f"(() => {{ const els = [...document.querySelectorAll({json.dumps(selector)})]"
        f".filter(e => e.textContent.includes({json.dumps(text)})); "
        "els[0].scrollIntoView({block: 'center'}); const r = els[0].getBoundingClientRect(); "
        "return [r.x + r.width / 2, r.y + r.height / 2]; })()"
    )
    x, y = await page.evaluate(js)
    return float(x), float(y)


async def test_charts_render_every_point_without_errors(page_path: Path) -> None:
    async with open_page(page_path) as page:
        drawn = json.loads(await page.wait_for(DRAWN))
        assert (
            json.loads(await page.evaluate("document.body.getAttribute('data-chart-errors')")) == []
        )
        assert page.errors == [] and page.requests == []
        # twin 4 points + synthetic 4 (one invalid); latency: the twin's 4 points x 4
        # percentiles, plus the synthetic rows' (TTFT p50/p90/p99, TPOT and E2E p50 only)
        assert drawn == {
            "throughput-vs-interactivity": 8,
            "throughput-vs-e2e": 8,
            "latency-ttft": 28,
            "latency-tpot": 20,
            "latency-itl": 16,
            "latency-e2e": 20,
        }
        band = "[data-chart='throughput-vs-interactivity'] g.band_marks > path"
        assert await page.evaluate(f"document.querySelectorAll({json.dumps(band)}).length") == 1
        await page.screenshot(page_path.with_suffix(".png"))


async def test_tooltip_gives_an_invalid_points_reason(page_path: Path) -> None:
    async with open_page(page_path) as page:
        await page.wait_for(DRAWN)
        x, y = await _centre(
            page, "[data-chart='throughput-vs-interactivity'] g.invalid_marks > path"
        )
        await page.mouse("mouseMoved", x, y)
        tip = await page.wait_for(
            "(e => e && e.textContent.includes('loop lag') ? e.textContent : null)"
            "(document.getElementById('vg-tooltip-element'))",
            10,
        )
        assert "invalid" in tip and "concurrency 16" in tip and "40" in tip


async def test_legend_click_shows_one_configuration(page_path: Path) -> None:
    chart = "[data-chart='throughput-vs-interactivity']"
    faded = (
        f'[...document.querySelectorAll("{chart} g.points_marks > path")]'
        ".filter(p => Number(p.getAttribute('opacity') ?? 1) < 0.5).length"
    )
    async with open_page(page_path) as page:
        await page.wait_for(DRAWN)
        assert await page.evaluate(faded) == 0
        x, y = await _centre(page, f"{chart} g.role-legend-label text", SYNTH)
        await page.click(x, y)
        await page.wait_for(f"({faded}) === 4 ? true : null", 10)  # the twin's four fade
