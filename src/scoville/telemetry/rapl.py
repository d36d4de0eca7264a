"""Linux RAPL energy counters through powercap sysfs: CPU package and DRAM zones.

Reads `<root>/intel-rapl:N[/intel-rapl:N:M]/{name,energy_uj,max_energy_range_uj}` (AMD CPUs
use the same names). Counters wrap at `max_energy_range_uj`; integration unwraps them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scoville.telemetry.series import DeviceInfo, PowerReading
from scoville.telemetry.sources import SourceUnavailable

POWERCAP_ROOT = Path("/sys/class/powercap")


@dataclass(frozen=True, slots=True)
class _Zone:
    info: DeviceInfo
    energy_path: Path


def _boundary(zone_name: str) -> str | None:
    if zone_name.startswith("package"):
        return "cpu-package"
    if zone_name == "dram":
        return "cpu-dram"
    return None  # core/uncore/psys: inside (or around) a package; would double count


def _zones(root: Path) -> list[_Zone]:
    zones: list[_Zone] = []
    for zdir in sorted(root.glob("intel-rapl:*")) + sorted(root.glob("intel-rapl:*/intel-rapl:*")):
        name_file, energy_file = zdir / "name", zdir / "energy_uj"
        if not (name_file.is_file() and energy_file.is_file()):
            continue
        zone_name = name_file.read_text().strip()
        boundary = _boundary(zone_name)
        if boundary is None:
            continue
        range_file = zdir / "max_energy_range_uj"
        range_j = int(range_file.read_text()) / 1e6 if range_file.is_file() else None
        info = DeviceInfo(
            device=f"{zdir.name}:{zone_name}",
            source="rapl",
            boundary=boundary,
            counter_range_j=range_j,
        )
        zones.append(_Zone(info, energy_file))
    return zones


class RaplSource:
    """Package and DRAM zones under `root` (default `/sys/class/powercap`)."""

    name = "rapl"

    def __init__(self, root: Path | str = POWERCAP_ROOT) -> None:
        root = Path(root)
        if not root.is_dir():
            raise SourceUnavailable(f"{root} does not exist (no powercap driver)")
        self._zones = _zones(root)
        if not self._zones:
            raise SourceUnavailable(f"no RAPL package/dram zones under {root}")
        try:
            self.read()
        except PermissionError as exc:
            raise SourceUnavailable(
                f"cannot read {exc.filename}: energy_uj is root-only on kernels since 5.10 "
                "(run as root or `chmod o+r` the energy_uj files)"
            ) from exc

    def devices(self) -> list[DeviceInfo]:
        return [z.info for z in self._zones]

    def read(self) -> list[PowerReading]:
        return [
            PowerReading(z.info.device, energy_j=int(z.energy_path.read_text()) / 1e6)
            for z in self._zones
        ]

    def close(self) -> None:
        pass
