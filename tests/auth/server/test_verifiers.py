"""The verifiers in process, against the real authorization server's keys and endpoints.

RFC 9068 (JWT access tokens), RFC 7662 (introspection), RFC 9449 (DPoP),
RFC 7638 (thumbprints), and the key set's rotation rules.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import jwt
import pytest

from ._oauth import AuthorizationServer, DPoPKey, b64, ec_key, rsa_key
from wiremcp.auth.server import (
    AccessToken,
    AuthError,
    DPoPProof,
    IntrospectionVerifier,
    JWTVerifier,
    ReplayCache,
    TokenVerifier,
    jwk_thumbprint,
)
from wiremcp.auth.server._discovery import JWKS, metadata_urls

pytestmark = pytest.mark.slow

RESOURCE = "https://mcp.example.com/mcp"


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def reason(verifier: TokenVerifier, token: str, **kw: Any) -> str:
    async def go() -> str:
        try:
            await verifier.verify(token, dpop=kw.pop("dpop", None), method=kw.pop("method", "POST"), url=kw.pop("url", RESOURCE))
        except AuthError as exc:
            assert token not in exc.message
            return exc.reason
        return "accepted"

    return run(go())


def verify(verifier: TokenVerifier, token: str, **kw: Any) -> AccessToken:
    return run(verifier.verify(token, dpop=kw.get("dpop"), method="POST", url=RESOURCE))  # type: ignore[no-any-return]


@pytest.fixture
def verifier(auth_server: AuthorizationServer) -> JWTVerifier:
    return JWTVerifier(issuer=auth_server.issuer, resource=RESOURCE)


def test_a_real_token(verifier: JWTVerifier, auth_server: AuthorizationServer):
    token = auth_server.token("admin", RESOURCE, "mcp admin")
    got = verify(verifier, token)
    assert isinstance(verifier, TokenVerifier)
    assert got.subject == "admin" and got.client_id == "admin"
    assert got.scopes == frozenset({"mcp", "admin"})
    assert got.issuer == auth_server.issuer
    assert got.expires_at is not None and got.expires_at > time.time()
    assert got.cnf is None
    assert got.claims["aud"] == RESOURCE


def test_the_verified_token_holds_no_raw_token(verifier: JWTVerifier, auth_server: AuthorizationServer):
    """``ctx.auth`` (an AccessToken) has no field for the token string: nothing to pass through."""
    import dataclasses

    from wiremcp.auth.server import AccessToken

    token = auth_server.token("admin", RESOURCE, "mcp admin")
    got = verify(verifier, token)
    assert {f.name for f in dataclasses.fields(AccessToken)} == {"subject", "client_id", "scopes", "claims", "expires_at", "cnf"}
    everything = repr(got) + repr(dict(got.claims)) + repr(got.cnf)
    assert token not in everything and token.split(".")[2] not in everything  # not even its signature


def test_audience_case_of_scheme_and_host_and_lists(verifier: JWTVerifier, auth_server: AuthorizationServer):
    assert reason(verifier, auth_server.forge({"aud": "HTTPS://MCP.Example.com/mcp"})) == "accepted"
    assert reason(verifier, auth_server.forge({"aud": ["https://other.example", RESOURCE]})) == "accepted"
    assert reason(verifier, auth_server.forge({"aud": "https://mcp.example.com/MCP"})) == "wrong_audience"
    assert reason(verifier, auth_server.forge({"aud": "https://mcp.example.com"})) == "wrong_audience"
    assert reason(verifier, auth_server.forge({})) == "wrong_audience"  # no aud at all


def test_reasons(verifier: JWTVerifier, auth_server: AuthorizationServer):
    now = int(time.time())
    forge = auth_server.forge
    assert reason(verifier, forge({"aud": RESOURCE, "exp": now - 61})) == "expired"
    assert reason(verifier, forge({"aud": RESOURCE, "exp": now - 30})) == "accepted"  # within the 60 s leeway
    assert reason(verifier, forge({"aud": RESOURCE, "nbf": now + 120})) == "not_yet_valid"
    assert reason(verifier, forge({"aud": RESOURCE, "iat": now + 120})) == "not_yet_valid"
    assert reason(verifier, forge({"aud": RESOURCE, "exp": None})) == "malformed"
    assert reason(verifier, forge({"aud": RESOURCE, "iss": auth_server.issuer + "/"})) == "wrong_issuer"
    assert reason(verifier, forge({"aud": RESOURCE}, headers={"kid": "nobody"})) == "unknown_key"
    assert reason(verifier, forge({"aud": RESOURCE}, headers={"typ": "dpop+jwt"})) == "malformed"
    assert reason(verifier, forge({"aud": RESOURCE}, headers={"typ": "JWT"})) == "accepted"
    # the key is published for ES256: a token claiming ES384 with it is refused before any check of its signature
    _, body, sig = forge({"aud": RESOURCE}).split(".")
    es384 = b64(b'{"alg":"ES384","kid":"key-1","typ":"at+jwt"}')
    assert reason(verifier, f"{es384}.{body}.{sig}") == "bad_algorithm"
    assert reason(verifier, "a.b") == "malformed"
    strict = JWTVerifier(issuer=auth_server.issuer, resource=RESOURCE, require_at_jwt=True)
    assert reason(strict, forge({"aud": RESOURCE}, headers={"typ": "JWT"})) == "malformed"
    assert reason(strict, forge({"aud": RESOURCE}, headers={"typ": "application/at+jwt"})) == "accepted"


def test_jws_syntax(verifier: JWTVerifier, auth_server: AuthorizationServer):
    """RFC 7515: three base64url segments, JSON object header and payload, no unknown ``crit``."""
    good = auth_server.forge({"aud": RESOURCE})
    head, body, sig = good.split(".")
    assert reason(verifier, good) == "accepted"
    assert reason(verifier, auth_server.forge({"aud": RESOURCE}, headers={"crit": ["exp"], "exp": 1})) == "malformed"
    for bad in (f"{head}.{body}=.{sig}", f"{head}.{body}.{sig}+", f"{head}.{body}", f"{head}.{body}.{sig}.x",
                f"{b64(b'[1]')}.{body}.{sig}", f"{head}.{b64(b'not json')}.{sig}", f"{head}.{body}.{sig[:-1]}é"):
        assert reason(verifier, bad) == "malformed", bad
    assert reason(verifier, f"{head}.{body}.{sig[:-4]}") == "bad_signature"


def test_scp_list_and_string(verifier: JWTVerifier, auth_server: AuthorizationServer):
    got = verify(verifier, auth_server.forge({"aud": RESOURCE, "scp": ["mcp", "files:read"]}))
    assert got.scopes == frozenset({"mcp", "files:read"})
    got = verify(verifier, auth_server.forge({"aud": RESOURCE, "scope": "a  b"}))
    assert got.scopes == frozenset({"a", "b"})


def test_short_lived_token_from_the_server_expires(auth_server: AuthorizationServer):
    verifier = JWTVerifier(issuer=auth_server.issuer, resource=RESOURCE, leeway=0)
    token = auth_server.token("short", RESOURCE, "mcp")
    exp = jwt.decode(token, options={"verify_signature": False})["exp"]
    verify(verifier, token)
    time.sleep(max(0.0, exp - time.time()) + 0.2)
    assert reason(verifier, token) == "expired"


def test_algorithm_allow_list_refuses_none_and_hmac():
    for bad in (["none"], ["HS256"], ["RS256", "hs512"], []):
        with pytest.raises(ValueError):
            JWTVerifier(issuer="https://auth.example.com", resource=RESOURCE, algorithms=bad)


def test_only_https_issuers_except_loopback():
    with pytest.raises(ValueError):
        JWTVerifier(issuer="http://auth.example.com", resource=RESOURCE)
    JWTVerifier(issuer="http://localhost:9000", resource=RESOURCE)
    JWTVerifier(issuer="http://[::1]:9000", resource=RESOURCE)


def test_algorithms_restrict_what_is_accepted(node: str, tmp_path):
    issuer = AuthorizationServer(node, tmp_path, alg="RS256").start([rsa_key("rsa-1")])
    try:
        token = issuer.token("reader", RESOURCE, "mcp")
        assert jwt.get_unverified_header(token)["alg"] == "RS256"
        assert reason(JWTVerifier(issuer=issuer.issuer, resource=RESOURCE), token) == "accepted"
        es_only = JWTVerifier(issuer=issuer.issuer, resource=RESOURCE, algorithms=["ES256"])
        assert reason(es_only, token) == "bad_algorithm"
    finally:
        issuer.stop()


def test_discovery_urls_follow_the_spec_order():
    assert metadata_urls("https://auth.example.com") == [
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration",
    ]
    assert metadata_urls("https://auth.example.com/tenant1") == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration",
    ]


def test_an_unreachable_issuer_is_unavailable():
    from ._oauth import free_port

    verifier = JWTVerifier(issuer=f"http://127.0.0.1:{free_port()}", resource=RESOURCE)
    token = jwt.encode({"aud": RESOURCE}, ec_key("k")[1], algorithm="ES256", headers={"kid": "k"})
    assert reason(verifier, token) == "unavailable"


# -- the key set ---------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class CountingFetcher:
    def __init__(self, keys: list[dict[str, Any]] | None) -> None:
        self.keys = keys
        self.calls = 0

    async def get_json(self, url: str) -> tuple[int, Any]:
        self.calls += 1
        if self.keys is None:
            return 500, None
        return 200, {"keys": self.keys}


def public(kid: str) -> dict[str, Any]:
    jwk = dict(ec_key(kid)[0])
    del jwk["d"]
    return jwk


def test_unknown_kid_refreshes_once_per_interval():
    clock = Clock()
    fetcher = CountingFetcher([public("a")])

    async def locate() -> str:
        return "https://auth.example.com/jwks"

    jwks = JWKS(locate, fetcher, min_refresh_interval=10.0, clock=clock)  # type: ignore[arg-type]

    async def go() -> None:
        assert (await jwks.key("a"))["kid"] == "a"
        assert fetcher.calls == 1
        fetcher.keys = [public("a"), public("b")]
        with pytest.raises(AuthError) as caught:  # too soon after the last fetch: not fetched again
            await jwks.key("b")
        assert caught.value.reason == "unknown_key" and fetcher.calls == 1
        clock.now += 10
        assert (await jwks.key("b"))["kid"] == "b"  # rotation picked up
        assert fetcher.calls == 2
        for kid in ("x", "y", "z"):  # a flood of unknown kids: no further fetch
            with pytest.raises(AuthError):
                await jwks.key(kid)
        assert fetcher.calls == 2
        clock.now += 3601  # older than max_age: fetched again on use
        await jwks.key("a")
        assert fetcher.calls == 3

    run(go())


def test_a_failing_key_set_is_not_fetched_again_within_the_interval():
    clock = Clock()
    fetcher = CountingFetcher(None)

    async def locate() -> str:
        return "https://auth.example.com/jwks"

    jwks = JWKS(locate, fetcher, min_refresh_interval=5.0, clock=clock)  # type: ignore[arg-type]

    async def go() -> None:
        for _ in range(3):
            with pytest.raises(AuthError) as caught:
                await jwks.key("a")
            assert caught.value.reason == "unavailable"
        assert fetcher.calls == 1
        fetcher.keys = [public("a")]
        clock.now += 5
        assert (await jwks.key("a"))["kid"] == "a"
        assert fetcher.calls == 2

    run(go())


def test_key_set_ignores_private_symmetric_and_encryption_keys():
    clock = Clock()
    private = ec_key("priv")[0]
    fetcher = CountingFetcher([private, {"kty": "oct", "k": "c2VjcmV0", "kid": "hmac"}, {**public("enc"), "use": "enc"}, public("ok")])

    async def locate() -> str:
        return "https://auth.example.com/jwks"

    jwks = JWKS(locate, fetcher, clock=clock)  # type: ignore[arg-type]

    async def go() -> None:
        for kid in ("priv", "hmac", "enc"):
            with pytest.raises(AuthError):
                await jwks.key(kid)
        assert (await jwks.key(None))["kid"] == "ok"  # no kid: the only usable key

    run(go())


# -- DPoP ----------------------------------------------------------------------


def test_rfc7638_thumbprint_example():
    """RFC 7638 section 3.1: the example RSA key and its thumbprint."""
    jwk = {
        "kty": "RSA",
        "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
        "e": "AQAB",
        "alg": "RS256",
        "kid": "2011-04-29",
    }
    assert jwk_thumbprint(jwk) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"


def test_replay_cache_is_bounded_and_forgets_expired():
    clock = Clock()
    cache = ReplayCache(capacity=3, clock=clock)
    assert cache.add("a", clock.now + 60)
    assert not cache.add("a", clock.now + 60)
    for jti in ("b", "c", "d"):
        assert cache.add(jti, clock.now + 60)
    assert len(cache) == 3  # "a", the oldest, made room
    clock.now += 61
    assert cache.add("b", clock.now + 60)  # expired: may be used again... and the others are gone
    assert len(cache) == 1


def test_dpop_with_the_jwt_verifier(verifier: JWTVerifier, auth_server: AuthorizationServer):
    key = DPoPKey()
    token = auth_server.token("reader", RESOURCE, "mcp", dpop=key)
    proof = DPoPProof(key.proof("POST", RESOURCE, token))
    got = verify(verifier, token, dpop=proof)
    assert got.cnf == {"jkt": jwk_thumbprint(key.public_jwk)}
    assert reason(verifier, token, dpop=proof) == "invalid_dpop"  # replayed
    assert reason(verifier, token) == "invalid_dpop"  # no proof
    plain = auth_server.token("reader", RESOURCE, "mcp")
    assert reason(verifier, plain, dpop=DPoPProof(key.proof("POST", RESOURCE, plain))) == "invalid_dpop"  # not bound
    # htu compares scheme and host case-insensitively, ignores the query
    assert reason(verifier, token, dpop=DPoPProof(key.proof("POST", "HTTPS://MCP.EXAMPLE.COM/mcp?x=1", token))) == "accepted"
    # typ, alg, private key in the header
    bad_typ = jwt.encode({"jti": "1", "htm": "POST", "htu": RESOURCE, "iat": int(time.time())}, key.key, algorithm="ES256",
                         headers={"typ": "jwt", "jwk": key.public_jwk})
    assert reason(verifier, token, dpop=DPoPProof(bad_typ)) == "invalid_dpop"
    private_jwk = key.public_jwk | {"d": "AAAA"}
    leaky = jwt.encode({"jti": "2", "htm": "POST", "htu": RESOURCE, "iat": int(time.time())}, key.key, algorithm="ES256",
                       headers={"typ": "dpop+jwt", "jwk": private_jwk})
    assert reason(verifier, token, dpop=DPoPProof(leaky)) == "invalid_dpop"


# -- introspection -------------------------------------------------------------


OPAQUE = "https://mcp.example.com/opaque-mcp"  # the test AS issues opaque tokens for it


def introspect(verifier: IntrospectionVerifier, token: str) -> AccessToken | str:
    async def go() -> AccessToken | str:
        try:
            return await verifier.verify(token, dpop=None, method="POST", url=OPAQUE)
        except AuthError as exc:
            assert token not in exc.message
            return exc.reason

    return run(go())  # type: ignore[no-any-return]


def test_introspection(auth_server: AuthorizationServer):
    verifier = IntrospectionVerifier(
        issuer=auth_server.issuer, resource=OPAQUE, client_id="reader", client_secret="a-test-secret-of-decent-length"
    )
    assert "secret" not in repr(verifier)
    token = auth_server.token("admin", OPAQUE, "mcp admin")
    assert token.count(".") == 0  # opaque
    got = introspect(verifier, token)
    assert isinstance(got, AccessToken)
    assert got.client_id == "admin" and got.scopes == frozenset({"mcp", "admin"})
    assert got.expires_at is not None and got.issuer == auth_server.issuer
    assert introspect(verifier, "an-opaque-token-nobody-issued") == "inactive"
    other = auth_server.token("admin", "https://other.example/opaque-mcp", "mcp")
    assert introspect(verifier, other) == "wrong_audience"
    post = IntrospectionVerifier(
        issuer=auth_server.issuer, resource=OPAQUE, client_id="reader",
        client_secret="a-test-secret-of-decent-length", auth_method="client_secret_post",
    )
    assert isinstance(introspect(post, token), AccessToken)
    wrong_secret = IntrospectionVerifier(issuer=auth_server.issuer, resource=OPAQUE, client_id="reader", client_secret="nope")
    assert introspect(wrong_secret, token) == "unavailable"  # the answer is not an introspection response


def test_introspection_of_a_dpop_bound_token(auth_server: AuthorizationServer):
    verifier = IntrospectionVerifier(
        issuer=auth_server.issuer, resource=OPAQUE, client_id="reader", client_secret="a-test-secret-of-decent-length"
    )
    key = DPoPKey()
    token = auth_server.token("reader", OPAQUE, "mcp", dpop=key)
    assert introspect(verifier, token) == "invalid_dpop"  # sent without its proof

    async def go() -> AccessToken:
        return await verifier.verify(token, dpop=DPoPProof(key.proof("POST", OPAQUE, token)), method="POST", url=OPAQUE)

    assert run(go()).cnf == {"jkt": jwk_thumbprint(key.public_jwk)}


def test_introspection_respects_the_discovered_endpoint(auth_server: AuthorizationServer):
    doc = httpx.get(f"{auth_server.issuer}/.well-known/openid-configuration", timeout=10).json()
    assert doc["introspection_endpoint"].startswith(auth_server.issuer)
