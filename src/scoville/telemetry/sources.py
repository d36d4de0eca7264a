"""The power-source interface and its registry: one small protocol every sampler backend meets.

A source lists the devices it reads (each naming its boundary) and returns one `PowerReading`
per device per `read()`. Reads are synchronous and run on the sampler's own thread, never on the
client's event loop. `open_source(kind, **options)` builds one from the registry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from scoville.telemetry.series import DeviceInfo, PowerReading


class SourceUnavailable(Exception):
    """The source cannot be used on this machine (library, driver, file or BMC missing)."""


@runtime_checkable
class PowerSource(Protocol):
    """A backend the background sampler polls."""

    name: str

    def devices(self) -> list[DeviceInfo]: ...

    def read(self) -> list[PowerReading]: ...

    def close(self) -> None: ...


class DeclaredSource:
    """No measurement: every device draws the declared power all the time.

    Used when nothing can be measured, so measured and declared figures still sit side by
    side (flagged `boundary="declared"`)."""

    name = "declared"

    def __init__(self, power_w_per_device: float, n_devices: int = 1) -> None:
        if power_w_per_device <= 0 or n_devices < 1:
            raise ValueError("declared power must be > 0 W on at least one device")
        self._power_w = float(power_w_per_device)
        self._infos = [
            DeviceInfo(device=f"declared{i}", source="declared", boundary="declared")
            for i in range(n_devices)
        ]

    def devices(self) -> list[DeviceInfo]:
        return list(self._infos)

    def read(self) -> list[PowerReading]:
        return [PowerReading(d.device, power_w=self._power_w) for d in self._infos]

    def close(self) -> None:
        pass


def _open_nvml(**kw: Any) -> PowerSource:
    from scoville.telemetry.nvml import NvmlSource

    return NvmlSource(**kw)


def _open_amdsmi(**kw: Any) -> PowerSource:
    from scoville.telemetry.amd import AmdSmiSource

    return AmdSmiSource(**kw)


def _open_rapl(**kw: Any) -> PowerSource:
    from scoville.telemetry.rapl import RaplSource

    return RaplSource(**kw)


def _open_ipmi(**kw: Any) -> PowerSource:
    from scoville.telemetry.ipmi import IpmiDcmiSource

    return IpmiDcmiSource(**kw)


def _open_redfish(**kw: Any) -> PowerSource:
    from scoville.telemetry.redfish import RedfishSource

    return RedfishSource(**kw)


def _open_declared(**kw: Any) -> PowerSource:
    return DeclaredSource(**kw)


SOURCES: dict[str, Callable[..., PowerSource]] = {
    "nvml": _open_nvml,
    "amdsmi": _open_amdsmi,
    "rapl": _open_rapl,
    "ipmi": _open_ipmi,
    "redfish": _open_redfish,
    "declared": _open_declared,
}

# What `probe_sources` tries without options (Redfish needs a URL, declared needs a number).
AUTO_SOURCES = ("nvml", "amdsmi", "rapl", "ipmi")


def open_source(kind: str, **options: Any) -> PowerSource:
    """Open one source by registry name. Raises `SourceUnavailable` (or KeyError for a name
    that is not in `SOURCES`)."""
    if kind not in SOURCES:
        raise KeyError(f"unknown power source {kind!r}; known: {', '.join(SOURCES)}")
    return SOURCES[kind](**options)


def probe_sources(
    kinds: tuple[str, ...] = AUTO_SOURCES,
) -> tuple[list[PowerSource], dict[str, str]]:
    """Open every source that works here. Returns the open sources and, for the others,
    why not (name -> reason)."""
    opened: list[PowerSource] = []
    reasons: dict[str, str] = {}
    for kind in kinds:
        try:
            src = open_source(kind)
        except SourceUnavailable as exc:
            reasons[kind] = str(exc)
            continue
        if not src.devices():
            src.close()
            reasons[kind] = "no devices"
            continue
        opened.append(src)
    return opened, reasons
