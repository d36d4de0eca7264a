"""AMD GPU board power through `amdsmi`: socket power (W) and the energy accumulator.

The amdsmi-like module is injected (tests pass a fake). Importing the real one is guarded
broadly: when the ROCm library is absent, `import amdsmi` can raise KeyError/OSError, not only
ImportError.
"""

from __future__ import annotations

from typing import Any

from scoville.telemetry.series import DeviceInfo, PowerReading
from scoville.telemetry.sources import SourceUnavailable


def import_amdsmi() -> Any:
    try:
        import amdsmi
    except Exception as exc:  # ImportError, KeyError (ROCM path), OSError (libamd_smi.so)
        raise SourceUnavailable(f"amdsmi is not usable here: {exc!r}") from exc
    return amdsmi


def _watts(info: dict[str, Any]) -> float | None:
    """Current socket power (MI300+), else the average (older firmware); 'N/A' -> None."""
    for key in ("current_socket_power", "average_socket_power", "socket_power"):
        value = info.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return None


class AmdSmiSource:
    """Every AMD GPU amdsmi lists, boundary `accelerator-board`."""

    name = "amdsmi"

    def __init__(self, amdsmi: Any | None = None) -> None:
        self._smi = amdsmi if amdsmi is not None else import_amdsmi()
        try:
            self._smi.amdsmi_init()
        except Exception as exc:
            raise SourceUnavailable(f"amdsmi did not initialise: {exc!r}") from exc
        try:
            self._handles = list(self._smi.amdsmi_get_processor_handles())
            self._infos = [
                DeviceInfo(
                    device=f"gpu{i}:{self._smi.amdsmi_get_gpu_device_uuid(h)}",
                    source=self.name,
                    boundary="accelerator-board",
                )
                for i, h in enumerate(self._handles)
            ]
        except Exception as exc:
            self._smi.amdsmi_shut_down()
            raise SourceUnavailable(f"amdsmi could not list devices: {exc!r}") from exc

    def _energy_j(self, handle: Any) -> float | None:
        try:
            e = self._smi.amdsmi_get_energy_count(handle)
        except Exception:
            return None
        acc = e.get("energy_accumulator", e.get("power"))
        res_uj = e.get("counter_resolution")
        if not isinstance(acc, int | float) or not isinstance(res_uj, int | float):
            return None
        return float(acc) * float(res_uj) / 1e6

    def devices(self) -> list[DeviceInfo]:
        return list(self._infos)

    def read(self) -> list[PowerReading]:
        out: list[PowerReading] = []
        for info, handle in zip(self._infos, self._handles, strict=True):
            power_w = _watts(dict(self._smi.amdsmi_get_power_info(handle)))
            out.append(PowerReading(info.device, power_w, self._energy_j(handle)))
        return out

    def close(self) -> None:
        self._smi.amdsmi_shut_down()
