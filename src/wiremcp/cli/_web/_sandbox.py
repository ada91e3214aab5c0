"""The sandbox proxy: a second loopback origin that loads a view with the CSP its resource declares.

apps.mdx, "Sandbox proxy": a web host wraps each view in a sandbox on another
origin. The inspector serves it from a second port on 127.0.0.1, so the
sandbox's origin (``http://127.0.0.1:SANDBOX_PORT``) is never the page's.
Rules kept here:

* **Its own token and checks.** Every request passes `SandboxApp.refusal`:
  ``Host`` is ``127.0.0.1:SANDBOX_PORT`` or ``localhost:SANDBOX_PORT``, the
  path starts with ``/SANDBOX_TOKEN/`` (another token than the page's: the
  view can read its own URL, so what it learns must open nothing on the
  page's origin), a POST carries ``Origin: http://127.0.0.1:SANDBOX_PORT``
  (only the sandbox page posts; a view has an opaque origin and sends
  ``Origin: null``), and ``Sec-Fetch-Site`` is ``same-origin`` or ``none``
  on a POST;
* **Framed only by the page.** The sandbox page's CSP says
  ``frame-ancestors`` the inspector page's origin, scripts and connections
  from its own origin only, frames from its own origin (the view), no
  objects, no base URL, no forms;
* **The view's CSP is built from ``_meta.ui.csp``** (`view_csp`), exactly as
  apps.mdx, "Content Security Policy Enforcement", writes it, with its
  restrictive default when ``csp`` is absent (``connect-src 'none'``, no
  external origin). Only origins of the form the server layer accepts at
  registration (``scheme://host[:port]``, http/https/ws/wss, an optional
  ``*.``, the whole string: no final newline) are pasted; anything else is dropped and reported (`BuiltCsp`):
  the host may restrict, never loosen ("No Loosening"). The policy also
  carries ``sandbox allow-scripts``, so the view keeps an opaque origin
  even if it were opened outside its iframe;
* **Views are kept briefly.** The sandbox page posts the HTML the page gave it
  (``ui/notifications/sandbox-resource-ready``) to ``views`` and frames
  ``views/ID``; the last `KEEP` views are kept (a reload of the frame works),
  each at most `MAX_VIEW` bytes.

Routes, under ``/SANDBOX_TOKEN/``: ``GET sandbox`` (the proxy page),
``GET sandbox.js``, ``POST views`` (``{"html", "csp", "permissions"}`` ->
``{"url", "csp", "dropped"}``), ``GET views/ID``.
"""

from __future__ import annotations

import hmac
import itertools
import re
from collections import OrderedDict
from importlib import resources
from typing import Any, Awaitable, Callable, MutableMapping, NamedTuple

import orjson

__all__ = ["SandboxApp", "BuiltCsp", "view_csp", "sandbox_csp", "KEEP", "MAX_VIEW", "DEFAULT_VIEW_CSP"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

#: How many views the sandbox keeps.
KEEP = 64
#: Largest view HTML, in bytes.
MAX_VIEW = 1 << 20
#: apps.mdx, "Restrictive Default", when ``_meta.ui.csp`` is absent (plus what `view_csp` always adds).
DEFAULT_VIEW_CSP = (
    "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; media-src 'self' data:; connect-src 'none'"
)
#: One whole origin: matched with ``fullmatch`` (``$`` with ``match`` would let a final newline through).
_ORIGIN = re.compile(r"(?:https?|wss?)://(?:\*\.)?[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]{1,5})?")
_CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
_PERMISSIONS = {"camera": "camera", "microphone": "microphone", "geolocation": "geolocation", "clipboardWrite": "clipboard-write"}
_FETCH_SITES = (b"same-origin", b"none")
_CHECKED = (b"host", b"origin", b"sec-fetch-site")


class BuiltCsp(NamedTuple):
    """A view's policy: the header value, the origins applied per key, and what was dropped and why."""

    policy: str
    applied: dict[str, list[str]]
    dropped: list[str]


def view_csp(csp: Any) -> BuiltCsp:
    """The view's Content-Security-Policy from its resource's ``_meta.ui.csp`` (None or absent: the default)."""
    applied: dict[str, list[str]] = {}
    dropped: list[str] = []
    if csp is None:
        return BuiltCsp(DEFAULT_VIEW_CSP + "; frame-src 'none'; object-src 'none'; base-uri 'self'; sandbox allow-scripts", {}, [])
    if type(csp) is not dict:
        dropped.append("_meta.ui.csp is not an object: the restrictive default applies")
        return BuiltCsp(DEFAULT_VIEW_CSP + "; frame-src 'none'; object-src 'none'; base-uri 'self'; sandbox allow-scripts", {}, dropped)
    for key in _CSP_KEYS:
        value = csp.get(key)
        if value is None:
            continue
        if type(value) is not list:
            dropped.append(f"{key} is not a list of origins: ignored")
            continue
        good = []
        for origin in value:
            if type(origin) is str and _ORIGIN.fullmatch(origin):
                good.append(origin)
            else:
                dropped.append(f"{key}: {orjson.dumps(origin).decode()[:80]} is not scheme://host[:port]: not allowed")
        if good:
            applied[key] = good
    resource = " ".join(applied.get("resourceDomains", ()))
    connect = " ".join(applied.get("connectDomains", ()))
    parts = [
        "default-src 'none'",
        f"script-src 'self' 'unsafe-inline' {resource}".rstrip(),
        f"style-src 'self' 'unsafe-inline' {resource}".rstrip(),
        f"connect-src 'self' {connect}".rstrip(),
        f"img-src 'self' data: {resource}".rstrip(),
        f"font-src 'self' {resource}".rstrip(),
        f"media-src 'self' data: {resource}".rstrip(),
        f"frame-src {' '.join(applied.get('frameDomains', ())) or chr(39) + 'none' + chr(39)}",
        "object-src 'none'",
        f"base-uri {' '.join(applied.get('baseUriDomains', ())) or chr(39) + 'self' + chr(39)}",
        "sandbox allow-scripts",
    ]
    return BuiltCsp("; ".join(parts), applied, dropped)


def allow_attribute(permissions: Any) -> str:
    """The inner iframe's ``allow`` from ``_meta.ui.permissions`` (known features only)."""
    if type(permissions) is not dict:
        return ""
    return "; ".join(feature for key, feature in _PERMISSIONS.items() if key in permissions)


def sandbox_csp(page_origins: list[str]) -> str:
    """The sandbox page's own policy: framed by the inspector page only; its script and frames from itself."""
    return (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; frame-src 'self'; "
        f"frame-ancestors {' '.join(page_origins)}; object-src 'none'; base-uri 'none'; form-action 'none'"
    )


def _static(name: str) -> bytes:
    return resources.files(__package__).joinpath("static", name).read_bytes()


class SandboxApp:
    """ASGI app of the sandbox proxy at ``http://127.0.0.1:PORT/TOKEN/``; set `port` and `page_port` once bound."""

    def __init__(self, token: str, port: int = 0, page_port: int = 0) -> None:
        if len(token) < 16:
            raise ValueError("the token must be at least 16 characters")
        self.token = token.encode()
        self.port = port
        self.page_port = page_port
        self.views: OrderedDict[int, tuple[bytes, str, str]] = OrderedDict()
        self.numbers = itertools.count(1)
        self.script = _static("sandbox.js")

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.origin}/{self.token.decode()}/sandbox"

    def refusal(self, scope: Scope) -> str | None:
        headers: dict[bytes, bytes] = {}
        for name, value in scope.get("headers", ()):
            name = bytes(name).lower()
            if name in headers and name in _CHECKED:
                return f"more than one {name.decode()} header"
            headers[name] = bytes(value)
        host = headers.get(b"host", b"")
        if host not in (b"127.0.0.1:%d" % self.port, b"localhost:%d" % self.port):
            return "Host must be 127.0.0.1 or localhost with this port"
        token, _, _ = str(scope.get("path", "")).lstrip("/").partition("/")
        if not hmac.compare_digest(token.encode(), self.token):
            return "wrong token"
        if scope.get("method") == "POST":
            if headers.get(b"origin") != b"http://" + host:
                return "a POST must come from the sandbox page"
            if headers.get(b"sec-fetch-site", b"same-origin") not in _FETCH_SITES:
                return "not a request of the sandbox page"
        return None

    def _headers(self, csp: str) -> list[tuple[bytes, bytes]]:
        return [
            (b"content-security-policy", csp.encode()),
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"no-referrer"),
            (b"cache-control", b"no-store"),
        ]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        page = [f"http://127.0.0.1:{self.page_port}", f"http://localhost:{self.page_port}"]
        own = sandbox_csp(page)
        why = self.refusal(scope)
        if why is not None:
            await _reply(send, 403, why.encode(), b"text/plain; charset=utf-8", self._headers(own))
            return
        route = str(scope["path"]).lstrip("/").partition("/")[2]
        method = scope["method"]
        if route == "sandbox" and method == "GET":
            await _reply(send, 200, _PAGE, b"text/html; charset=utf-8", self._headers(own))
        elif route == "sandbox.js" and method == "GET":
            await _reply(send, 200, self.script, b"text/javascript; charset=utf-8", self._headers(own))
        elif route == "views" and method == "POST":
            await self.store(receive, send, own)
        elif route.startswith("views/") and method == "GET":
            number = route[6:]
            view = self.views.get(int(number)) if number.isdigit() and len(number) < 12 else None
            if view is None:
                await _reply(send, 404, b"no such view", b"text/plain; charset=utf-8", self._headers(own))
            else:
                html, csp, _ = view
                await _reply(send, 200, html, b"text/html; charset=utf-8", self._headers(csp))
        else:
            await _reply(send, 404, b"not found", b"text/plain; charset=utf-8", self._headers(own))

    async def store(self, receive: Receive, send: Send, own: str) -> None:
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body.extend(message.get("body", b""))
            if len(body) > MAX_VIEW + 65536:
                await _reply(send, 413, b"the view is too large", b"text/plain; charset=utf-8", self._headers(own))
                return
            if not message.get("more_body", False):
                break
        try:
            request = orjson.loads(body)
        except orjson.JSONDecodeError:
            request = None
        if type(request) is not dict or type(request.get("html")) is not str:
            await _reply(send, 400, b'the body is {"html": "...", "csp": {...}}', b"text/plain; charset=utf-8", self._headers(own))
            return
        built = view_csp(request.get("csp"))
        number = next(self.numbers)
        allow = allow_attribute(request.get("permissions"))
        self.views[number] = (request["html"].encode(), built.policy, allow)
        while len(self.views) > KEEP:
            self.views.popitem(last=False)
        answer = {"url": f"views/{number}", "csp": built.policy, "applied": built.applied, "dropped": built.dropped, "allow": allow}
        await _reply(send, 200, orjson.dumps(answer), b"application/json", self._headers(own))


_PAGE = b"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
<title>wiremcp sandbox proxy</title><script src="sandbox.js" defer></script></head>
<body></body></html>
"""


async def _reply(send: Send, status: int, body: bytes, kind: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", kind), (b"content-length", b"%d" % len(body)), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body})
