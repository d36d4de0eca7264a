"""The software's date as an input to the twin: how fast a vendor's serving software runs a
deployment on a given day against the profile book's fitted factors (its trend, over a young
port's slowdown counted from the model's release). The trend's fitted values live in the
profile book (`profiles.SoftwareTrend`, `profiles.yaml` `software:`); `deploy` applies the
speed (`Efficiency.at_speed`).
"""

from __future__ import annotations

import math
from datetime import date

from scoville.errors import TargetError
from scoville.twin.profiles import ProfileBook


def _day(text: str) -> int:
    return date.fromisoformat(text).toordinal()


def port_age_days(when: str, released: str) -> int:
    """Days from a model's release to the day `when` (both YYYY-MM-DD): how old the engines'
    ports of it are then."""
    return _day(when) - _day(released)


def young_port(released: str | None, kernels: str) -> bool:
    """Whether a deployment's software speed carries a young port's slowdown: its model's
    release date is known and the deployment declares no kernel path (`kernels=untuned` states
    the same immaturity on its own scale)."""
    return released is not None and kernels != "untuned"


def software_speed(
    book: ProfileBook, vendor: str, when: str | None, released: str | None, young: bool = True
) -> tuple[float, str]:
    """How fast `vendor`'s serving software runs a deployment on the day `when` (YYYY-MM-DD)
    against the fitted factors, with a note saying why (empty when `when` is None: the fitted
    factors as they are, a mature port). The speed is the vendor's trend, `per_year` to the
    power of the years from `ref` to `when` (held at `first` and `last`: no extrapolation), over
    a young port's slowdown, 1 + `young` x exp(-age / `young_days`), the age counted in days
    from the model's `released` date (no slowdown where the model's date is unknown, or `young`
    is False: a deployment that declares its kernel path)."""
    trend = book.software.get(vendor)
    if when is None or trend is None:
        return 1.0, ""
    if released is not None and when < released:
        raise TargetError(
            f"Software date {when} is before the model's release ({released}): no engine could "
            "run it then."
        )
    day = min(max(_day(when), _day(trend.first)), _day(trend.last))
    speed = trend.per_year ** ((day - _day(trend.ref)) / 365.25)
    note = f"{vendor}'s software of {when}: x{speed:.2f} the speed of its {trend.ref} factors"
    if day != _day(when):
        edge = "first" if day == _day(trend.first) else "last"
        note += f" (the trend held at {date.fromordinal(day)}, its {edge} calibrated date)"
    if young and released is not None:
        age = port_age_days(when, released)
        slow = 1.0 + trend.young * math.exp(-age / trend.young_days)
        speed /= slow
        if slow > 1.005:
            note += f", a port {age} days old at x{1 / slow:.2f}"
    return speed, note
