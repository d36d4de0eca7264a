"""Arrival processes for open-loop load: Poisson and gamma-bursty send times, no I/O.

Inter-arrival gaps are gamma distributed with shape k (`burstiness`) and mean 1/rate:
k = 1 is a Poisson process, k < 1 is burstier, k > 1 more regular. Times are integer ns
offsets from the start of the point.
"""

from __future__ import annotations

import numpy as np


def arrival_offsets_ns(n: int, rate_per_s: float, burstiness: float, seed: int) -> list[int]:
    """Send-time offsets (ns, non-decreasing, first at 0) of n requests at `rate_per_s`."""
    if n <= 0:
        return []
    if rate_per_s <= 0 or burstiness <= 0:
        raise ValueError("rate and burstiness must be > 0")
    rng = np.random.default_rng(seed)
    scale_s = 1.0 / (rate_per_s * burstiness)  # gamma mean = shape * scale = 1/rate
    gaps_s = rng.gamma(shape=burstiness, scale=scale_s, size=n - 1)
    offsets_s = np.concatenate([[0.0], np.cumsum(gaps_s)])
    return [round(float(x) * 1e9) for x in offsets_s]
