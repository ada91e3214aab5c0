"""Getting the authorization response: the `RedirectHandler` protocol and two handlers.

The authorization code flow sends the user agent to the authorization
endpoint and gets the answer back on the redirect URI. Rules it keeps:

* the authorization URL is checked before anything opens it: ``https``, or
  ``http`` to a loopback host (no ``javascript:``, ``file:``, custom
  schemes), no credentials, no whitespace or control characters
  (`check_authorization_url`); the browser is opened with `webbrowser`,
  which runs no shell;
* `HeadlessRedirect` follows the authorization URL with HTTP GETs
  (each through the SSRF-guarded fetcher, cookies kept in its client, at
  most ``max_hops`` redirects, each target checked as an authorization
  URL) until a ``Location`` names the redirect URI, and reads ``code``,
  ``state``, ``iss``, ``error`` from its query; it needs an authorization
  server that approves without user interaction, at once (the
  conformance suite's mock) or through redirects of its own (an
  auto-approving login page, as tests/auth/as/ has);
* `LoopbackRedirect` listens on 127.0.0.1 (never a wildcard address) on an
  ephemeral port (RFC 8252 section 7.3: the port may vary), opens the URL
  in the browser and waits (bounded by ``timeout``) for one request to
  ``/callback`` while an authorization is in progress; any other request,
  and any callback after the one taken, gets 404 and changes nothing; the
  page it answers with says only whether it worked. A callback whose
  ``state`` is not the one in the authorization URL (missing included) is
  answered 400 and the listener keeps waiting: a local page or process that
  knows the port cannot end the login with its own answer (issue 23). The
  browser is opened from a thread (a browser command may block until its
  page is done);
* a handler returns the callback's query parameters as received; the
  `OAuthClient` checks ``state`` and ``iss`` again (it has the recorded values).
"""

from __future__ import annotations

import asyncio
import logging
import webbrowser
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol
from urllib.parse import parse_qsl, urljoin, urlsplit

from ._errors import AuthError
from ._ssrf import is_loopback_host

if TYPE_CHECKING:
    from ._http import Fetcher

log = logging.getLogger("wiremcp.auth")

__all__ = ["RedirectHandler", "HeadlessRedirect", "LoopbackRedirect", "check_authorization_url", "callback_params"]


class RedirectHandler(Protocol):
    """How the authorization code flow reaches the user agent: the redirect URI to register, and a visit that returns the callback's query parameters."""

    async def redirect_uri(self) -> str:
        """The redirect URI to register and to send in the authorization request."""

    async def authorize(self, url: str, fetch: Fetcher) -> Mapping[str, str]:
        """Have the user agent visit ``url``; return the query parameters of the callback."""


def check_authorization_url(url: str) -> None:
    """Refuse an authorization URL a browser must not open (security best practices, "OAuth
    Authorization URL Validation"): an allow-list of ``https``, and ``http`` for a loopback host
    only; no credentials; no whitespace or control characters (nothing a shell could split)."""
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        raise AuthError("authorization request", "the authorization URL has whitespace or control characters: refused")
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        raise AuthError("authorization request", "not a valid authorization URL") from None
    if parts.scheme not in ("http", "https") or not host:
        raise AuthError("authorization request", f"the authorization URL must be http(s), not {parts.scheme!r}")
    if parts.scheme == "http" and not is_loopback_host(host):
        raise AuthError("authorization request", f"the authorization URL must be https (http only for loopback), not for {host!r}")
    if parts.username is not None or parts.password is not None:
        raise AuthError("authorization request", "the authorization URL has credentials in it: refused")


def callback_params(url: str) -> dict[str, str]:
    """The query parameters of a redirect URL (the first value of each name)."""
    out: dict[str, str] = {}
    for name, value in parse_qsl(urlsplit(url).query, keep_blank_values=True):
        out.setdefault(name, value)
    return out


class HeadlessRedirect:
    """Follows the authorization URL's redirects with GETs until one lands on the redirect URI."""

    def __init__(self, redirect_uri: str = "http://127.0.0.1/callback", *, max_hops: int = 10) -> None:
        self._redirect_uri = redirect_uri
        self.max_hops = max_hops

    async def redirect_uri(self) -> str:
        """The redirect URI given at construction."""
        return self._redirect_uri

    async def authorize(self, url: str, fetch: Fetcher) -> Mapping[str, str]:
        """GET ``url`` and follow its redirects until one reaches the redirect URI; that URL's query parameters."""
        target = self._redirect_uri.split("?", 1)[0]
        for _ in range(self.max_hops):
            check_authorization_url(url)
            resp = await fetch.request("GET", url, "authorization request", follow_redirects=False)
            location = resp.headers.get("location")
            if resp.status not in (301, 302, 303, 307, 308) or not location:
                raise AuthError("authorization request", f"{url.split('?', 1)[0]} answered HTTP {resp.status} without a redirect")
            location = urljoin(url, location)
            if location == target or location.startswith((target + "?", target + "#")):
                return callback_params(location)
            url = location
        raise AuthError(
            "authorization request", f"no redirect to the redirect URI within {self.max_hops} hops (does the server need a person?)"
        )


_PAGE = b"<!doctype html><meta charset=utf-8><title>wiremcp</title><p>%s You can close this window.</p>"
_WRONG_STATE = (
    b"<!doctype html><meta charset=utf-8><title>wiremcp</title><p>This answer's state does not match the "
    b"login in progress: it was ignored. If you did not start it, close this window.</p>"
)


class LoopbackRedirect:
    """A one-shot HTTP listener on 127.0.0.1 plus the system browser (RFC 8252, native apps)."""

    def __init__(
        self,
        *,
        port: int = 0,
        timeout: float = 300.0,
        open_browser: Callable[[str], object] | None = None,
    ) -> None:
        self.port = port
        self.timeout = timeout
        self._open = open_browser or webbrowser.open
        self._server: asyncio.Server | None = None
        self._waiter: asyncio.Future[dict[str, str]] | None = None
        self._state: str | None = None  # the authorization request's, while one is in progress

    async def redirect_uri(self) -> str:
        """``http://127.0.0.1:PORT/callback``, starting the loopback listener on first use."""
        if self._server is None:
            self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)
            self.port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{self.port}/callback"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), 10)
            while (await asyncio.wait_for(reader.readline(), 10)) not in (b"\r\n", b"\n", b""):
                pass
            parts = line.decode("latin-1").split()
            target = parts[1] if len(parts) >= 2 else ""
            waiting = self._waiter is not None and not self._waiter.done()
            ok = waiting and target.split("?", 1)[0] == "/callback"
            params = callback_params("http://127.0.0.1" + target) if ok else {}
            if ok and self._state is not None and params.get("state") != self._state:
                log.warning("ignored a callback on the loopback redirect URI whose state is not the login's")
                body, status = _WRONG_STATE, b"400 Bad Request"
            else:
                if ok:
                    assert self._waiter is not None
                    self._waiter.set_result(params)
                body = _PAGE % (b"Authorization received." if ok else b"Nothing to do here.")
                status = b"200 OK" if ok else b"404 Not Found"
            writer.write(
                b"HTTP/1.1 " + status + b"\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: "
                + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body
            )
            await writer.drain()
        except (OSError, asyncio.TimeoutError, UnicodeDecodeError):
            pass
        finally:
            writer.close()

    async def authorize(self, url: str, fetch: Fetcher) -> Mapping[str, str]:
        """Open ``url`` in the browser and wait for the redirect to the listener; its query parameters."""
        check_authorization_url(url)
        await self.redirect_uri()
        self._state = callback_params(url).get("state")
        self._waiter = asyncio.get_running_loop().create_future()
        # In a thread: a browser command may run until the page is done, and the page ends
        # on our own listener, which needs this event loop.
        opener = asyncio.ensure_future(asyncio.to_thread(self._open, url))
        try:
            return await asyncio.wait_for(self._waiter, self.timeout)
        except asyncio.TimeoutError:
            raise AuthError("authorization request", f"no answer on the redirect URI within {self.timeout:g} s") from None
        finally:
            self._waiter = None
            self._state = None
            if opener.done() and not opener.cancelled() and opener.exception() is not None:
                log.warning("opening the browser failed: %r", opener.exception())

    async def aclose(self) -> None:
        """Stop the loopback listener."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
