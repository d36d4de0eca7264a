"""NVIDIA board power through NVML (`nvidia-ml-py`): power in mW and the energy counter in mJ.

The pynvml-like module is injected (tests pass a fake object with the same functions); by
default `pynvml` is imported here, and a missing library or driver is `SourceUnavailable`.
"""

from __future__ import annotations

from typing import Any

from scoville.telemetry.series import DeviceInfo, PowerReading
from scoville.telemetry.sources import SourceUnavailable


def import_pynvml() -> Any:
    """The real bindings, or `SourceUnavailable` saying how to get them."""
    try:
        import pynvml
    except ImportError as exc:
        raise SourceUnavailable("nvidia-ml-py is not installed (pip install nvidia-ml-py)") from exc
    return pynvml


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class NvmlSource:
    """Every (or the chosen) NVIDIA GPU, boundary `accelerator-board`.

    `nvmlDeviceGetPowerUsage` is a ~1 s running mean on Ampere and later, so power samples
    lag load changes; the energy counter (`nvmlDeviceGetTotalEnergyConsumption`, Volta+) is
    exact and is preferred by window integration whenever it is present.
    """

    name = "nvml"

    def __init__(self, nvml: Any | None = None, indices: tuple[int, ...] | None = None) -> None:
        self._nvml = nvml if nvml is not None else import_pynvml()
        try:
            self._nvml.nvmlInit()
        except Exception as exc:  # NVMLError_LibraryNotFound, DriverNotLoaded, ...
            raise SourceUnavailable(f"NVML did not initialise: {exc}") from exc
        try:
            count = int(self._nvml.nvmlDeviceGetCount())
            chosen = indices if indices is not None else tuple(range(count))
            self._handles = [self._nvml.nvmlDeviceGetHandleByIndex(i) for i in chosen]
            self._infos = [self._info(i, h) for i, h in zip(chosen, self._handles, strict=True)]
            self._has_energy = [self._energy_mj(h) is not None for h in self._handles]
        except Exception as exc:
            self._nvml.nvmlShutdown()
            raise SourceUnavailable(f"NVML could not list devices: {exc}") from exc

    def _info(self, index: int, handle: Any) -> DeviceInfo:
        uuid = _text(self._nvml.nvmlDeviceGetUUID(handle))
        return DeviceInfo(
            device=f"gpu{index}:{uuid}",
            source=self.name,
            boundary="accelerator-board",
            counter_range_j=None,  # 64-bit mJ since driver load: never wraps in practice
            power_is_average_s=1.0,
        )

    def _energy_mj(self, handle: Any) -> int | None:
        try:
            return int(self._nvml.nvmlDeviceGetTotalEnergyConsumption(handle))
        except Exception:  # NVMLError_NotSupported on pre-Volta boards
            return None

    def devices(self) -> list[DeviceInfo]:
        return list(self._infos)

    def read(self) -> list[PowerReading]:
        out: list[PowerReading] = []
        for info, handle, has_energy in zip(
            self._infos, self._handles, self._has_energy, strict=True
        ):
            power_w = float(self._nvml.nvmlDeviceGetPowerUsage(handle)) / 1e3
            energy_mj = self._energy_mj(handle) if has_energy else None
            energy_j = energy_mj / 1e3 if energy_mj is not None else None
            out.append(PowerReading(info.device, power_w=power_w, energy_j=energy_j))
        return out

    def close(self) -> None:
        self._nvml.nvmlShutdown()
