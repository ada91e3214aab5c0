"""`OAuthClient.logout` (RFC 7009) and DPoP nonces given on success (RFC 9449 section 8), against the
real authorization server (oidc-provider, tests/auth/as/) and ``examples/protected.py``, over HTTP.

* logout revokes the refresh token at the ``revocation_endpoint`` (the access tokens of the grant go
  with it; oidc-provider does not revoke JWT access tokens one by one, and says so with
  ``unsupported_token_type``, which is no failure then): introspection then says inactive, the store
  holds nothing, the client holds no token;
* a revocation the server refuses (a confidential client with a wrong secret) is one line in the
  outcome's ``problem``, and the tokens are forgotten all the same;
* with nonces on at the authorization server, its token endpoint answers a proof without a nonce with
  200 and a ``DPoP-Nonce``; the client keeps it, so the refresh (which requires a nonce) goes through
  at the first try: the server counted no ``use_dpop_nonce`` refusal.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

pytest.importorskip("jwt")

import wiremcp  # noqa: E402
from wiremcp.auth import (  # noqa: E402
    ClientCredentialsGrant,
    HeadlessRedirect,
    MemoryTokenStore,
    OAuthClient,
    Revocation,
    dpop_proof,
    load_private_key,
)

from .server._oauth import CLIENT_SECRET, AuthorizationServer, ProtectedServer, ec_key  # noqa: E402

pytestmark = pytest.mark.slow


def _servers(node: str, tmp: Any, **kw: Any) -> Iterator[tuple[AuthorizationServer, ProtectedServer]]:
    issuer = AuthorizationServer(node, tmp, **kw).start([ec_key("k1")])
    try:
        protected = ProtectedServer(issuer.issuer, leeway=0)
        try:
            yield issuer, protected
        finally:
            protected.stop()
    finally:
        issuer.stop()


@pytest.fixture(scope="module")
def servers(node: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AuthorizationServer, ProtectedServer]]:
    yield from _servers(node, tmp_path_factory.mktemp("as"))


@pytest.fixture(scope="module")
def nonce_servers(node: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AuthorizationServer, ProtectedServer]]:
    # access tokens of 5 s count as expired at once (EXPIRY_SKEW): every call after the first refreshes
    yield from _servers(node, tmp_path_factory.mktemp("as"), dpop_nonce=True, dynamic_ttl=5)


def test_logout_revokes_the_refresh_token(servers: tuple[AuthorizationServer, ProtectedServer]) -> None:
    issuer, protected = servers
    store = MemoryTokenStore()

    async def go() -> tuple[dict[str, Any], dict[str, Any], list[Revocation], bool]:
        auth = OAuthClient(client_name="revoke", redirect_handler=HeadlessRedirect(), store=store)
        try:
            async with wiremcp.Client.http(protected.url, auth=auth) as client:
                await client.call_tool("whoami", {})
                tokens = dict(auth._token or {})
                active = issuer.introspect(tokens["refresh_token"], "refresh_token")
                outcomes = await auth.logout()
                return tokens, active, outcomes, auth.authorized
        finally:
            await auth.aclose()

    tokens, active, outcomes, authorized = asyncio.run(go())
    assert active["active"] is True
    [outcome] = outcomes
    assert (outcome.issuer, outcome.resource) == (issuer.issuer, protected.url)
    assert outcome.offered and outcome.revoked == ["refresh_token"] and outcome.problem is None and outcome.ok
    assert issuer.introspect(tokens["refresh_token"], "refresh_token") == {"active": False}
    # the AS refuses the refresh token now, from its client with the key it is bound to
    key = load_private_key(tokens["dpop_key"])
    refreshed = httpx.post(
        f"{issuer.issuer}/token", timeout=10,
        data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": _client_id(tokens)},
        headers={"DPoP": dpop_proof(key, "POST", f"{issuer.issuer}/token")},
    )
    assert refreshed.status_code == 400 and refreshed.json()["error"] == "invalid_grant"
    assert asyncio.run(store.keys()) == [] and not authorized


def _client_id(tokens: dict[str, Any]) -> str:
    import jwt

    return str(jwt.decode(tokens["access_token"], options={"verify_signature": False})["client_id"])


def test_a_refused_revocation_is_reported_and_the_tokens_still_go(servers: tuple[AuthorizationServer, ProtectedServer]) -> None:
    issuer, protected = servers
    store = MemoryTokenStore()

    async def go() -> list[Revocation]:
        auth = OAuthClient(grant=ClientCredentialsGrant("reader", client_secret=CLIENT_SECRET), store=store)
        try:
            async with wiremcp.Client.http(protected.url, auth=auth) as client:
                await client.call_tool("whoami", {})
        finally:
            await auth.aclose()
        assert len(await store.keys()) == 1
        # another process, the same store, a wrong secret: the revocation endpoint refuses the client
        wrong = OAuthClient(grant=ClientCredentialsGrant("reader", client_secret="not-the-secret"), store=store)
        try:
            return await wrong.logout(protected.url)
        finally:
            await wrong.aclose()

    [outcome] = asyncio.run(go())
    assert outcome.offered and outcome.revoked == [] and not outcome.ok
    assert outcome.problem is not None and "\n" not in outcome.problem
    assert outcome.problem.startswith(f"the access token: {issuer.issuer}/token/revocation answered HTTP 401, error 'invalid_client'")
    assert asyncio.run(store.keys()) == []


def test_a_nonce_given_on_success_is_used_for_the_next_proof(nonce_servers: tuple[AuthorizationServer, ProtectedServer]) -> None:
    issuer, protected = nonce_servers

    async def go() -> tuple[dict[str, Any], dict[str, Any]]:
        auth = OAuthClient(client_name="nonces", redirect_handler=HeadlessRedirect())
        try:
            async with wiremcp.Client.http(protected.url, auth=auth) as client:
                await client.call_tool("whoami", {})
                first = dict(auth._token or {})
                await client.call_tool("whoami", {})  # expired already: refreshed first, with the nonce
                return first, dict(auth._token or {})
        finally:
            await auth.aclose()

    first, second = asyncio.run(go())
    assert first["token_type"].lower() == "dpop"
    assert second["access_token"] != first["access_token"]  # the refresh happened
    assert issuer.stats()["use_dpop_nonce"] == 0
    # the control: a refresh whose proof has no nonce is refused for it at this server
    refused = httpx.post(
        f"{issuer.issuer}/token", timeout=10,
        data={"grant_type": "refresh_token", "refresh_token": second["refresh_token"], "client_id": _client_id(second)},
        headers={"DPoP": dpop_proof(load_private_key(second["dpop_key"]), "POST", f"{issuer.issuer}/token")},
    )
    assert refused.status_code == 400 and refused.json()["error"] == "use_dpop_nonce" and refused.headers["dpop-nonce"]
    assert issuer.stats()["use_dpop_nonce"] == 1
