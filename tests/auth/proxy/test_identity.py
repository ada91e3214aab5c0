"""The identity mapping and the user-endpoint verifier in process, against a real loopback HTTP server.

* `UserEndpointVerifier` caches a token's identity for its lifetime: a second check within it asks
  nothing; once the entry is past (``max_age``, or GitHub's expiration header) the endpoint is asked
  again, and a token it refuses (revoked) is refused; the cache is bounded and keyed by the token's hash.
* `ClaimMap`: subjects from numeric ids, dotted and namespaced role claims, roles mapped to scopes.
* The presets' endpoints, and ``WIREMCP_AUTH_*`` settings.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from threading import Thread

import pytest

pytest.importorskip("jwt")

from wiremcp.auth.proxy import ClaimMap, UserEndpointVerifier, auth0, entra, github, google, keycloak, okta  # noqa: E402
from wiremcp.auth.proxy import upstream_from_settings, workos  # noqa: E402
from wiremcp.auth.proxy._identity import claim_at  # noqa: E402
from wiremcp.auth.proxy._presets import parse_role_scopes  # noqa: E402
from wiremcp.auth.server import AuthError  # noqa: E402


class GitHubUser:
    """A loopback ``GET /user`` in GitHub's shape: ``tokens`` maps live tokens to users; ``asked`` counts."""

    def __init__(self) -> None:
        self.tokens: dict[str, dict[str, object]] = {}
        self.expiration: str | None = None
        self.asked = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.asked += 1
                user = outer.tokens.get(self.headers.get("authorization", "").removeprefix("Bearer "))
                body = json.dumps(user or {"message": "Bad credentials"}).encode()
                self.send_response(200 if user else 401)
                self.send_header("content-type", "application/json")
                if user and outer.expiration:
                    self.send_header("github-authentication-token-expiration", outer.expiration)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/user"
        Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def endpoint() -> Iterator[GitHubUser]:
    server = GitHubUser()
    try:
        yield server
    finally:
        server.server.shutdown()
        server.server.server_close()


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_user_endpoint_identity_is_cached_for_its_lifetime_then_asked_again(endpoint: GitHubUser) -> None:
    endpoint.tokens["gho_alice"] = {"id": 1001, "login": "alice", "email": "alice@example.com"}
    clock = Clock()

    async def go() -> None:
        verifier = UserEndpointVerifier(endpoint.url, subject="id", max_age=60, clock=clock)
        try:
            first = await verifier.verify("gho_alice")
            second = await verifier.verify("gho_alice")
            assert first.subject == "1001" and second is first and endpoint.asked == 1
            assert "gho_alice" not in repr(verifier._cache)  # keyed by the token's hash
            clock.now += 61  # past max_age: asked again
            await verifier.verify("gho_alice")
            assert endpoint.asked == 2
            del endpoint.tokens["gho_alice"]  # revoked upstream
            clock.now += 61
            with pytest.raises(AuthError) as refused:
                await verifier.verify("gho_alice")
            assert refused.value.reason == "inactive" and endpoint.asked == 3
            with pytest.raises(AuthError):  # a refusal is not cached as an identity
                await verifier.verify("gho_alice")
            assert endpoint.asked == 4
        finally:
            await verifier.aclose()

    asyncio.run(go())


def test_the_providers_expiry_shortens_the_cache_and_the_cache_is_bounded(endpoint: GitHubUser) -> None:
    clock = Clock()
    endpoint.expiration = "1970-01-12 13:46:50 UTC"  # 1_000_010: ten seconds after the clock's now
    for n in range(3):
        endpoint.tokens[f"t{n}"] = {"id": n}

    async def go() -> None:
        verifier = UserEndpointVerifier(endpoint.url, subject="id", max_age=3600, max_entries=2, clock=clock)
        try:
            token = await verifier.verify("t0")
            assert token.expires_at == 1_000_010
            clock.now += 11  # the token's own expiry, not max_age
            await verifier.verify("t0")
            assert endpoint.asked == 2
            clock.now = 1_000_000
            await verifier.verify("t1")
            await verifier.verify("t2")
            assert len(verifier._cache) == 2  # t0, the oldest, was dropped
            await verifier.verify("t0")
            assert endpoint.asked == 5
        finally:
            await verifier.aclose()

    asyncio.run(go())


def test_claim_map_reads_subjects_roles_and_maps_scopes() -> None:
    claims = {
        "id": 42, "email": "a@example.com", "realm_access": {"roles": ["admin", "x"]},
        "https://mcp.example.com/roles": ["reader"], "groups": "solo",
    }
    assert claim_at(claims, "realm_access.roles") == ["admin", "x"]
    assert claim_at(claims, "https://mcp.example.com/roles") == ["reader"]  # dots in a claim's own name
    table = {"admin": ("notes:write",), "reader": ("notes:read",), "*": ("notes:list",)}
    who = ClaimMap(subject="id", roles=("realm_access.roles", "https://mcp.example.com/roles", "groups"),
                   role_scopes=table).identify(claims)
    assert who.subject == "42" and who.email == "a@example.com"
    assert who.roles == ("admin", "x", "reader", "solo")
    assert who.scopes == ("notes:list", "notes:write", "notes:read")
    assert ClaimMap().identify({"sub": "u"}).scopes is None  # no table: no narrowing
    assert ClaimMap().identify({"sub": "u", "email": "u@example.com", "email_verified": False}).email is None
    with pytest.raises(AuthError):
        ClaimMap(subject="id").identify({"id": True})


def test_presets_name_the_providers_endpoints() -> None:
    kw = {"client_id": "app", "client_secret": "s"}
    gh = github(**kw)
    assert (gh.authorization_endpoint, gh.token_endpoint) == (
        "https://github.com/login/oauth/authorize", "https://github.com/login/oauth/access_token")
    assert gh.token_auth_method == "client_secret_post"
    g = google(**kw)
    assert g.authorization_endpoint == "https://accounts.google.com/o/oauth2/v2/auth"
    assert g.authorize_params["access_type"] == "offline"
    e = entra(tenant="0b1c", **kw)
    assert e.issuer == "https://login.microsoftonline.com/0b1c/v2.0"
    assert e.token_endpoint == "https://login.microsoftonline.com/0b1c/oauth2/v2.0/token"
    with pytest.raises(ValueError):
        entra(tenant="common", **kw)
    a = auth0(domain="t.eu.auth0.com", audience="https://api.example.com", **kw)
    assert a.issuer == "https://t.eu.auth0.com/" and a.authorize_params == {"audience": "https://api.example.com"}
    assert okta(domain="o.okta.com", **kw).issuer == "https://o.okta.com/oauth2/default"
    assert okta(domain="o.okta.com", authorization_server=None, **kw).token_endpoint == "https://o.okta.com/oauth2/v1/token"
    k = keycloak(base_url="https://sso.example.com/", realm="mcp", **kw)
    assert k.authorization_endpoint == "https://sso.example.com/realms/mcp/protocol/openid-connect/auth"
    assert workos(domain="acme.authkit.app", **kw).token_endpoint == "https://acme.authkit.app/oauth2/token"
    overridden = github(**kw, authorization_endpoint="http://127.0.0.1:9/auth")
    assert overridden.authorization_endpoint == "http://127.0.0.1:9/auth"
    with pytest.raises(TypeError):
        github(**kw, userinfo="https://x")


def test_settings() -> None:
    env = {
        "WIREMCP_AUTH_PROVIDER": "entra", "WIREMCP_AUTH_PROXY_CLIENT_ID": "app", "WIREMCP_AUTH_PROXY_CLIENT_SECRET": "s",
        "WIREMCP_AUTH_TENANT": "0b1c", "WIREMCP_AUTH_ROLE_SCOPES": "Notes.Admin=notes:read notes:write; *=notes:read",
    }
    up = upstream_from_settings(env)
    assert up.issuer == "https://login.microsoftonline.com/0b1c/v2.0" and up.client_id == "app"
    assert parse_role_scopes(env["WIREMCP_AUTH_ROLE_SCOPES"]) == {"Notes.Admin": ["notes:read", "notes:write"], "*": ["notes:read"]}
    with pytest.raises(ValueError, match="WIREMCP_AUTH_PROVIDER"):
        upstream_from_settings({**env, "WIREMCP_AUTH_PROVIDER": "myspace"})
    with pytest.raises(ValueError, match="tenant"):  # entra without its tenant
        upstream_from_settings({k: v for k, v in env.items() if k != "WIREMCP_AUTH_TENANT"})
    with pytest.raises(ValueError):
        upstream_from_settings({**env, "WIREMCP_AUTH_PROXY_CLIENT_SECRET": ""})
