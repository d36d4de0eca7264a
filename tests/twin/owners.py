"""Which free parameters of `twin fit` a twin URL's calibration row would inform."""

from __future__ import annotations

from scoville.twin.calibration import CalPoint, Published
from scoville.twin.free_params import FREE_PARAMS, point_owner


def fit_reads(param: str, url: str) -> bool:
    """Whether `twin fit` reads the free parameter `param` on a dev row of this URL."""
    prm = next(p for p in FREE_PARAMS if p.name == param)
    pub = Published(tput_per_gpu=1.0, tpot_ms=1.0)
    point = CalPoint(
        id="x", url=url, isl_tokens=1, osl_tokens=1, published=pub, split="dev", source="s"
    )
    return prm.touches(point_owner(point))
