"""`scoville power probe` as a library call: find the power sources usable here, sample them
briefly, and report each device's mean power over the sampled window.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from scoville.telemetry.integrate import integrate_power
from scoville.telemetry.sampler import PowerSampler
from scoville.telemetry.sources import SourceUnavailable, open_source, probe_sources


@dataclass(frozen=True, slots=True)
class ProbedDevice:
    """One device's reading over the probe: mean power (W; None without an energy figure),
    the integration method and the validity flags."""

    boundary: str
    device: str
    source: str
    n_samples: int
    mean_w: float | None
    method: str
    flags: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PowerProbe:
    """Sources that could not be opened (name -> why) and every device sampled."""

    unavailable: dict[str, str] = field(default_factory=dict)
    devices: tuple[ProbedDevice, ...] = ()


def probe_power(seconds: float, rate_hz: float, redfish_url: str | None = None) -> PowerProbe:
    """Sample every usable source (and a Redfish BMC at `redfish_url`) for `seconds`."""
    sources, why_not = probe_sources()
    if redfish_url:
        try:
            sources.append(open_source("redfish", base_url=redfish_url))
        except SourceUnavailable as exc:
            why_not["redfish"] = str(exc)
    if not sources:
        return PowerProbe(why_not)
    sampler = PowerSampler(sources, rate_hz)
    sampler.start()
    time.sleep(seconds)
    series = sampler.stop()
    t0 = min(d.t_ns[0] for d in series.devices if d.t_ns)
    t1 = max(d.t_ns[-1] for d in series.devices if d.t_ns)
    out = []
    for boundary, w in integrate_power(series, t0, t1).items():
        for dev, ds in zip(w.devices, series.by_boundary(boundary), strict=True):
            mean = dev.energy_j / w.window_s if dev.energy_j is not None else None
            out.append(
                ProbedDevice(
                    boundary,
                    dev.device,
                    ds.info.source,
                    len(ds.t_ns),
                    mean,
                    dev.method,
                    tuple(dev.flags),
                )
            )
    return PowerProbe(why_not, tuple(out))
