"""Test set-up for the web inspector: the inspector process, and Debian's Chromium driven over DevTools.

* `InspectorProcess` runs ``wiremcp inspect --web -- python web_server.py``
  (or any TARGET) and reads the page's URL from its first stdout line.
* `Chromium` starts ``/usr/bin/chromium`` headless with a fresh profile and
  ``--remote-debugging-port=0``; the port is read from the profile's
  ``DevToolsActivePort`` file, written once DevTools listens.
* `Page` speaks the Chrome DevTools Protocol to one tab over aiohttp's
  websocket client (aiohttp is already in the ``http`` extra: no browser
  driver package, no browser download; docs/decisions.md, "Driving Chromium
  in the inspector tests"). ``wait_for`` polls a JavaScript condition until it
  holds, and fails with what the page shows when it never does: the tests
  synchronise on what the page displays, never on sleeps.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest

HERE = Path(__file__).resolve().parent
SERVER = HERE / "web_server.py"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-extensions", "--disable-default-apps", "--mute-audio", "--window-size=1500,900",
]


class InspectorProcess:
    """``wiremcp inspect --web ARGS``: ``url``, ``port`` and ``token`` once it serves."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "wiremcp", "inspect", "--web", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line.startswith("http://127.0.0.1:"):
            self.stop()
            raise AssertionError(f"no URL from the inspector: {line!r}\n{self.stderr}")
        self.url = line
        self.port = int(line.split(":")[2].split("/")[0])
        self.token = line.rstrip("/").rsplit("/", 1)[1]
        self.stderr = ""

    @classmethod
    def of_test_server(cls, *options: str) -> InspectorProcess:
        return cls(*options, "--", sys.executable, str(SERVER))

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        _, err = self.proc.communicate()
        self.stderr = err or ""
        return self.proc.returncode


class Chromium:
    """Debian's Chromium, headless, with its own profile folder; ``port`` is its DevTools port."""

    def __init__(self) -> None:
        if not os.path.exists(CHROMIUM):
            pytest.fail(f"{CHROMIUM} is missing: .ci/system-packages installs Debian's chromium")
        self.profile = tempfile.mkdtemp(prefix="wiremcp-chromium-")
        self.proc = subprocess.Popen(
            [CHROMIUM, *FLAGS, f"--user-data-dir={self.profile}", "--remote-debugging-address=127.0.0.1",
             "--remote-debugging-port=0", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        active = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (active.exists() and len(active.read_text().splitlines()) >= 2):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                err = self.proc.stderr.read().decode(errors="replace") if self.proc.poll() is not None and self.proc.stderr else ""
                self.close()
                raise AssertionError(f"Chromium did not open DevTools: {err[-2000:]}")
            time.sleep(0.05)
        self.port = int(active.read_text().splitlines()[0])

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


class Page:
    """One tab, spoken to over the DevTools protocol. Use as ``async with Page(chromium) as page``."""

    def __init__(self, chromium: Chromium) -> None:
        self.chromium = chromium
        self.ids = itertools.count(1)
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.events: list[dict[str, Any]] = []

    async def __aenter__(self) -> Page:
        self.http = aiohttp.ClientSession()
        base = f"http://127.0.0.1:{self.chromium.port}"
        async with self.http.put(f"{base}/json/new?about:blank") as response:
            target = await response.json(content_type=None)
        self.target_id = target["id"]
        self.ws = await self.http.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0)
        self.reader = asyncio.ensure_future(self._read())
        await self.send("Page.enable")
        await self.send("Runtime.enable")
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.reader.cancel()
        await self.ws.close()
        async with self.http.get(f"http://127.0.0.1:{self.chromium.port}/json/close/{self.target_id}") as response:
            await response.read()
        await self.http.close()

    async def _read(self) -> None:
        async for message in self.ws:
            data = json.loads(message.data)
            if "id" in data and data["id"] in self.pending:
                self.pending.pop(data["id"]).set_result(data)
            elif "method" in data:
                self.events.append(data)

    async def send(self, method: str, params: dict[str, Any] | None = None) -> Any:
        number = next(self.ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[number] = future
        await self.ws.send_str(json.dumps({"id": number, "method": method, "params": params or {}}))
        reply = await asyncio.wait_for(future, 60)
        if "error" in reply:
            raise AssertionError(f"{method}: {reply['error']}")
        return reply["result"]

    async def evaluate(self, expression: str) -> Any:
        reply = await self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in reply:
            raise AssertionError(f"{expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    async def goto(self, url: str) -> None:
        await self.send("Page.navigate", {"url": url})
        await self.wait_for("document.readyState === 'complete'")

    async def wait_for(self, condition: str, timeout: float = 60.0) -> Any:
        """The value of ``condition`` once it is truthy (polled); fails after ``timeout`` s showing the page."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = await self.evaluate(condition)
            except AssertionError:
                value = None
            if value:
                return value
            if time.monotonic() > deadline:
                body = await self.evaluate("document.body ? document.body.innerText : ''")
                raise AssertionError(f"never true: {condition}\npage text:\n{body}")
            await asyncio.sleep(0.05)

    async def click(self, selector: str) -> None:
        found = await self.evaluate(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (e) e.click(); return !!e; }})()")
        assert found, f"nothing matches {selector}"

    async def fill(self, selector: str, value: str) -> None:
        script = (
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return false;"
            f" e.value = {json.dumps(value)}; e.dispatchEvent(new Event('input', {{bubbles: true}})); return true; }})()"
        )
        assert await self.evaluate(script), f"nothing matches {selector}"

    async def screenshot(self, path: Path) -> None:
        shot = await self.send("Page.captureScreenshot", {"format": "png"})
        path.write_bytes(base64.b64decode(shot["data"]))
