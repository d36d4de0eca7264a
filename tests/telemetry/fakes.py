"""Fakes of the vendor libraries (pynvml-like, amdsmi-like): plain objects with the same
functions, injected into the sources. They hold scripted values; no scoville code is faked."""

from __future__ import annotations

from dataclasses import dataclass, field


class FakeNVMLError(Exception):
    pass


@dataclass
class FakeNvml:
    """Two GPUs; power in mW and energy in mJ advance by the scripted steps per read."""

    power_mw: list[int] = field(default_factory=lambda: [350_000, 410_500])
    energy_mj: list[int] = field(default_factory=lambda: [1_000_000, 2_000_000])
    energy_step_mj: list[int] = field(default_factory=lambda: [35_000, 41_050])
    energy_supported: bool = True
    init_error: Exception | None = None
    calls: list[str] = field(default_factory=list)

    def nvmlInit(self) -> None:
        self.calls.append("init")
        if self.init_error is not None:
            raise self.init_error

    def nvmlShutdown(self) -> None:
        self.calls.append("shutdown")

    def nvmlDeviceGetCount(self) -> int:
        return len(self.power_mw)

    def nvmlDeviceGetHandleByIndex(self, i: int) -> int:
        return i

    def nvmlDeviceGetUUID(self, h: int) -> bytes:
        return f"GPU-fake-{h}".encode()

    def nvmlDeviceGetPowerUsage(self, h: int) -> int:
        return self.power_mw[h]

    def nvmlDeviceGetTotalEnergyConsumption(self, h: int) -> int:
        if not self.energy_supported:
            raise FakeNVMLError("Not Supported")
        value = self.energy_mj[h]
        self.energy_mj[h] += self.energy_step_mj[h]
        return value


@dataclass
class FakeAmdSmi:
    socket_power_w: list[object] = field(default_factory=lambda: [550, "N/A"])
    accumulator: list[int] = field(default_factory=lambda: [1_000_000, 5])
    resolution_uj: float = 15.3
    calls: list[str] = field(default_factory=list)

    def amdsmi_init(self) -> None:
        self.calls.append("init")

    def amdsmi_shut_down(self) -> None:
        self.calls.append("shutdown")

    def amdsmi_get_processor_handles(self) -> list[int]:
        return list(range(len(self.socket_power_w)))

    def amdsmi_get_gpu_device_uuid(self, h: int) -> str:
        return f"amd-{h}"

    def amdsmi_get_power_info(self, h: int) -> dict[str, object]:
        return {"current_socket_power": self.socket_power_w[h], "average_socket_power": 540}

    def amdsmi_get_energy_count(self, h: int) -> dict[str, object]:
        return {
            "energy_accumulator": self.accumulator[h],
            "counter_resolution": self.resolution_uj,
            "timestamp": 0,
        }
