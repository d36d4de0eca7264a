"""Change points in a nightly series (a metric over stored runs), by PELT from `ruptures`.

The series is scaled by a robust estimate of its run-to-run noise (the median absolute
difference of neighbours / (0.6745 * sqrt 2), the MAD of Gaussian differences), then PELT with
a least-squares cost and a BIC-like penalty `3 ln n` splits it where a shift in level pays for
the penalty. A change point is the index of the first run of a new level.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

MIN_RUNS = 4  # fewer runs than this cannot show a level before and after a change


def noise_scale(values: Sequence[float]) -> float:
    """Run-to-run noise sigma from neighbour differences (robust to the level shifts themselves).

    For i.i.d. Gaussian noise, d_i = x_{i+1} - x_i has sd sigma * sqrt 2 and
    median |d_i| = 0.6745 * sigma * sqrt 2. Falls back to a tiny fraction of the level (and then
    to 1) when the series is exactly flat between neighbours.
    """
    arr = np.asarray(values, dtype=np.float64)
    diffs = np.abs(np.diff(arr))
    sigma = float(np.median(diffs)) / (0.6745 * math.sqrt(2.0)) if diffs.size else 0.0
    if sigma > 0:
        return sigma
    level = float(np.median(np.abs(arr))) if arr.size else 0.0
    return level * 1e-3 if level > 0 else 1.0


def change_points(
    values: Sequence[float], penalty: float | None = None, min_size: int = 2
) -> list[int]:
    """Indices where a new level starts (ascending); [] for short or level series.

    `penalty` is in units of the scaled series' squared deviations; default 3 ln n.
    `min_size` is the fewest runs a level may last."""
    import ruptures

    n = len(values)
    if n < max(MIN_RUNS, 2 * min_size):
        return []
    arr = np.asarray(values, dtype=np.float64)
    signal = ((arr - float(np.median(arr))) / noise_scale(values)).reshape(-1, 1)
    pen = penalty if penalty is not None else 3.0 * math.log(n)
    algo = ruptures.Pelt(model="l2", min_size=min_size, jump=1).fit(signal)
    ends = algo.predict(pen=pen)
    return [int(e) for e in ends if e < n]
