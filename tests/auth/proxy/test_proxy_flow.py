"""The OAuth proxy end to end: oidc-provider upstream (pre-registered client only), the proxied
example server (examples/oauth_proxy.py), headless Chromium as the person, the wiremcp client.

The wiremcp client registers with the proxy (RFC 7591), the person sees the proxy's consent page
naming the client and its redirect URI, approves, signs in upstream, and the client calls a scoped
tool with the proxy's own token (aud = the MCP server, sub = the upstream user, client_id = the MCP
client). The token runs out and the client refreshes it (rotation); a rotated-out refresh token
presented again revokes the grant; the person revokes the consent on the proxy's consents page and
the client's tokens stop working. Upstream access tokens are JWTs, then opaque (introspection).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

pytest.importorskip("jwt")

import jwt  # noqa: E402

import wiremcp  # noqa: E402
from wiremcp.auth import MemoryTokenStore, OAuthClient  # noqa: E402
from wiremcp.testing.chromium import Chromium, Page  # noqa: E402

from peers import python_peer  # noqa: E402

from ._harness import (  # noqa: E402
    ChromiumLogin, ProxiedServer, UpstreamProvider, approve, mcp_post, open_chromium, proxied_stack, refresh, sign_in,
)

pytestmark = pytest.mark.slow

TTL = 3  # seconds the proxy's access tokens live here
HERE = Path(__file__).resolve().parent
SDK = "mcp-1.30.0"  # the official SDK's client (tests/peers.py)


class Stack:
    def __init__(self, upstream: UpstreamProvider, server: ProxiedServer) -> None:
        self.upstream = upstream
        self.server = server


@pytest.fixture(params=["jwt", "opaque"])
def stack(request: pytest.FixtureRequest, node: str, tmp_path: Path) -> Iterator[Stack]:
    for upstream, server in proxied_stack(node, tmp_path, format=request.param, token_lifetime=TTL):
        yield Stack(upstream, server)


@pytest.fixture
def chromium() -> Iterator[Chromium]:
    yield from open_chromium()


def test_the_wiremcp_client_signs_in_through_the_proxy(stack: Stack, chromium: Any) -> None:
    server = stack.server
    seen: dict[str, Any] = {}

    async def read_consent(page: Page) -> None:
        await page.wait_for("!!document.querySelector('#approve')")
        seen["consent_url"] = await page.evaluate("location.href")
        seen["consent"] = await page.evaluate(
            "({name: document.querySelector('#client-name').textContent, id: document.querySelector('#client-id').textContent,"
            " redirect: document.querySelector('#redirect-uri').textContent,"
            " scopes: Array.from(document.querySelectorAll('#scopes code')).map(e => e.textContent)})"
        )

    async def go() -> None:
        async with Page(chromium) as page:
            login = ChromiumLogin(page, [read_consent, approve, sign_in])
            auth = OAuthClient(client_name="notes-cli", redirect_handler=login, store=MemoryTokenStore())
            try:
                async with wiremcp.Client.http(server.mcp, auth=auth) as client:
                    seen["whoami"] = (await client.call_tool("whoami", {})).structured_content
                    seen["note"] = (await client.call_tool("add_note", {"text": "hello"})).structured_content
                    seen["client"] = dict(auth._client_info or {})
                    seen["token1"] = dict(auth._token or {})
                    seen["sealed"] = store_dump(server.store)
                    # the proxy's token runs out (no leeway at the server): the client refreshes it
                    await asyncio.sleep(max(0.0, seen["token1"]["expires_at"] - time.time()) + 1)
                    seen["whoami2"] = (await client.call_tool("whoami", {})).structured_content
                    seen["token2"] = dict(auth._token or {})
                    seen["logins"] = len(login.urls)
                # the person revokes the consent on the proxy's page
                await page.goto(server.url + "/oauth/consents")
                seen["consents"] = await page.evaluate("document.querySelector('#consents').innerText")
                await page.click(f"#revoke-{seen['client']['client_id']}")
                await page.wait_for("!!document.querySelector('#none')")
            finally:
                await login.aclose()
                await auth.aclose()

    asyncio.run(go())
    client_id = seen["client"]["client_id"]
    # the consent page named the client, its redirect URI and the scopes
    assert seen["consent_url"].startswith(server.url + "/oauth/authorize?")
    assert seen["consent"]["name"] == "notes-cli" and seen["consent"]["id"] == client_id
    assert seen["consent"]["redirect"].startswith("http://127.0.0.1:") and seen["consent"]["redirect"].endswith("/callback")
    assert set(seen["consent"]["scopes"]) == {"notes:read", "notes:write"}
    # the tools saw the upstream user and the MCP client, through the proxy's own token
    assert seen["whoami"] == {"subject": "alice", "client_id": client_id, "scopes": ["notes:read", "notes:write"]}
    assert seen["note"] == {"result": 1}
    token1 = seen["token1"]
    claims = jwt.decode(token1["access_token"], options={"verify_signature": False})
    assert claims["iss"] == server.url and claims["aud"] == server.mcp and claims["sub"] == "alice"
    assert claims["client_id"] == client_id
    assert jwt.get_unverified_header(token1["access_token"])["typ"] == "at+jwt"
    # refreshed without a second login, and rotated
    assert seen["logins"] == 1 and seen["whoami2"] == seen["whoami"]
    token2 = seen["token2"]
    assert token2["access_token"] != token1["access_token"] and token2["refresh_token"] != token1["refresh_token"]
    # revoked on the consents page: the access token and the refresh token stop working
    assert "notes-cli" in seen["consents"]
    refused = mcp_post(server.mcp, token2["access_token"])
    assert refused.status_code == 401 and "invalid_token" in refused.headers["www-authenticate"]
    assert refresh(server.url, client_id, token2["refresh_token"]).json()["error"] == "invalid_grant"
    # the grant (with the upstream tokens), the client, the consent, the refresh token were in the
    # SQLite file, sealed: neither the user, nor the client id, nor a token, nor a field name shows
    dump = seen["sealed"]
    for kind in ("grant", "client", "consent", "refresh", "session"):
        assert f"wiremcp.oauthproxy:{kind}:" in dump
    for clear in ("alice", client_id, token1["refresh_token"], "access_token", "redirect_uri"):
        assert clear not in dump


@pytest.mark.parametrize("stack", ["jwt"], indirect=True)
def test_the_official_sdk_client_signs_in_through_the_proxy(stack: Stack, chromium: Chromium) -> None:
    """The official SDK's OAuthClientProvider (mcp 1.30.0, its own venv) in the same flow, then revoked."""
    server = stack.server
    proc = subprocess.Popen([str(python_peer(SDK)), str(HERE / "sdk_client.py"), server.mcp],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("AUTHORIZE "), line + proc.communicate(timeout=30)[1]
        authorize = line.split(" ", 1)[1].strip()

        async def login() -> tuple[str, str, dict[str, Any]]:
            async with Page(chromium) as page:
                await page.goto(authorize)
                await page.wait_for("!!document.querySelector('#approve')")
                name = str(await page.evaluate("document.querySelector('#client-name').textContent"))
                await approve(page)
                await sign_in(page, "bob")
                await page.wait_for("!!document.querySelector('#ok')")
                out, err = await asyncio.to_thread(proc.communicate, timeout=90)
                assert proc.returncode == 0, err[-4000:]
                result = json.loads(out.strip().splitlines()[-1].split(" ", 1)[1])
                # bob revokes the SDK client on the proxy's consents page
                await page.goto(server.url + "/oauth/consents")
                await page.click(f"#revoke-{result['client_id']}")
                await page.wait_for("!!document.querySelector('#none')")
                return name, out, result

        shown, _, result = asyncio.run(login())
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert shown == "official-sdk"
    params = parse_qs(urlsplit(authorize).query)
    assert params["code_challenge_method"] == ["S256"] and params["resource"] == [server.mcp]
    expected = {"subject": "bob", "client_id": result["client_id"], "scopes": ["notes:read", "notes:write"]}
    assert result["first"] == expected and result["second"] == expected
    assert result["refresh_token_after"] != result["refresh_token"]  # refreshed, rotated
    # revoked: its access token and its refresh token are refused
    assert mcp_post(server.mcp, result["access_token"]).status_code == 401
    assert refresh(server.url, result["client_id"], result["refresh_token_after"]).json()["error"] == "invalid_grant"


def store_dump(path: Path) -> str:
    """Every row of the SQLite store, as text."""
    with sqlite3.connect(path) as db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return json.dumps([db.execute(f"SELECT * FROM {name}").fetchall() for name in tables], default=repr)
