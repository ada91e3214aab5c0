"""Headless Chromium driven over the DevTools protocol, for tests of pages (the web inspector, MCP Apps views).

    from wiremcp.testing.chromium import Chromium, Page

    with Chromium() as browser:
        async with Page(browser) as page:
            await page.goto("http://127.0.0.1:8000/")
            await page.wait_for("document.title === 'ready'")

Rules:

* `Chromium` starts the installed browser (``chromium`` on ``PATH``, else
  ``/usr/bin/chromium``; no download) headless, with a fresh profile folder
  and ``--remote-debugging-port=0`` on 127.0.0.1; the port is read from the
  profile's ``DevToolsActivePort`` file, written once DevTools listens.
* `Page` speaks the Chrome DevTools Protocol to one new tab over aiohttp's
  websocket client (the ``[http]`` extra): no browser driver package.
  `Page.wait_for` polls a JavaScript condition until it holds and fails
  with the page's text when it never does: tests synchronise on what the
  page shows, never on sleeps. `Page.frame_context` reaches into a frame of
  another origin (an MCP Apps view), `Page.response_headers` reads the
  headers the browser received (the CSP that applies).
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

import aiohttp

__all__ = ["Chromium", "Page", "FrameContext", "CHROMIUM", "FLAGS"]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-extensions", "--disable-default-apps", "--mute-audio", "--window-size=1500,900",
]
#: DevTools events not kept in `Page.events` (many per request, never asked for).
_NOISY = frozenset({"Network.dataReceived", "Network.loadingFinished", "Network.requestWillBeSentExtraInfo", "Network.responseReceivedExtraInfo"})


class FrameContext(NamedTuple):
    """Where `Page.evaluate` runs in a frame: its DevTools session (None: the tab's) and execution context."""

    session: str | None
    context: int


class Chromium:
    """Debian's Chromium, headless, with its own profile folder; ``port`` is its DevTools port."""

    def __init__(self, path: str | None = None) -> None:
        self.path = path or CHROMIUM
        if not os.path.exists(self.path):
            raise FileNotFoundError(f"no Chromium at {self.path}: install it (Debian: apt-get install chromium)")
        self.profile = tempfile.mkdtemp(prefix="wiremcp-chromium-")
        self.proc = subprocess.Popen(
            [self.path, *FLAGS, f"--user-data-dir={self.profile}", "--remote-debugging-address=127.0.0.1",
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
            time.sleep(0.05)  # the file appears once DevTools listens: nothing to wait on but the file
        self.port = int(active.read_text().splitlines()[0])

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the browser (terminate, then kill if it lingers) and remove its profile."""
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

    http: aiohttp.ClientSession
    ws: aiohttp.ClientWebSocketResponse
    reader: asyncio.Future[None]
    target_id: str

    def __init__(self, chromium: Chromium) -> None:
        self.chromium = chromium
        self.ids = itertools.count(1)
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.events: list[dict[str, Any]] = []
        #: DevTools sessions of the frames Chromium runs in other processes (sandboxed frames): session id -> URL.
        self.sessions: dict[str, str] = {}
        self._attaching: set[asyncio.Future[None]] = set()

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
        await self.send("Network.enable")
        await self._auto_attach(None)
        return self

    async def _auto_attach(self, session: str | None) -> None:
        # Frames in another process (Chromium isolates sandboxed iframes) are targets of their own:
        # attach to each before it runs, to see its responses and reach its DOM.
        await self.send("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True}, session)

    async def _attached(self, params: dict[str, Any]) -> None:
        session = params["sessionId"]
        info = params.get("targetInfo", {})
        try:
            if info.get("type") == "iframe":
                self.sessions[session] = info.get("url", "")
                await self.send("Network.enable", None, session)
                await self.send("Page.enable", None, session)
                await self._auto_attach(session)
        finally:
            await self.send("Runtime.runIfWaitingForDebugger", None, session)

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
            elif data.get("method") == "Target.attachedToTarget":
                task = asyncio.ensure_future(self._attached(data["params"]))
                self._attaching.add(task)
                task.add_done_callback(self._attaching.discard)
            elif data.get("method") == "Target.detachedFromTarget":
                self.sessions.pop(data["params"].get("sessionId", ""), None)
            elif data.get("method") == "Page.frameNavigated" and data.get("sessionId") in self.sessions:
                if "parentId" not in data["params"]["frame"]:
                    self.sessions[data["sessionId"]] = data["params"]["frame"].get("url", "")
            elif "method" in data and data["method"] not in _NOISY:
                self.events.append(data)

    async def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> Any:
        """One DevTools command (to a frame's ``session``, if given); its result."""
        number = next(self.ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[number] = future
        command: dict[str, Any] = {"id": number, "method": method, "params": params or {}}
        if session is not None:
            command["sessionId"] = session
        await self.ws.send_str(json.dumps(command))
        reply = await asyncio.wait_for(future, 60)
        if "error" in reply:
            raise AssertionError(f"{method}: {reply['error']}")
        return reply["result"]

    async def evaluate(self, expression: str, context: FrameContext | None = None) -> Any:
        """The value of a JavaScript expression (awaited), in the page or in a frame's `FrameContext`."""
        params: dict[str, Any] = {"expression": expression, "returnByValue": True, "awaitPromise": True}
        if context is not None:
            params["contextId"] = context.context
        reply = await self.send("Runtime.evaluate", params, context.session if context is not None else None)
        if "exceptionDetails" in reply:
            raise AssertionError(f"{expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    async def goto(self, url: str) -> None:
        """Navigate to ``url`` and wait until the document is complete."""
        await self.send("Page.navigate", {"url": url})
        await self.wait_for("document.readyState === 'complete'")

    async def _tree(self, session: str | None) -> Any:
        try:
            return await self.send("Page.getFrameTree", None, session)
        except AssertionError:
            if session is None:
                raise
            return None  # a frame that went away between the listing and the question

    async def frame_urls(self) -> list[str]:
        """The URL of every frame of the tab, in this process or another."""
        urls = []
        for session in (None, *self.sessions):
            tree = await self._tree(session)
            if tree is None:
                continue
            stack = [tree["frameTree"]]
            while stack:
                node = stack.pop()
                urls.append(node["frame"].get("url", ""))
                stack.extend(node.get("childFrames", ()))
        return urls

    async def frame_context(self, url_part: str) -> FrameContext:
        """An execution context in the first frame whose URL contains ``url_part`` (cross-origin frames too).

        The context is an isolated world: it shares the frame's DOM (clicks reach the
        frame's own listeners) but not its JavaScript globals.
        """
        for session in (None, *self.sessions):
            tree = await self._tree(session)
            if tree is None:
                continue
            stack = [tree["frameTree"]]
            while stack:
                node = stack.pop()
                if url_part in node["frame"].get("url", ""):
                    world = await self.send(
                        "Page.createIsolatedWorld", {"frameId": node["frame"]["id"], "worldName": "wiremcp-testing"}, session
                    )
                    return FrameContext(session, int(world["executionContextId"]))
                stack.extend(node.get("childFrames", ()))
        raise AssertionError(f"no frame's URL contains {url_part!r}")

    async def wait_for(self, condition: str, timeout: float = 60.0, context: FrameContext | None = None) -> Any:
        """The value of ``condition`` once it is truthy (polled); fails after ``timeout`` s showing the page."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = await self.evaluate(condition, context)
            except AssertionError:
                value = None
            if value:
                return value
            if time.monotonic() > deadline:
                body = await self.evaluate("document.body ? document.body.innerText : ''")
                raise AssertionError(f"never true: {condition}\npage text:\n{body}")
            await asyncio.sleep(0.05)

    async def click(self, selector: str) -> None:
        """Click the first element matching the CSS ``selector`` (AssertionError when none does)."""
        found = await self.evaluate(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (e) e.click(); return !!e; }})()")
        assert found, f"nothing matches {selector}"

    async def fill(self, selector: str, value: str) -> None:
        """Set the value of the first input matching ``selector`` and fire its ``input`` event (AssertionError when none matches)."""
        script = (
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return false;"
            f" e.value = {json.dumps(value)}; e.dispatchEvent(new Event('input', {{bubbles: true}})); return true; }})()"
        )
        assert await self.evaluate(script), f"nothing matches {selector}"

    def response_headers(self, url_part: str) -> dict[str, str]:
        """The headers of the last response the browser received for a URL containing ``url_part`` (lower-case names)."""
        for event in reversed(self.events):
            if event["method"] == "Network.responseReceived" and url_part in event["params"]["response"]["url"]:
                return {k.lower(): v for k, v in event["params"]["response"]["headers"].items()}
        raise AssertionError(f"no response for a URL containing {url_part!r}")

    async def screenshot(self, path: Path) -> None:
        """Write a PNG screenshot of the page to ``path``."""
        shot = await self.send("Page.captureScreenshot", {"format": "png"})
        path.write_bytes(base64.b64decode(shot["data"]))
