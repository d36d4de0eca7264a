"""Power sample series: what the samplers record and what window integration reads.

A `PowerReading` is one device's value at one read; the background sampler stamps it with the
run's monotonic clock and appends it to that device's `DeviceSeries`. Nothing here is derived.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# What a reading covers. Measured boundaries name the physical envelope; the spec's
# `power_boundary` vocabulary ("board-measured", "node-wall", ...) is reached via SPEC_BOUNDARY.
BOUNDARIES = (
    "accelerator-board",  # one GPU board (NVML, amdsmi)
    "cpu-package",  # one CPU socket package (RAPL package zone)
    "cpu-dram",  # one socket's DRAM (RAPL dram zone)
    "node-wall",  # the whole node at the PSU input (IPMI DCMI, Redfish)
    "declared",  # nothing measured: a number somebody wrote down
)
SPEC_BOUNDARY = {
    "accelerator-board": "board-measured",
    "node-wall": "node-wall",
    "cpu-package": "cpu-package-measured",
    "cpu-dram": "cpu-dram-measured",
    "declared": "declared",
}


@dataclass(frozen=True, slots=True)
class PowerReading:
    """One device at one read. `power_w` is the instantaneous (or short-average) power;
    `energy_j` the raw value of a cumulative energy counter (may wrap, see
    `DeviceInfo.counter_range_j`). Either may be None when the source lacks it."""

    device: str
    power_w: float | None = None
    energy_j: float | None = None


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    """A device a source reads: its id, boundary, and counter wrap range (J) when known."""

    device: str
    source: str  # "nvml" | "amdsmi" | "rapl" | "ipmi" | "redfish" | "declared"
    boundary: str  # one of BOUNDARIES
    counter_range_j: float | None = None  # energy counter wraps to 0 after this many joules
    power_is_average_s: float = 0.0  # the source reports a running mean over this many seconds


@dataclass(slots=True)
class DeviceSeries:
    """All samples of one device, in timestamp order (monotonic ns on the run's clock)."""

    info: DeviceInfo
    t_ns: list[int] = field(default_factory=list)
    power_w: list[float | None] = field(default_factory=list)
    energy_j: list[float | None] = field(default_factory=list)

    def append(self, t_ns: int, reading: PowerReading) -> None:
        self.t_ns.append(t_ns)
        self.power_w.append(reading.power_w)
        self.energy_j.append(reading.energy_j)

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "device": self.info.device,
            "source": self.info.source,
            "boundary": self.info.boundary,
            "counter_range_j": self.info.counter_range_j,
            "power_is_average_s": self.info.power_is_average_s,
            "t_ns": list(self.t_ns),
            "power_w": list(self.power_w),
            "energy_j": list(self.energy_j),
        }

    @classmethod
    def from_json_dict(cls, d: dict[str, Any]) -> DeviceSeries:
        info = DeviceInfo(
            device=str(d["device"]),
            source=str(d["source"]),
            boundary=str(d["boundary"]),
            counter_range_j=d.get("counter_range_j"),
            power_is_average_s=float(d.get("power_is_average_s", 0.0)),
        )
        return cls(
            info=info,
            t_ns=[int(t) for t in d["t_ns"]],
            power_w=list(d.get("power_w") or [None] * len(d["t_ns"])),
            energy_j=list(d.get("energy_j") or [None] * len(d["t_ns"])),
        )


@dataclass(slots=True)
class PowerSeries:
    """Every device's series from one run, plus the sampling rate that was asked for."""

    devices: list[DeviceSeries] = field(default_factory=list)
    rate_hz: float = 0.0
    errors: list[str] = field(default_factory=list)  # read failures, as text, in order

    def by_boundary(self, boundary: str) -> list[DeviceSeries]:
        return [d for d in self.devices if d.info.boundary == boundary]

    def boundaries(self) -> list[str]:
        return sorted({d.info.boundary for d in self.devices})

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "rate_hz": self.rate_hz,
            "devices": [d.to_json_dict() for d in self.devices],
            "errors": list(self.errors),
        }

    @classmethod
    def from_json_dict(cls, d: dict[str, Any]) -> PowerSeries:
        return cls(
            devices=[DeviceSeries.from_json_dict(x) for x in d.get("devices", [])],
            rate_hz=float(d.get("rate_hz", 0.0)),
            errors=[str(e) for e in d.get("errors", [])],
        )
