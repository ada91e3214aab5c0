"""Test set-up for the OAuth proxy: the upstream provider, the proxied server, a browser-driven login.

* `UpstreamProvider` runs ``node tests/auth/as/upstream.mjs``: oidc-provider
  with registration off and one pre-registered client, the proxy's.
* `ProxiedServer` runs ``python examples/oauth_proxy.py`` (the documented
  example) against it on a free loopback port, with its records in a SQLite
  file of the test's.
* `ChromiumLogin` is an `OAuthClient` redirect handler: the authorization URL
  is opened in headless Chromium (`wiremcp.testing.chromium`), the test's
  ``steps`` act in the page as a person would (approve, sign in), and the
  answer arrives on a loopback redirect URI (`LoopbackRedirect`).
* `Sink` is a loopback redirect URI that records what reaches it, for the
  clients the tests drive by hand (`HandClient`).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from wiremcp.auth import LoopbackRedirect
from wiremcp.auth._http import Fetcher
from wiremcp.testing.chromium import CHROMIUM, Chromium, Page

from ..server._oauth import AS_DIR, ROOT, _RUNNING, ec_key, free_port

PROXY_CLIENT = "mcp-proxy"
PROXY_SECRET = "the-proxy-secret-at-the-upstream-provider"
STATE_KEY = "a-test-state-key-of-32-bytes-xxx"


class UpstreamProvider:
    """oidc-provider as the upstream provider; ``format``: "jwt" or "opaque" access tokens."""

    def __init__(self, node: str, tmp: Path, proxy_url: str, *, format: str = "jwt") -> None:
        self.format = format
        self.port = free_port()
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.resource = f"http://127.0.0.1:{self.port}/notes-api"
        config = {
            "issuer": self.issuer, "port": self.port, "keys": [ec_key("up1")[0]], "resource": self.resource, "format": format,
            "client": {"client_id": PROXY_CLIENT, "client_secret": PROXY_SECRET, "redirect_uri": proxy_url + "/oauth/callback"},
        }
        path = tmp / f"upstream-{uuid.uuid4().hex[:6]}.json"
        path.write_text(json.dumps(config))
        self.proc = subprocess.Popen([node, str(AS_DIR / "upstream.mjs"), str(path)], cwd=AS_DIR,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _RUNNING.add(self.proc)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().decode()
        if not line.startswith("ready"):
            self.stop()
            raise AssertionError(f"the upstream provider did not start: {line}")

    def stop(self) -> None:
        _stop(self.proc)


class ProxiedServer:
    """``examples/oauth_proxy.py`` in front of ``upstream``: ``url`` (origin) and ``mcp`` (endpoint)."""

    def __init__(
        self, upstream: UpstreamProvider, port: int, store: Path, *, token_lifetime: int = 300, env: dict[str, str] | None = None
    ) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.mcp = self.url + "/mcp"
        self.store = store
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT / "src"),
            "WIREMCP_AUTH_PROXY_URL": self.url,
            "WIREMCP_AUTH_PROXY_UPSTREAM": upstream.issuer,
            "WIREMCP_AUTH_PROXY_CLIENT_ID": PROXY_CLIENT,
            "WIREMCP_AUTH_PROXY_CLIENT_SECRET": PROXY_SECRET,
            "WIREMCP_AUTH_PROXY_UPSTREAM_RESOURCE": upstream.resource,
            "WIREMCP_AUTH_PROXY_INTROSPECT": "1" if upstream.format == "opaque" else "0",
            "WIREMCP_AUTH_PROXY_STORE": str(store),
            "WIREMCP_AUTH_PROXY_TOKEN_LIFETIME": str(token_lifetime),
            "WIREMCP_AUTH_LEEWAY": "0",
            "WIREMCP_STATE_KEY": STATE_KEY,
            **(env or {}),
        }
        self.proc = subprocess.Popen([sys.executable, str(ROOT / "examples" / "oauth_proxy.py")], env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _RUNNING.add(self.proc)
        deadline = time.monotonic() + 60
        while True:  # polled until it serves: the process gives no other sign
            if self.proc.poll() is not None:
                raise AssertionError("the proxied server exited: " + self.proc.stderr.read().decode())  # type: ignore[union-attr]
            try:
                if httpx.get(self.url + "/.well-known/oauth-authorization-server", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise AssertionError("the proxied server did not serve within 60 s")
            time.sleep(0.1)

    def stop(self) -> str:
        _stop(self.proc)
        return self.proc.stderr.read().decode() if self.proc.stderr else ""


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    _RUNNING.discard(proc)
    if proc.stdout is not None:
        proc.stdout.close()


Step = Callable[[Page], Awaitable[None]]


class ChromiumLogin:
    """A redirect handler for `OAuthClient`: the login happens in ``page`` (see the module docs)."""

    def __init__(self, page: Page, steps: list[Step]) -> None:
        self.page = page
        self.steps = steps
        self.urls: list[str] = []
        self._loopback = LoopbackRedirect(open_browser=lambda url: None, timeout=60)

    async def redirect_uri(self) -> str:
        return await self._loopback.redirect_uri()

    async def authorize(self, url: str, fetch: Fetcher) -> Mapping[str, str]:
        self.urls.append(url)
        answer = asyncio.ensure_future(self._loopback.authorize(url, fetch))
        await asyncio.sleep(0)  # the listener now waits for this login's answer
        await self.page.goto(url)
        for step in self.steps:
            await step(self.page)
        return await answer

    async def aclose(self) -> None:
        await self._loopback.aclose()


async def approve(page: Page) -> None:
    await page.wait_for("!!document.querySelector('#approve')")
    await page.click("#approve")


async def sign_in(page: Page, user: str = "alice") -> None:
    await page.wait_for("!!document.querySelector('#login')")
    await page.fill("#login", user)
    await page.click("#signin")


class Sink:
    """A loopback HTTP listener recording the paths with query that reach it (a redirect URI)."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        self._server: asyncio.Server | None = None
        self.url = ""

    async def start(self) -> Sink:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}/cb"
        return self

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        line = (await reader.readline()).decode("latin-1").split()
        while (await reader.readline()) not in (b"\r\n", b"\n", b""):
            pass
        if len(line) >= 2 and not line[1].startswith("/favicon"):
            self.hits.append(line[1])
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 9\r\nConnection: close\r\n\r\n<p id=ok>")
        await writer.drain()
        writer.close()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class HandClient:
    """An MCP client driven by hand: registered at the proxy, building its own authorization requests."""

    def __init__(self, proxy_url: str, redirect_uri: str, name: str) -> None:
        self.proxy_url = proxy_url
        self.redirect_uri = redirect_uri
        answer = httpx.post(proxy_url + "/oauth/register", json={
            "redirect_uris": [redirect_uri], "client_name": name, "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
        }, timeout=10)
        assert answer.status_code == 201, answer.text
        self.client_id = answer.json()["client_id"]
        self.verifier = secrets.token_urlsafe(48)
        self.state = secrets.token_urlsafe(12)

    def authorize_url(self, *, redirect_uri: str | None = None, scope: str = "notes:read") -> str:
        challenge = b64url(hashlib.sha256(self.verifier.encode()).digest())
        return self.proxy_url + "/oauth/authorize?" + urlencode({
            "response_type": "code", "client_id": self.client_id, "redirect_uri": redirect_uri or self.redirect_uri,
            "state": self.state, "code_challenge": challenge, "code_challenge_method": "S256", "scope": scope,
            "resource": self.proxy_url + "/mcp",
        })

    def redeem(self, code: str) -> httpx.Response:
        return httpx.post(self.proxy_url + "/oauth/token", data={
            "grant_type": "authorization_code", "code": code, "redirect_uri": self.redirect_uri,
            "code_verifier": self.verifier, "client_id": self.client_id, "resource": self.proxy_url + "/mcp",
        }, timeout=10)


def mcp_post(url: str, token: str) -> httpx.Response:
    """A tools/list at the MCP endpoint with ``token``, by hand."""
    return httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}, timeout=10, headers={
        "authorization": f"Bearer {token}", "accept": "application/json, text/event-stream",
        "content-type": "application/json", "mcp-protocol-version": "2026-07-28",
    })


def refresh(proxy_url: str, client_id: str, refresh_token: str) -> httpx.Response:
    return httpx.post(proxy_url + "/oauth/token", data={
        "grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id,
    }, timeout=10)


def open_chromium() -> Iterator[Chromium]:
    """Headless Chromium (Debian's, from .ci/system-packages) for a fixture: ``yield from open_chromium()``."""
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: .ci/system-packages installs Debian's chromium")
    browser = Chromium()
    try:
        yield browser
    finally:
        browser.close()


def proxied_stack(node: str, tmp: Path, **options: Any) -> Iterator[tuple[UpstreamProvider, ProxiedServer]]:
    """An upstream provider and examples/oauth_proxy.py in front of it, stopped after: for a fixture.

    ``format`` goes to `UpstreamProvider`, the other ``options`` to `ProxiedServer`.
    """
    port = free_port()
    upstream = UpstreamProvider(node, tmp, f"http://127.0.0.1:{port}", **{k: v for k, v in options.items() if k == "format"})
    try:
        server = ProxiedServer(upstream, port, tmp / "proxy.sqlite3", **{k: v for k, v in options.items() if k != "format"})
        try:
            yield upstream, server
        finally:
            server.stop()
    finally:
        upstream.stop()
