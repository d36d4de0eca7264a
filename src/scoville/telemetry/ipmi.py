"""Node wall power through IPMI DCMI: runs `ipmitool dcmi power reading` and parses its text.

The BMC's reading covers the whole node at the PSU input (boundary `node-wall`). For a remote
BMC pass e.g. `command=("ipmitool", "-I", "lanplus", "-H", host, "-U", user, "-E")`: `-E` makes
ipmitool read the password from the IPMI_PASSWORD environment variable, so it is never stored.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass

from scoville.telemetry.series import DeviceInfo, PowerReading
from scoville.telemetry.sources import SourceUnavailable

_FIELD = re.compile(r"^\s*(?P<key>[^:]+?)\s*:\s*(?P<value>.*?)\s*$")
_WATTS = re.compile(r"^(?P<w>\d+(?:\.\d+)?)\s*Watts?$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class DcmiReading:
    """The fields of one `dcmi power reading` (W); `active` is False when the BMC says the
    reading state is deactivated (its numbers are then meaningless)."""

    instantaneous_w: float | None
    minimum_w: float | None
    maximum_w: float | None
    average_w: float | None
    sampling_period_s: float | None
    active: bool


def _watts(value: str | None) -> float | None:
    if value is None:
        return None
    m = _WATTS.match(value)
    return float(m.group("w")) if m else None


def parse_dcmi_power_reading(text: str) -> DcmiReading:
    """Parse ipmitool's output. Raises ValueError when no instantaneous reading is present."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        m = _FIELD.match(line)
        if m:
            fields[m.group("key").lower()] = m.group("value")
    inst = _watts(fields.get("instantaneous power reading"))
    if inst is None:
        raise ValueError(f"no 'Instantaneous power reading' in ipmitool output: {text[:200]!r}")
    period = re.match(r"^0*(\d+)\s*Seconds?", fields.get("sampling period", ""), re.IGNORECASE)
    state = fields.get("power reading state is", "activated").lower()
    return DcmiReading(
        instantaneous_w=inst,
        minimum_w=_watts(fields.get("minimum during sampling period")),
        maximum_w=_watts(fields.get("maximum during sampling period")),
        average_w=_watts(fields.get("average power reading over sample period")),
        sampling_period_s=float(period.group(1)) if period else None,
        active=not state.startswith("deactivated"),
    )


class IpmiDcmiSource:
    """One node-wall device read through ipmitool (or any command printing the same text)."""

    name = "ipmi"
    max_rate_hz = 1.0  # BMCs refresh their reading about once a second

    def __init__(
        self, command: tuple[str, ...] = ("ipmitool",), node: str = "node0", timeout_s: float = 5.0
    ) -> None:
        if shutil.which(command[0]) is None:
            raise SourceUnavailable(f"{command[0]} is not on PATH (apt-get install ipmitool)")
        self._argv = [*command, "dcmi", "power", "reading"]
        self._timeout_s = timeout_s
        self._info = DeviceInfo(device=f"{node}:dcmi", source=self.name, boundary="node-wall")
        try:
            self.read()
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            raise SourceUnavailable(f"`{' '.join(self._argv)}` gave no reading: {exc}") from exc

    def devices(self) -> list[DeviceInfo]:
        return [self._info]

    def read(self) -> list[PowerReading]:
        proc = subprocess.run(
            self._argv, capture_output=True, text=True, timeout=self._timeout_s, check=False
        )
        if proc.returncode != 0:
            raise OSError(f"ipmitool exited {proc.returncode}: {proc.stderr.strip()[:200]}")
        reading = parse_dcmi_power_reading(proc.stdout)
        power_w = reading.instantaneous_w if reading.active else None
        return [PowerReading(self._info.device, power_w=power_w)]

    def close(self) -> None:
        pass
