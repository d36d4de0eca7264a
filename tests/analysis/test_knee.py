"""The knee on constructed sweeps: throughput saturates at 16 while latency climbs."""

from __future__ import annotations

from scoville.analysis.knee import knee_of, knees

LEVELS = (1, 2, 4, 8, 16, 32, 64)


def sweep(tput: list[float], e2e: list[float], system: str = "X") -> list[dict[str, object]]:
    return [
        {"point_id": f"c{c}", "conc": c, "tput_per_gpu": y, "median_e2e": e, "system": system}
        for c, y, e in zip(LEVELS, tput, e2e, strict=True)
    ]


SATURATING = sweep([100, 200, 400, 790, 1500, 1600, 1620], [1.0, 1.0, 1.01, 1.02, 1.06, 2.0, 3.9])


def test_knee_is_the_last_level_before_throughput_flattens_and_latency_climbs() -> None:
    k = knee_of(SATURATING)
    assert (k.point_id, k.level, k.throughput, k.latency) == ("c16", 16, 1500, 1.06)
    # 16 -> 32: throughput +6.7 % for +100 % load (efficiency 0.067), latency +89 %.
    assert k.efficiency_after is not None and abs(k.efficiency_after - 0.0667) < 1e-3
    assert k.latency_rise_after is not None and abs(k.latency_rise_after - 0.8868) < 1e-3


def test_a_sweep_still_scaling_has_no_knee() -> None:
    k = knee_of(sweep([100, 200, 400, 800, 1600, 3200, 6300], [1.0] * 6 + [1.05]))
    assert k.point_id is None and k.n_levels == 7


def test_flat_throughput_without_latency_climb_is_not_a_knee() -> None:
    # A client-bound sweep: throughput flat, latency flat (the load never reached the server).
    k = knee_of(sweep([100, 110, 115, 118, 119, 120, 120], [1.0] * 7))
    assert k.point_id is None


def test_invalid_points_are_left_out_and_each_configuration_gets_its_knee() -> None:
    rows = [dict(r) for r in SATURATING] + sweep(
        [100, 200, 210, 215, 216, 216, 216], [1.0, 1.0, 1.9, 3.7, 7.0, 14.0, 28.0], "Y"
    )
    rows[4]["valid"] = False  # X's c16 is invalid: 8 -> 32 still scales (efficiency 0.34)
    got = {k.group.system: k.point_id for k in knees(rows)}
    assert got == {"X": "c32", "Y": "c2"}
