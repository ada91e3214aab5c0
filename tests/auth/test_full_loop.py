"""The whole loop against a real authorization server (oidc-provider, tests/auth/as/) and
``wiremcp run examples/protected.py --http``, with nothing faked in between:

``Client.http(url, auth=OAuthClient(...))`` → 401 → protected resource metadata (RFC 9728)
→ authorization server metadata (RFC 8414) → dynamic client registration (RFC 7591)
→ authorization code with PKCE S256 and ``resource`` (RFC 8707), ``iss`` checked (RFC 9207),
the login approved by the server's own interaction pages followed headlessly → a JWT
access token for this resource (RFC 9068), DPoP-bound (RFC 9449) → ``whoami`` sees the
account → the token expires (3 s, no leeway at the server) and is refreshed without a new
login → ``admin_echo`` is refused with 403 ``insufficient_scope``, the client logs in again
asking for ``admin`` (step-up) and the call succeeds.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

pytest.importorskip("jwt")

import wiremcp  # noqa: E402
from wiremcp.auth import HeadlessRedirect, MemoryTokenStore, OAuthClient  # noqa: E402
from wiremcp.auth._http import Fetcher  # noqa: E402

from .server._oauth import AuthorizationServer, ProtectedServer, ec_key  # noqa: E402

pytestmark = pytest.mark.slow

TTL = 3  # seconds an access token lives


class RecordingRedirect(HeadlessRedirect):
    """The headless handler, noting each authorization request (one per login)."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[dict[str, list[str]]] = []

    async def authorize(self, url: str, fetch: Fetcher) -> Mapping[str, str]:
        self.requests.append(parse_qs(urlsplit(url).query))
        return await super().authorize(url, fetch)


@pytest.fixture(scope="module")
def loop_servers(node: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AuthorizationServer, ProtectedServer]]:
    issuer = AuthorizationServer(node, tmp_path_factory.mktemp("as"), account="alice", dynamic_ttl=TTL).start([ec_key("k1")])
    try:
        protected = ProtectedServer(issuer.issuer, leeway=0)
        try:
            yield issuer, protected
        finally:
            protected.stop()
    finally:
        issuer.stop()


def test_full_loop(loop_servers: tuple[AuthorizationServer, ProtectedServer]) -> None:
    issuer, protected = loop_servers
    store = MemoryTokenStore()
    logins = RecordingRedirect()

    async def go() -> dict[str, Any]:
        auth = OAuthClient(client_name="full-loop", redirect_handler=logins, store=store)
        seen: dict[str, Any] = {}
        try:
            async with wiremcp.Client.http(protected.url, auth=auth) as client:
                first = await client.call_tool("whoami", {})
                seen["identity"] = first.structured_content
                seen["client"] = dict(auth._client_info or {})
                seen["token1"] = dict(auth._token or {})

                # the access token runs out; the next call refreshes it, no new login
                await asyncio.sleep(max(0.0, seen["token1"]["expires_at"] - time.time()) + 0.5)
                again = await client.call_tool("whoami", {})
                seen["identity_after_refresh"] = again.structured_content
                seen["token2"] = dict(auth._token or {})
                seen["logins_before_step_up"] = len(logins.requests)

                # step-up: admin_echo needs `admin`
                echoed = await client.call_tool("admin_echo", {"text": "hello"})
                seen["echo"] = echoed.text
                seen["echo_error"] = echoed.is_error
                after = await client.call_tool("whoami", {})
                seen["identity_after_step_up"] = after.structured_content
        finally:
            await auth.aclose()
        return seen

    seen = asyncio.run(go())

    # discovery led to this server's issuer and resource; the client registered itself there
    client = seen["client"]
    assert client["kind"] == "registered" and client["issuer"] == issuer.issuer
    # the login: PKCE S256, the resource indicator, the challenged scope
    first_login = logins.requests[0]
    assert first_login["code_challenge_method"] == ["S256"] and len(first_login["code_challenge"][0]) == 43
    assert first_login["resource"] == [protected.url]
    assert first_login["client_id"] == [client["client_id"]]
    assert "mcp" in first_login["scope"][0].split() and "admin" not in first_login["scope"][0].split()

    # the tool sees the identity the authorization server vouched for
    assert seen["identity"] == {"subject": "alice", "client_id": client["client_id"], "scopes": ["mcp"]}
    token1 = seen["token1"]
    assert token1["token_type"].lower() == "dpop"  # oidc-provider offers DPoP; the client used it
    assert token1.get("refresh_token")

    # refresh: a new access token, the same identity, no second login
    assert seen["logins_before_step_up"] == 1
    assert seen["token2"]["access_token"] != token1["access_token"]
    assert seen["identity_after_refresh"] == seen["identity"]

    # step-up: a second login asking for admin too, then the call succeeds
    assert len(logins.requests) == 2
    assert {"mcp", "admin"} <= set(logins.requests[1]["scope"][0].split())
    assert seen["echo"] == "hello" and not seen["echo_error"]
    assert seen["identity_after_step_up"]["scopes"] == ["admin", "mcp"]
    assert seen["identity_after_step_up"]["subject"] == "alice"


def test_a_new_client_refreshes_a_stored_expired_token_without_logging_in(
    loop_servers: tuple[AuthorizationServer, ProtectedServer],
) -> None:
    """What ``wiremcp call --auth`` does in a new process: the stored token has expired, so the
    401 leads to discovery, the stored refresh token, and a call that succeeds with no login."""
    issuer, protected = loop_servers
    store = MemoryTokenStore()

    async def once(handler: RecordingRedirect) -> Any:
        auth = OAuthClient(client_name="full-loop", redirect_handler=handler, store=store)
        try:
            async with wiremcp.Client.http(protected.url, auth=auth) as client:
                return (await client.call_tool("whoami", {})).structured_content, dict(auth._token or {})
        finally:
            await auth.aclose()

    first_logins, second_logins = RecordingRedirect(), RecordingRedirect()
    identity, token = asyncio.run(once(first_logins))
    time.sleep(max(0.0, token["expires_at"] - time.time()) + 0.5)
    identity2, token2 = asyncio.run(once(second_logins))
    assert len(first_logins.requests) == 1 and second_logins.requests == []
    assert identity2 == identity and identity["subject"] == "alice"
    assert token2["access_token"] != token["access_token"]


def test_client_credentials_against_the_real_server(loop_servers: tuple[AuthorizationServer, ProtectedServer]) -> None:
    """The client credentials extension (extensions/auth/oauth-client-credentials.mdx) with a
    pre-registered confidential client of oidc-provider: no browser, no registration."""
    from wiremcp.auth import ClientCredentialsGrant

    from .server._oauth import CLIENT_SECRET

    _, protected = loop_servers

    async def go() -> tuple[Any, Any]:
        auth = OAuthClient(grant=ClientCredentialsGrant("admin", client_secret=CLIENT_SECRET))
        try:
            async with wiremcp.Client.http(protected.url, auth=auth) as client:
                who = (await client.call_tool("whoami", {})).structured_content
                echoed = await client.call_tool("admin_echo", {"text": "svc"})  # step-up within the grant
                return who, echoed.text
        finally:
            await auth.aclose()

    who, echoed = asyncio.run(go())
    assert who["client_id"] == "admin" and "mcp" in who["scopes"]
    assert echoed == "svc"
