"""Resource server nonces for DPoP proofs (RFC 9449 section 9), over real HTTP with tokens from
the real authorization server: a proof without this server's nonce gets 401 ``use_dpop_nonce``
and a ``DPoP-Nonce``; a proof with it is accepted; `OAuthClient` goes through this on its own."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

import wiremcp
from _servers import uvicorn_app
from wiremcp.auth import ClientCredentialsGrant, OAuthClient
from wiremcp.auth.server import DPoPNonces

from ._oauth import CLIENT_SECRET, AuthorizationServer, DPoPKey, challenge, request

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
SECRET = bytes(range(32))  # nonce_app's nonce secret (NONCE_SECRET)
LIFETIME = 300.0  # its nonces' lifetime (ResourceServer's default)


@pytest.fixture(scope="module")
def url(auth_server: AuthorizationServer) -> Iterator[str]:
    env = {"NONCE_ISSUER": auth_server.issuer, "NONCE_SECRET": SECRET.hex()}
    with uvicorn_app("nonce_app:app", HERE, env, url_env="NONCE_RESOURCE") as served:
        yield served


def call(url: str, token: str, proof: str) -> httpx.Response:
    headers = {
        "content-type": "application/json", "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "whoami",
        "authorization": f"DPoP {token}", "dpop": proof,
    }
    return httpx.post(url, json=request("tools/call", {"name": "whoami", "arguments": {}}), headers=headers, timeout=10)


def test_a_proof_without_the_nonce_is_asked_for_one(url: str, auth_server: AuthorizationServer):
    key = DPoPKey()
    token = auth_server.token("reader", url, "mcp", dpop=key)
    first = call(url, token, key.proof("POST", url, token))
    assert first.status_code == 401
    params = challenge(first)
    assert params["scheme"] == "DPoP" and params["error"] == "use_dpop_nonce"
    nonce = first.headers["dpop-nonce"]
    assert token not in first.text

    ok = call(url, token, key.proof("POST", url, token, nonce=nonce))
    assert ok.status_code == 200, ok.text
    assert ok.json()["result"]["content"][0]["text"] == "reader bound=True"

    for bad in ("0.AAAA", nonce + "x", "not-a-nonce"):  # a made-up or altered nonce is no nonce
        refused = call(url, token, key.proof("POST", url, token, nonce=bad))
        assert refused.status_code == 401 and challenge(refused)["error"] == "use_dpop_nonce"


def test_a_success_with_an_older_nonce_carries_the_current_one(url: str, auth_server: AuthorizationServer):
    """RFC 9449 section 8: the server gives the next nonce on a success, so the client moves on
    before the one it holds (the previous window's, still accepted) runs out. A proof with the
    current nonce gets none (nothing new to say)."""
    key = DPoPKey()
    token = auth_server.token("reader", url, "mcp", dpop=key)
    for _ in range(3):  # a window may turn between making the nonces and the request: then again
        window = int(time.time() // LIFETIME)
        older = DPoPNonces(SECRET, lifetime=LIFETIME, clock=lambda: time.time() - LIFETIME).current()
        current = DPoPNonces(SECRET, lifetime=LIFETIME).current()
        ok = call(url, token, key.proof("POST", url, token, nonce=older))
        fresh = call(url, token, key.proof("POST", url, token, nonce=current))
        if int(time.time() // LIFETIME) == window:
            break
    assert ok.status_code == 200, ok.text
    assert ok.headers["dpop-nonce"] == current
    assert fresh.status_code == 200 and "dpop-nonce" not in fresh.headers


def test_oauth_client_takes_a_nonce_from_a_success():
    """`OAuthClient.on_response` keeps a ``DPoP-Nonce`` whatever the status (the transport calls it on
    every answer): the next proof to that origin carries it; other origins are not given it."""
    import jwt

    async def go() -> tuple[object, object]:
        auth = OAuthClient(dpop=True)
        try:
            assert await auth.on_response(200, {"DPoP-Nonce": "n-2"}, "https://mcp.example.com/mcp") is False
            here = auth._dpop.proof("POST", "https://mcp.example.com/mcp", "token")
            there = auth._dpop.proof("POST", "https://other.example.com/mcp", "token")
            return jwt.decode(here, options={"verify_signature": False}).get("nonce"), jwt.decode(
                there, options={"verify_signature": False}
            ).get("nonce")
        finally:
            await auth.aclose()

    assert asyncio.run(go()) == ("n-2", None)


def test_oauth_client_answers_the_nonce_by_itself(url: str):
    async def go() -> str:
        auth = OAuthClient(grant=ClientCredentialsGrant("reader", client_secret=CLIENT_SECRET))
        try:
            async with wiremcp.Client.http(url, auth=auth) as client:
                return (await client.call_tool("whoami", {})).text
        finally:
            await auth.aclose()

    assert asyncio.run(go()) == "reader bound=True"


def test_nonce_windows():
    now = [1000.0]
    nonces = DPoPNonces(b"k" * 32, lifetime=100, clock=lambda: now[0])
    first = nonces.current()
    assert nonces.valid(first)
    now[0] += 100  # the next window: the previous nonce still counts
    assert nonces.valid(first) and nonces.current() != first
    now[0] += 100  # two windows on: it does not
    assert not nonces.valid(first)
    assert not DPoPNonces(b"o" * 32, lifetime=100, clock=lambda: now[0]).valid(nonces.current())  # another secret
    assert not nonces.valid(None) and not nonces.valid("") and not nonces.valid("9" * 30 + ".x")
