"""Routed experts whose popularity is not uniform (`expert_concentration`): how many distinct
experts a batch touches, and which steps read fewer of them.

Golden numbers are worked out by hand in the comments (never by calling the formula under test).
"""

from __future__ import annotations

import pytest

from scoville.twin.catalogue import load_catalogue
from scoville.twin.costmodel import Efficiency, Parallel, StepBatch, StepModel
from scoville.twin.shape import expected_distinct_experts, pick_chances

CAT = load_catalogue()


def test_uniform_routing_is_the_zero_concentration() -> None:
    # 4 experts, top-2, 2 tokens: 4 x (1 - (1 - 2/4)^2) = 4 x 0.75 = 3
    assert expected_distinct_experts(4, 2, 2, 0.0) == pytest.approx(3.0)


def test_popular_experts_make_a_batch_touch_fewer() -> None:
    # rank^-1 over 4 experts: weights 1, 1/2, 1/3, 1/4 (sum 25/12), shares 0.48, 0.24, 0.16,
    # 0.12; a top-2 token picks each with 2 x its share: 0.96, 0.48, 0.32, 0.24 (sum 2).
    # 2 tokens: (1 - 0.04^2) + (1 - 0.52^2) + (1 - 0.68^2) + (1 - 0.76^2)
    # = 0.9984 + 0.7296 + 0.5376 + 0.4224 = 2.688, against 3 when uniform
    assert pick_chances(4, 2, 1.0) == pytest.approx((0.96, 0.48, 0.32, 0.24))
    assert expected_distinct_experts(4, 2, 2, 1.0) == pytest.approx(2.688)


def test_an_expert_no_token_can_miss_is_held_at_one_and_the_rest_share_what_is_left() -> None:
    # rank^-3 over 4 experts: weights 1, 1/8, 1/27, 1/64 (sum 1.1776620); the first's 2 x
    # 0.84914 = 1.698 > 1, so it is in every token's picks; the other pick is shared over
    # 1/8, 1/27, 1/64 (sum 0.1776620): 0.703583, 0.208469, 0.087948
    chances = pick_chances(4, 2, 3.0)
    assert chances == pytest.approx((1.0, 0.703583, 0.208469, 0.087948), rel=1e-5)
    # one token touches exactly its k experts, however popular they are
    assert expected_distinct_experts(4, 2, 1, 3.0) == pytest.approx(2.0)
    assert expected_distinct_experts(256, 8, 1, 0.9) == pytest.approx(8.0)


def _expert_bytes(conc: float, n: int, **par: object) -> float:
    eff = Efficiency(allreduce_latency_s=8e-6, expert_concentration=conc)
    sm = StepModel(CAT.get_hardware("H200"), CAT.get_model("DeepSeek-R1"), Parallel(**par), eff)  # type: ignore[arg-type]
    return sm.cost(StepBatch(n_decode=n, decode_ctx_tokens=n * 2048, n_sampled=n)).hbm_bytes


def test_only_tp_sliced_steps_read_fewer_experts() -> None:
    # TP8: a batch of 16 reads fewer bytes once routing is concentrated; one token reads the
    # same k experts either way
    assert _expert_bytes(0.9, 16, tp=8) < _expert_bytes(0.0, 16, tp=8)
    assert _expert_bytes(0.9, 1, tp=8) == pytest.approx(_expert_bytes(0.0, 1, tp=8))
    # expert-parallel: the busiest rank's share is the declared expert_skew's, not this
    assert _expert_bytes(0.9, 16, tp=8, ep=8) == pytest.approx(_expert_bytes(0.0, 16, tp=8, ep=8))


def test_a_deployment_may_declare_its_traffics_routing() -> None:
    from scoville.errors import TargetError
    from scoville.twin.profiles import load_profiles
    from scoville.twin.target import parse_twin_url

    url = "twin:H200/DeepSeek-R1?tp=8"
    b = StepBatch(n_decode=32, decode_ctx_tokens=32 * 2048, n_sampled=32)
    fitted = parse_twin_url(url).step_model()
    assert fitted.eff.expert_concentration == load_profiles().expert_concentration
    uniform = parse_twin_url(url + "&expert_concentration=0").step_model()
    popular = parse_twin_url(url + "&expert_concentration=1.5").step_model()
    # more popular experts, fewer distinct ones read: each step no slower than the one before
    assert popular.cost(b).hbm_bytes < fitted.cost(b).hbm_bytes < uniform.cost(b).hbm_bytes
    with pytest.raises(TargetError, match="expert_concentration"):
        parse_twin_url(url + "&expert_concentration=-1")
