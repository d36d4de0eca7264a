"""Which of the twin's fitted factors a deployment's prediction rests on that no dev row of the
calibration table informs.

`twin fit` moves a free parameter only where dev rows depend on it (and a kernel-stack factor
only where rows of as many models as it needs do, `free_params.fittable`). A parameter no dev row
informs keeps the book's value, a prior that no published measurement set. A prediction that
rests on one (ATOM's expert-parallel MoE path, a format's expert kernels on a family no dev row
runs) is said so, in `scoville simulate`, the run manifest, and `twin validate`'s rows and
regimes.
"""

from __future__ import annotations

from functools import cache

from scoville.twin.calibration import load_points
from scoville.twin.cluster import TwinConfig
from scoville.twin.free_params import FREE_PARAMS, fittable, owner_of, point_owner
from scoville.twin.profiles import load_profiles

UNCALIBRATED = "rests on a factor no dev row informs"  # the regime of such a row


@cache
def _informed() -> frozenset[str]:
    """The free parameters that dev rows of the shipped calibration table inform (the fit's
    own test, `fit.fittable`, over the dev rows that depend on each)."""
    book = load_profiles()
    dev = [point_owner(p, book) for p in load_points() if p.split == "dev"]
    return frozenset(
        prm.name for prm in FREE_PARAMS if fittable(prm, [o for o in dev if prm.touches(o)])
    )


def uncalibrated(cfg: TwinConfig) -> tuple[str, ...]:
    """One line per free parameter that `cfg`'s prediction depends on and that no dev row
    informs (so `twin fit` has never moved it): its name and the value it holds."""
    book = load_profiles()
    me = owner_of(cfg, book)
    informed = _informed()
    return tuple(
        f"{prm.name} = {prm.get(book):g}: no dev row of the calibration table informs it, so "
        "this prediction rests on the book's prior for it"
        for prm in FREE_PARAMS
        if prm.touches(me) and prm.name not in informed
    )
