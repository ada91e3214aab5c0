"""The inspector's ASGI app: the page, its static files, an event stream and three JSON endpoints.

A local page that can reach a process which starts servers is the escalation
path that security_best_practices.mdx describes for local proxies, so every
request passes `refusal` before anything else, and fails with 403 when:

* its ``Host`` is not ``127.0.0.1:PORT`` or ``localhost:PORT`` (DNS
  rebinding: another site's name resolving to 127.0.0.1 reaches the socket,
  but not with our Host);
* its path does not start with ``/TOKEN/``, the random token printed with the
  URL (compared in constant time, `hmac.compare_digest`); the URL ``--open``
  hands to the browser's command line (readable by every local user in
  ``/proc``) carries instead a launch token that works once, as a redirect
  to ``/TOKEN/`` (`new_launch`), and is spent by its first use;
* it carries an ``Origin`` other than the page's own (``http://`` + its
  Host), or a ``Sec-Fetch-Site`` other than ``same-origin`` or ``none``;
* it is a POST without an ``Origin`` (browsers send one on every POST; a
  POST without it did not come from the page).

Every response, 403 included, carries `SECURITY_HEADERS`: a strict
Content-Security-Policy (scripts, styles, images and connections from this
origin only, no inline script or style, no frames around it, no base URL,
no form submission; `page_csp`: the one frame source it allows is the
sandbox proxy's origin, ``http://127.0.0.1:SANDBOX_PORT``, where MCP Apps
views are rendered, and without a sandbox none), ``X-Content-Type-Options: nosniff``,
``Referrer-Policy: no-referrer`` (the token is in the URL) and
``Cache-Control: no-store``. POST bodies are ``application/json`` (else
415; a cross-origin page cannot send that type without a preflight we never
answer) of at most `MAX_BODY` bytes (else 413).

The page can list, call, read, get a prompt and answer an elicitation. It can
never start a command or choose a server: the target was fixed on the
command line. Routes, under ``/TOKEN/``: ``GET`` the page (``""``), its
static files, ``events`` (Server-Sent Events: ``reset``, ``state``,
``wire``, ``note``, ``elicit``, ``elicit-done``), ``api/state``,
``api/host`` (the sandbox proxy's URL); ``POST`` ``api/call``,
``api/elicit``, ``api/refresh``, ``api/view-wire`` (an envelope between a
view and the page's host bridge, recorded and checked:
`Inspector.on_view_wire`), ``api/view-csp`` (the CSP the sandbox builds
for a ``_meta.ui.csp``, to show it).
"""

from __future__ import annotations

import asyncio
import hmac
from importlib import resources
from typing import Any, Awaitable, Callable, MutableMapping

import orjson

from ...client import ClientError
from ._session import AnswerError, Inspector, encode_event

from ._sandbox import SandboxApp, view_csp

__all__ = ["InspectorApp", "SECURITY_HEADERS", "CSP", "MAX_BODY", "STATIC", "page_csp"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)
_OTHER_HEADERS: list[tuple[bytes, bytes]] = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]
SECURITY_HEADERS: list[tuple[bytes, bytes]] = [(b"content-security-policy", CSP.encode()), *_OTHER_HEADERS]
#: Largest POST body, in bytes.
MAX_BODY = 1 << 20
#: The page and its files: URL name -> (file in static/, content type).
STATIC = {
    "": ("index.html", b"text/html; charset=utf-8"),
    "inspector.js": ("inspector.js", b"text/javascript; charset=utf-8"),
    "inspector.css": ("inspector.css", b"text/css; charset=utf-8"),
    "favicon.svg": ("favicon.svg", b"image/svg+xml"),
    "apps.js": ("apps.js", b"text/javascript; charset=utf-8"),
}
_POSTS = ("api/call", "api/elicit", "api/refresh", "api/view-wire", "api/view-csp")


def page_csp(sandbox_origin: str | None) -> str:
    """`CSP` with ``frame-src`` the sandbox proxy's origin (MCP Apps views), or unchanged without one."""
    return CSP if sandbox_origin is None else CSP.replace("; frame-ancestors", f"; frame-src {sandbox_origin}; frame-ancestors")
_FETCH_SITES = (b"same-origin", b"none")
_CHECKED = (b"host", b"origin", b"sec-fetch-site")


def _static(name: str) -> bytes:
    return resources.files(__package__).joinpath("static", name).read_bytes()


class InspectorApp:
    """ASGI app serving one `Inspector` at ``http://127.0.0.1:PORT/TOKEN/``; set `port` once bound."""

    def __init__(self, inspector: Inspector, token: str, port: int = 0, sandbox: SandboxApp | None = None) -> None:
        if len(token) < 16:
            raise ValueError("the token must be at least 16 characters")
        self.inspector = inspector
        self.sandbox = sandbox
        self.token = token.encode()
        self.port = port
        #: The one-time token of the URL handed to a browser's command line (`new_launch`), or None.
        self.launch: bytes | None = None
        self.files = {route: (_static(name), kind) for route, (name, kind) in STATIC.items()}

    def new_launch(self, token: str) -> None:
        """Accept ``/token/`` once, as a redirect to the page (a URL on a command line other users can read)."""
        if len(token) < 16:
            raise ValueError("the token must be at least 16 characters")
        self.launch = token.encode()

    def _is_launch(self, scope: Scope) -> bool:
        if self.launch is None:
            return False
        token = str(scope.get("path", "")).lstrip("/").partition("/")[0]
        return hmac.compare_digest(token.encode(), self.launch)

    def refusal(self, scope: Scope) -> str | None:
        """Why this request is refused (403), or None."""
        headers: dict[bytes, bytes] = {}
        for name, value in scope.get("headers", ()):
            name = bytes(name).lower()
            if name in headers and name in _CHECKED:
                return f"more than one {name.decode()} header"
            headers[name] = bytes(value)
        host = headers.get(b"host", b"")
        if host not in (b"127.0.0.1:%d" % self.port, b"localhost:%d" % self.port):
            return "Host must be 127.0.0.1 or localhost with this port"
        path = str(scope.get("path", ""))
        token, _, _ = path.lstrip("/").partition("/")
        if not hmac.compare_digest(token.encode(), self.token) and not self._is_launch(scope):
            return "wrong token"
        origin = headers.get(b"origin")
        if origin is not None and origin != b"http://" + host:
            return "Origin is not this page's"
        if origin is None and scope.get("method") == "POST":
            return "a POST must carry the page's Origin"
        site = headers.get(b"sec-fetch-site")
        if site is not None and site not in _FETCH_SITES:
            return "not a request of this page"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return  # websockets are not served (uvicorn refuses the handshake)
        why = self.refusal(scope)
        if why is not None:
            await self._reply(send, 403, why.encode(), b"text/plain; charset=utf-8")
            return
        if self._is_launch(scope):  # spent at once: whoever reads it later finds nothing
            self.launch = None
            if scope["method"] != "GET" or str(scope["path"]).lstrip("/").partition("/")[2]:
                await self._reply(send, 403, b"wrong token", b"text/plain; charset=utf-8")
                return
            await self._reply(send, 303, b"", b"text/plain", [(b"location", b"/" + self.token + b"/")])
            return
        route = str(scope["path"]).lstrip("/").partition("/")[2]
        if not str(scope["path"]).lstrip("/").count("/"):
            await self._reply(send, 308, b"", b"text/plain", [(b"location", b"/" + self.token + b"/")])
            return
        method = scope["method"]
        if route in self.files or route in ("events", "api/state", "api/host"):
            if method != "GET":
                await self._reply(send, 405, b"use GET", b"text/plain; charset=utf-8", [(b"allow", b"GET")])
            elif route == "events":
                await self.events(receive, send)
            elif route == "api/state":
                await self._json(send, 200, self.inspector.state)
            elif route == "api/host":
                await self._json(send, 200, {"sandbox": self.sandbox.url if self.sandbox is not None else None})
            else:
                body, kind = self.files[route]
                await self._reply(send, 200, body, kind)
            return
        if route in _POSTS:
            if method != "POST":
                await self._reply(send, 405, b"use POST", b"text/plain; charset=utf-8", [(b"allow", b"POST")])
                return
            await self.api(route, scope, receive, send)
            return
        await self._reply(send, 404, b"not found", b"text/plain; charset=utf-8")

    async def api(self, route: str, scope: Scope, receive: Receive, send: Send) -> None:
        content_type = b""
        for name, value in scope.get("headers", ()):
            if bytes(name).lower() == b"content-type":
                content_type = bytes(value).split(b";")[0].strip().lower()
        if content_type != b"application/json":
            await self._json(send, 415, {"error": "Content-Type must be application/json"})
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body.extend(message.get("body", b""))
            if len(body) > MAX_BODY:
                await self._json(send, 413, {"error": f"the body is over {MAX_BODY} bytes"})
                return
            if not message.get("more_body", False):
                break
        try:
            request = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            await self._json(send, 400, {"error": f"the body is not JSON: {exc}"})
            return
        try:
            if route == "api/call":
                await self._json(send, 200, await self.inspector.call(request))
            elif route == "api/elicit":
                self.inspector.answer(request)
                await self._json(send, 200, {"ok": True})
            elif route == "api/view-wire":
                await self._json(send, 200, self.inspector.on_view_wire(request))
            elif route == "api/view-csp":
                if type(request) is not dict:
                    raise AnswerError(400, 'the body is {"csp": ...}')
                built = view_csp(request.get("csp"))
                await self._json(send, 200, {"policy": built.policy, "applied": built.applied, "dropped": built.dropped})
            else:
                try:
                    state = await self.inspector.refresh()
                except ClientError as exc:
                    await self._json(send, 200, {"ok": False, "error": {"message": str(exc)}})
                    return
                await self._json(send, 200, {"ok": True, "state": state})
        except AnswerError as exc:
            await self._json(send, exc.status, {"error": exc.message})

    async def events(self, receive: Receive, send: Send) -> None:
        """The page's event stream, until the page goes away or the inspector closes."""
        queue = self.inspector.subscribe()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream"), *self.security_headers],
            }
        )

        async def gone() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass

        watcher = asyncio.ensure_future(gone())
        try:
            while True:
                getter = asyncio.ensure_future(queue.get())
                await asyncio.wait((getter, watcher), return_when=asyncio.FIRST_COMPLETED)
                if not getter.done():
                    getter.cancel()
                    break
                item = getter.result()
                if item is None:
                    break
                chunk = encode_event(*item)
                while not queue.empty():  # send what is waiting in one write
                    more = queue.get_nowait()
                    if more is None:
                        await send({"type": "http.response.body", "body": chunk, "more_body": True})
                        return
                    chunk += encode_event(*more)
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        except OSError:
            pass
        finally:
            self.inspector.unsubscribe(queue)
            watcher.cancel()
            try:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            except (OSError, RuntimeError):
                pass

    @property
    def security_headers(self) -> list[tuple[bytes, bytes]]:
        """`SECURITY_HEADERS`, with `page_csp` once a sandbox proxy serves views."""
        if self.sandbox is None:
            return SECURITY_HEADERS
        return [(b"content-security-policy", page_csp(self.sandbox.origin).encode()), *_OTHER_HEADERS]

    async def _reply(self, send: Send, status: int, body: bytes, kind: bytes, extra: list[tuple[bytes, bytes]] | None = None) -> None:
        headers = [(b"content-type", kind), (b"content-length", b"%d" % len(body)), *self.security_headers, *(extra or ())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def _json(self, send: Send, status: int, data: Any) -> None:
        await self._reply(send, status, orjson.dumps(data), b"application/json")
