"""Node wall power from a BMC over Redfish (HTTP GET, basic auth from environment variables).

Reads `PowerControl[].PowerConsumedWatts` of a Chassis `Power` resource, or `PowerWatts.Reading`
of an `EnvironmentMetrics` resource. The user name and password are read from the environment
at construction and held only in memory: `describe()` and every bundle carry the URL alone.
"""

from __future__ import annotations

import base64
import json
import os
import ssl
import urllib.error
import urllib.request
from typing import Any

from scoville.telemetry.series import DeviceInfo, PowerReading
from scoville.telemetry.sources import SourceUnavailable

DEFAULT_PATH = "/redfish/v1/Chassis/1/Power"


def parse_redfish_power(doc: dict[str, Any]) -> float | None:
    """Watts from a Redfish Power or EnvironmentMetrics document; None when absent."""
    controls = doc.get("PowerControl")
    if isinstance(controls, list):
        watts = [c.get("PowerConsumedWatts") for c in controls if isinstance(c, dict)]
        nums = [float(w) for w in watts if isinstance(w, int | float)]
        if nums:
            return nums[0]  # the first control is the chassis total by convention
    pw = doc.get("PowerWatts")
    if isinstance(pw, dict) and isinstance(pw.get("Reading"), int | float):
        return float(pw["Reading"])
    return None


class RedfishSource:
    """One node-wall device read from `base_url + path`."""

    name = "redfish"
    max_rate_hz = 1.0  # BMCs refresh their reading about once a second

    def __init__(
        self,
        base_url: str,
        path: str = DEFAULT_PATH,
        user_env: str = "SCOVILLE_REDFISH_USER",
        password_env: str = "SCOVILLE_REDFISH_PASSWORD",
        verify_tls: bool = True,
        timeout_s: float = 5.0,
        node: str = "node0",
    ) -> None:
        self.url = base_url.rstrip("/") + path
        self._timeout_s = timeout_s
        self._headers = {"Accept": "application/json"}
        user, password = os.environ.get(user_env), os.environ.get(password_env)
        if user is not None and password is not None:
            token = base64.b64encode(f"{user}:{password}".encode()).decode()
            self._headers["Authorization"] = f"Basic {token}"
        self._ssl = None if verify_tls else ssl._create_unverified_context()
        self._info = DeviceInfo(device=f"{node}:redfish", source=self.name, boundary="node-wall")
        try:
            if self.read()[0].power_w is None:
                raise ValueError("no PowerConsumedWatts / PowerWatts.Reading in the document")
        except (OSError, ValueError) as exc:
            raise SourceUnavailable(f"Redfish {self.url} gave no reading: {exc}") from exc

    def describe(self) -> dict[str, str]:
        return {"source": self.name, "url": self.url}  # never the credentials

    def devices(self) -> list[DeviceInfo]:
        return [self._info]

    def read(self) -> list[PowerReading]:
        req = urllib.request.Request(self.url, headers=self._headers)
        with urllib.request.urlopen(req, timeout=self._timeout_s, context=self._ssl) as resp:
            doc = json.loads(resp.read())
        if not isinstance(doc, dict):
            raise ValueError("Redfish answer is not a JSON object")
        return [PowerReading(self._info.device, power_w=parse_redfish_power(doc))]

    def close(self) -> None:
        pass
