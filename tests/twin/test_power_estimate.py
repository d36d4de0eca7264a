"""The twin's power estimate: the active fraction of its steps and the chip draw built on it
(values worked out by hand in the comments), and the fraction the fast executor records."""

from __future__ import annotations

import pytest

from scoville.analysis.boundaries import twin_draw_w
from scoville.spec.model import BenchmarkSpec
from scoville.twin.options import TwinOptions
from scoville.twin.power import active_fraction
from scoville.twin.simulate import run_plans


def test_one_step_on_one_replica() -> None:
    # One 10 ms decode step on an 8-GPU replica: 3 ms compute-bound, 5 ms memory-bound,
    # 1 ms all-reduce, 1 ms scheduling. Active = (3 + 5) / 10 = 0.8.
    u = active_fraction([(0.003 + 0.005, 8)], 0.010)
    assert u == pytest.approx(0.8)
    # H200, 700 W TDP: idle floor 20 % = 140 W; draw = 140 + (700 - 140) x 0.8 = 588 W.
    draw_w, idle_w = twin_draw_w(700.0, u, None)
    assert idle_w == pytest.approx(140.0) and draw_w == pytest.approx(588.0)
    # A stated idle floor of 100 W: 100 + 600 x 0.8 = 580 W.
    assert twin_draw_w(700.0, u, 100.0)[0] == pytest.approx(580.0)


def test_replicas_weigh_by_their_accelerators() -> None:
    # Over 1 s: an 8-GPU replica active 0.5 s and a 2-GPU replica active 1.0 s:
    # (0.5 x 8 + 1.0 x 2) / (1 s x 10 GPUs) = 6 / 10 = 0.6.
    assert active_fraction([(0.5, 8), (1.0, 2)], 1.0) == pytest.approx(0.6)
    assert active_fraction([], 1.0) == 0.0
    assert active_fraction([(2.0, 1)], 1.0) == 1.0  # clamped, never above 1


def test_the_fast_executor_records_a_busier_chip_at_higher_concurrency() -> None:
    opts = TwinOptions.build(hardware="H200", model="gpt-oss-120b", tp=1, executor="fast")
    spec = BenchmarkSpec.model_validate(
        {"shape": {"isl_tokens": 256, "osl_tokens": 64},
         "load": {"concurrency": [1, 32], "requests_per_point": 32, "warmup_requests": 0}}
    )  # fmt: skip
    low, high = run_plans(opts.config(), spec)
    u1, u32 = low.extras["twin_active_fraction"], high.extras["twin_active_fraction"]
    assert 0 < u1 < u32 <= 1
    assert low.extras["twin_tdp_w"] == 700.0
