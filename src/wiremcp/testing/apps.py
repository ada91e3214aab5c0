"""Testing MCP Apps views: render a tool's view in the inspector's host, in headless Chromium, and look at the envelopes.

    from wiremcp.testing.apps import app_host

    async with app_host("examples/apps.py") as host:
        view = await host.render("roll_dice", {"count": 2})
        await view.wait_for_envelope("ui/notifications/tool-result")
        await view.click("#again")
        await view.wait_for_envelope("tools/call", lambda e: e.message["params"]["name"] == "roll_dice")
        assert not await view.problems()

Rules:

* **The real host.** `app_host` runs ``wiremcp inspect --web TARGET`` (a
  server file or module, a URL, or a command as a list) as a subprocess,
  with its sandbox proxy on a second loopback port, and opens its page in
  `wiremcp.testing.chromium.Chromium` (one is started unless ``chromium=``
  is given). Nothing is mocked: the view runs in the browser, in the
  sandbox, under the CSP built from its ``_meta.ui.csp``, and its calls go
  through the inspector's client to the server.
* **Rendering is what a person does.** `AppHost.render` calls the tool as
  the page's form would; the view appears when the result arrives (the
  tool's ``_meta.ui.resourceUri``). A tool without a view is an error.
* **Envelopes are the page's.** `View.envelopes` are every postMessage
  envelope between the view (or its sandbox proxy) and the host, in the
  order the page saw them, each with the problems the inspector's checks
  found (`Envelope.problems`: the tap's rules, the MCP Apps methods and
  lifecycle, the ext-apps ``schema.json``).
* **Driving the view.** `View.click`, `View.fill` and `View.evaluate` run
  in the view's frame (another origin: through DevTools, in an isolated
  world that shares its DOM); `View.csp` is the Content-Security-Policy
  header the browser received with the view.
* **Waiting is on what happens.** Every ``wait_*`` polls the page and fails
  after ``timeout`` seconds with what it saw; no sleeps.

Needs the ``[http]`` extra (uvicorn serves the inspector, aiohttp speaks to
Chromium) and an installed Chromium. docs/testing.md, "MCP Apps views".
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable, Literal, Sequence

from .chromium import Chromium, FrameContext, Page

__all__ = ["app_host", "AppHost", "View", "Envelope"]

Era = Literal["auto", "modern", "legacy"]


@dataclass(frozen=True)
class Envelope:
    """One postMessage envelope between a view and the host, as the host saw it."""

    #: ``"v2h"`` (view to host) or ``"h2v"``.
    direction: str
    #: The message as it was posted (any JSON value: a view may post anything).
    message: Any
    #: The problems the inspector's checks found: ``[{"code": ..., "message": ...}]``.
    problems: list[dict[str, str]] = field(default_factory=list)
    #: ``"sandbox"`` for the sandbox proxy's own reserved messages, else None.
    sender: str | None = None

    @property
    def method(self) -> str | None:
        """The envelope's ``method`` (a request or notification), or None for a response or a malformed one."""
        method = self.message.get("method") if isinstance(self.message, dict) else None
        return method if isinstance(method, str) else None

    @property
    def id(self) -> Any:
        """The envelope's ``id`` (a request or response), or None."""
        return self.message.get("id") if isinstance(self.message, dict) else None

    @property
    def is_response(self) -> bool:
        """True for a response: a ``result`` or an ``error``, and no ``method``."""
        return isinstance(self.message, dict) and "method" not in self.message and ("result" in self.message or "error" in self.message)


class View:
    """One view rendered in the host: its envelopes, its frame, its size and display mode."""

    def __init__(self, host: AppHost, number: int) -> None:
        self.host = host
        self.number = number
        self._context: FrameContext | None = None

    @property
    def page(self) -> Page:
        """The inspector page (a `Page` of the Chromium harness) the view is rendered in."""
        return self.host.page

    async def envelopes(self) -> list[Envelope]:
        """Every envelope of this view so far, in order (waits until the page's records are all on the wire)."""
        await self.page.evaluate("window.wiremcpApps.flushed()")
        raw = await self.page.evaluate(f"window.wiremcpApps.envelopes().filter(e => e.view === {self.number})")
        return [Envelope(e["direction"], e["message"], list(e["problems"]), e["sender"]) for e in raw]

    async def problems(self) -> list[tuple[Envelope, dict[str, str]]]:
        """Every problem found so far, with its envelope."""
        return [(e, p) for e in await self.envelopes() for p in e.problems]

    def reply_to(self, envelopes: list[Envelope], request: Envelope) -> Envelope | None:
        """The response to ``request`` among ``envelopes`` (the other direction, the same id)."""
        for e in envelopes:
            if e.is_response and e.direction != request.direction and e.id == request.id and type(e.id) is type(request.id):
                return e
        return None

    async def wait_for_envelope(
        self, method: str | None = None, where: Callable[[Envelope], bool] | None = None, *, timeout: float = 60.0
    ) -> Envelope:
        """The first envelope of ``method`` (any, if None) that ``where`` accepts, once the host has seen it."""
        deadline = time.monotonic() + timeout
        while True:
            for e in await self.envelopes():
                if (method is None or e.method == method) and (where is None or where(e)):
                    return e
            if time.monotonic() > deadline:
                seen = [e.method or ("response" if e.is_response else repr(e.message)[:40]) for e in await self.envelopes()]
                raise AssertionError(f"view {self.number}: no {method or 'envelope'} matching within {timeout} s; seen: {seen}")
            await asyncio.sleep(0.05)

    async def wait_for_reply(self, request: Envelope, *, timeout: float = 60.0) -> Envelope:
        """The host's (or the view's) response to ``request``."""
        deadline = time.monotonic() + timeout
        while True:
            reply = self.reply_to(await self.envelopes(), request)
            if reply is not None:
                return reply
            if time.monotonic() > deadline:
                raise AssertionError(f"view {self.number}: {request.method} #{request.id} was never answered")
            await asyncio.sleep(0.05)

    async def wait_initialized(self, *, timeout: float = 60.0) -> Envelope:
        """``ui/notifications/initialized`` from the view."""
        return await self.wait_for_envelope("ui/notifications/initialized", timeout=timeout)

    async def _frame(self) -> FrameContext:
        if self._context is None:
            path = await self.view_path()
            deadline = time.monotonic() + 60
            while self._context is None:
                try:  # the view's frame runs in a process of its own: its DevTools session may attach a moment later
                    self._context = await self.page.frame_context(path)
                except AssertionError:
                    if time.monotonic() > deadline:
                        raise
                    await asyncio.sleep(0.05)
        return self._context

    async def view_path(self) -> str:
        """The path (``/TOKEN/views/N``) this view's sandbox proxy loaded it from, once it did."""
        deadline = time.monotonic() + 60
        while True:
            try:
                sandbox = await self.page.frame_context(f"/sandbox?view={self.number}")
                framed = await self.page.evaluate("(() => { const f = document.querySelector('iframe'); return f ? f.src : ''; })()", sandbox)
            except AssertionError:
                framed = ""
            if isinstance(framed, str) and "/views/" in framed:
                return "/" + framed.split("/", 3)[3]
            if time.monotonic() > deadline:
                raise AssertionError(f"view {self.number}: the sandbox never loaded it")
            await asyncio.sleep(0.05)

    async def evaluate(self, expression: str) -> Any:
        """A JavaScript expression's value in the view's frame (an isolated world: its DOM, not its globals)."""
        return await self.page.evaluate(expression, await self._frame())

    async def wait_for(self, condition: str, *, timeout: float = 60.0) -> Any:
        """The value of a JavaScript condition in the view's frame, once truthy."""
        return await self.page.wait_for(condition, timeout, await self._frame())

    async def click(self, selector: str) -> None:
        """Click the element of the view that ``selector`` matches (its own listeners run)."""
        found = await self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (e) e.click(); return !!e; }})()"
        )
        if not found:
            raise AssertionError(f"view {self.number}: nothing matches {selector}")

    async def fill(self, selector: str, value: str) -> None:
        """Set an input's value in the view and fire ``input``."""
        script = (
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return false;"
            f" e.value = {json.dumps(value)}; e.dispatchEvent(new Event('input', {{bubbles: true}})); return true; }})()"
        )
        if not await self.evaluate(script):
            raise AssertionError(f"view {self.number}: nothing matches {selector}")

    async def text(self) -> str:
        """The view's visible text."""
        return str(await self.evaluate("document.body ? document.body.innerText : ''"))

    async def csp(self) -> str:
        """The Content-Security-Policy header the browser received with the view (the policy that applies to it)."""
        path = await self.view_path()
        return self.page.response_headers(path).get("content-security-policy", "")

    async def host_text(self) -> str:
        """What the host shows around the view: its title, CSP and log (refusals, forwarded calls, problems)."""
        return str(await self.page.evaluate(f"document.querySelector('.view[data-view=\"{self.number}\"]').innerText"))

    async def frame_height(self) -> str:
        """The iframe's CSS height as the host set it (after ``ui/notifications/size-changed``)."""
        return str(await self.page.evaluate(f"document.querySelector('.view[data-view=\"{self.number}\"] iframe').style.height"))

    async def display_mode(self) -> str:
        """The display mode the host gave the view (``inline`` or ``fullscreen``)."""
        return str(await self.page.evaluate(f"document.querySelector('.view[data-view=\"{self.number}\"]').dataset.mode"))


class AppHost:
    """The inspector, as an MCP Apps host, open in a Chromium tab."""

    def __init__(self, url: str, page: Page, process: subprocess.Popen[str]) -> None:
        self.url = url
        self.page = page
        self.process = process

    async def render(self, tool: str, arguments: dict[str, Any] | None = None) -> View:
        """Call ``tool`` as the page's form would; its view is rendered when the result arrives."""
        number = await self.page.evaluate(f"window.wiremcpInspector.callTool({json.dumps(tool)}, {json.dumps(arguments or {})})")
        if not isinstance(number, int):
            raise AssertionError(f"{tool} has no view (no _meta.ui.resourceUri, or the call failed)")
        return View(self, number)

    async def server_envelopes(self) -> list[dict[str, Any]]:
        """The client-server envelopes of the inspector's wire view, decoded (what reached the server)."""
        texts = await self.page.evaluate(
            "Array.from(document.querySelectorAll('#wire li[data-channel=\"client-server\"] pre')).map(p => p.textContent)"
        )
        return [json.loads(text) for text in texts]

    async def wait_for_server_envelope(self, where: Callable[[dict[str, Any]], bool], *, timeout: float = 60.0) -> dict[str, Any]:
        """The first client-server envelope that ``where`` accepts, once the wire view shows it."""
        deadline = time.monotonic() + timeout
        while True:
            for message in await self.server_envelopes():
                if where(message):
                    return message
            if time.monotonic() > deadline:
                raise AssertionError(f"no client-server envelope matching within {timeout} s")
            await asyncio.sleep(0.05)

    async def click(self, selector: str) -> None:
        """Click in the host page (a confirmation's Open or Refuse: ``.view .confirm [data-action=refuse]``)."""
        await self.page.click(selector)


def _command(target: str | Sequence[str], era: Era) -> list[str]:
    command = [sys.executable, "-m", "wiremcp", "inspect", "--web", "--era", era]
    if isinstance(target, str):
        return [*command, target]
    return [*command, "--", *target]


@contextlib.asynccontextmanager
async def app_host(
    target: str | Sequence[str], *, era: Era = "auto", chromium: Chromium | None = None, timeout: float = 60.0
) -> AsyncIterator[AppHost]:
    """The inspector of ``target`` as an MCP Apps host, open in Chromium; stopped (and the browser closed) on exit."""
    process = subprocess.Popen(_command(target, era), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    browser: Chromium | None = None
    try:
        assert process.stdout is not None
        line = (await asyncio.to_thread(process.stdout.readline)).strip()
        if not line.startswith("http://127.0.0.1:"):
            process.kill()
            _, err = process.communicate()
            raise RuntimeError(f"the inspector did not start: {line!r}\n{err[-4000:]}")
        browser = chromium if chromium is not None else await asyncio.to_thread(Chromium)
        async with Page(browser) as page:
            await page.goto(line)
            await page.wait_for("document.querySelector('#status').textContent === 'live'", timeout)
            await page.wait_for("document.querySelectorAll('#tools button').length > 0", timeout)
            yield AppHost(line, page, process)
    finally:
        if chromium is None and browser is not None:
            browser.close()
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                await asyncio.to_thread(process.wait, 15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        process.communicate()
