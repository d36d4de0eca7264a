"""A small headless-Chromium driver over the DevTools protocol (aiohttp websocket, loopback
only): open a file, wait for the report's charts, collect console errors and network requests,
hover, click, take a screenshot. Used by the report's browser tests."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import re
import shutil
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-port=0",
    "--window-size=1280,900",
)
LOCAL = ("file:", "data:", "blob:", "about:")


@dataclass
class Page:
    ws: aiohttp.ClientWebSocketResponse
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    _next: int = 0
    _waiting: dict[int, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        self._next += 1
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[self._next] = fut
        await self.ws.send_json({"id": self._next, "method": method, "params": params})
        return await asyncio.wait_for(fut, 30)

    def on_message(self, msg: dict[str, Any]) -> None:
        if "id" in msg and msg["id"] in self._waiting:
            self._waiting.pop(msg["id"]).set_result(msg.get("result", msg))
            return
        method, p = msg.get("method"), msg.get("params", {})
        if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            self.errors.append(
                " ".join(str(a.get("value", a.get("description"))) for a in p["args"])
            )
        elif method == "Runtime.exceptionThrown":
            self.errors.append(json.dumps(p["exceptionDetails"])[:500])
        elif method == "Log.entryAdded" and p["entry"].get("level") == "error":
            self.errors.append(p["entry"].get("text", ""))
        elif method == "Network.requestWillBeSent":
            url = p["request"]["url"]
            if not url.startswith(LOCAL):
                self.requests.append(url)

    async def evaluate(self, expr: str) -> Any:
        got = await self.send("Runtime.evaluate", expression=expr, returnByValue=True)
        return got.get("result", {}).get("value")

    async def wait_for(self, expr: str, timeout_s: float = 60.0) -> Any:
        """Poll `expr` until it is not null (the page's own signal), or fail."""
        for _ in range(int(timeout_s / 0.2)):
            value = await self.evaluate(expr)
            if value is not None:
                return value
            await asyncio.sleep(0.2)
        raise TimeoutError(f"{expr} stayed null for {timeout_s} s; errors: {self.errors}")

    async def mouse(self, kind: str, x: float, y: float) -> None:
        extra = {"button": "left", "clickCount": 1} if kind != "mouseMoved" else {}
        await self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, **extra)

    async def click(self, x: float, y: float) -> None:
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            await self.mouse(kind, x, y)

    async def screenshot(self, path: Path, top: int = 0, height: int = 1400) -> None:
        """`height` CSS pixels of the page from `top`, at the window's width."""
        width = await self.evaluate("document.documentElement.clientWidth")
        clip = {"x": 0, "y": top, "width": width, "height": height, "scale": 1}
        shot = await self.send(
            "Page.captureScreenshot", format="png", clip=clip, captureBeyondViewport=True
        )
        path.write_bytes(base64.b64decode(shot["data"]))


async def _devtools_port(proc: asyncio.subprocess.Process) -> int:
    assert proc.stderr is not None
    while line := await asyncio.wait_for(proc.stderr.readline(), 60):
        if m := re.search(rb"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line):
            return int(m.group(1))
    raise RuntimeError("Chromium exited before it opened its DevTools port")


@contextlib.asynccontextmanager
async def open_page(path: Path) -> AsyncIterator[Page]:
    """Chromium (fresh profile) with `path` loaded and every event recorded from the start."""
    assert CHROMIUM is not None
    with tempfile.TemporaryDirectory() as profile:
        proc = await asyncio.create_subprocess_exec(
            CHROMIUM,
            *FLAGS,
            f"--user-data-dir={profile}",
            "about:blank",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            port = await _devtools_port(proc)
            async with aiohttp.ClientSession() as http:
                async with http.get(f"http://127.0.0.1:{port}/json/list") as resp:
                    targets = await resp.json()
                url = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
                async with http.ws_connect(url, max_msg_size=0) as ws:
                    page = Page(ws)
                    reader = asyncio.create_task(_read(ws, page))
                    for domain in ("Runtime", "Log", "Network", "Page"):
                        await page.send(f"{domain}.enable")
                    await page.send("Page.navigate", url=path.resolve().as_uri())
                    try:
                        yield page
                    finally:
                        reader.cancel()
        finally:
            proc.terminate()
            await proc.wait()


async def _read(ws: aiohttp.ClientWebSocketResponse, page: Page) -> None:
    async for msg in ws:
        if msg.type == aiohttp.WSMsgType.TEXT:
            page.on_message(json.loads(msg.data))
