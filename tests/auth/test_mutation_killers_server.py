"""The resource server's rules in process (wiremcp.auth.server), one test per rule mutation testing found unguarded.

tests/auth/server/ checks these against the real oidc-provider over HTTP;
mutmut's in-process runner (tests/mutation/run.py, target ``auth-server``)
cannot afford a Node process per mutant, so the issuer here is an
in-process one: its metadata and key set are answered through
``httpx.MockTransport`` (as tests/auth/fakeas.py does for the client) and its
tokens are signed with keys made by the test (PyJWT, cryptography). Each
test names the rule: RFC 9068 (JWT access tokens), RFC 7662
(introspection), RFC 9449 (DPoP), RFC 7638 (thumbprints), RFC 6750 and
RFC 9728 (challenges and metadata), RFC 8414 (discovery).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import time
import uuid
from typing import Any, Callable

import httpx
import pytest

jwt = pytest.importorskip("jwt")
from cryptography.hazmat.primitives.asymmetric import ec, rsa  # noqa: E402
from jwt.algorithms import ECAlgorithm, RSAAlgorithm  # noqa: E402

from wiremcp.auth.server import (  # noqa: E402
    AccessToken,
    AuthError,
    DPoPNonces,
    DPoPProof,
    IntrospectionVerifier,
    JWTVerifier,
    ReplayCache,
    ResourceServer,
    canonical_uri,
    jwk_thumbprint,
)
from wiremcp.auth.server._discovery import JWKS, Fetcher, check_fetchable, discover, metadata_endpoint, metadata_urls  # noqa: E402
from wiremcp.auth.server._dpop import check_binding, proof_nonce  # noqa: E402
from wiremcp.auth.server._jws import parse  # noqa: E402
from wiremcp.auth.server._jwt import allowed_algorithms, check_times, token_from_claims  # noqa: E402
from wiremcp.auth.server._token import scopes_of  # noqa: E402

ISSUER = "https://as.example"
RESOURCE = "https://mcp.example/mcp"
JWKS_URI = "https://as.example/jwks"
NOW = 1_700_000_000


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def ec_key(kid: str | None = "k1", alg: str | None = "ES256") -> tuple[dict[str, Any], Any]:
    key = ec.generate_private_key(ec.SECP256R1())
    jwk = json.loads(ECAlgorithm.to_jwk(key.public_key()))
    if kid is not None:
        jwk["kid"] = kid
    if alg is not None:
        jwk["alg"] = alg
    return jwk, key


class Issuer:
    """An authorization server in process: metadata, a key set and an introspection endpoint."""

    def __init__(self) -> None:
        self.keys: list[tuple[dict[str, Any], Any]] = [ec_key("k1")]
        self.extra_keys: list[Any] = []
        self.jwks_status = 200
        self.requests: list[httpx.Request] = []
        self.introspection: tuple[int, Any] = (200, {"active": True})
        self.metadata: dict[str, Any] = {
            "issuer": ISSUER, "jwks_uri": JWKS_URI, "introspection_endpoint": "https://as.example/introspect",
        }

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        path = request.url.path
        if path == "/.well-known/oauth-authorization-server":
            return httpx.Response(200, json=self.metadata)
        if path == "/jwks":
            if self.jwks_status != 200:
                return httpx.Response(self.jwks_status, text="down")
            return httpx.Response(200, json={"keys": [jwk for jwk, _ in self.keys] + self.extra_keys})
        if path == "/introspect":
            status, body = self.introspection
            return httpx.Response(status, json=body) if body is not None else httpx.Response(status, text="not json")
        return httpx.Response(404)

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self.handle))

    def token(self, claims: dict[str, Any] | None = None, *, headers: dict[str, Any] | None = None,
              key: Any = None, alg: str = "ES256", drop: tuple[str, ...] = ()) -> str:
        body: dict[str, Any] = {"iss": ISSUER, "aud": RESOURCE, "sub": "alice", "client_id": "app",
                                "iat": NOW, "exp": NOW + 300, "scope": "mcp"}
        body.update(claims or {})
        for name in drop:
            body.pop(name, None)
        head = {"kid": "k1", "typ": "at+jwt", **(headers or {})}
        return jwt.encode(body, key if key is not None else self.keys[0][1], algorithm=alg, headers=head)


@pytest.fixture
def issuer() -> Issuer:
    return Issuer()


def verifier(issuer: Issuer, *, clock: Callable[[], float] = lambda: NOW, **options: Any) -> JWTVerifier:
    return JWTVerifier(issuer=ISSUER, resource=RESOURCE, http_client=issuer.client(), clock=clock, **options)


def refusal(coro: Any) -> AuthError:
    with pytest.raises(AuthError) as info:
        run(coro)
    return info.value


# -- JWT access tokens (RFC 9068) ---------------------------------------------------------------


def test_a_valid_token_gives_its_subject_client_scopes_and_expiry(issuer: Issuer) -> None:
    token = run(verifier(issuer).verify(issuer.token({"scope": "mcp admin"})))
    assert token.subject == "alice"
    assert token.client_id == "app"
    assert token.scopes == frozenset({"mcp", "admin"})
    assert token.expires_at == float(NOW + 300)
    assert token.issuer == ISSUER
    assert token.cnf is None


def test_the_algorithm_allow_list_refuses_none_and_symmetric_algorithms() -> None:
    assert allowed_algorithms(["ES256", "RS256"]) == ("ES256", "RS256")
    with pytest.raises(ValueError, match="algorithms must name at least one JWS algorithm"):
        allowed_algorithms([])
    for alg in ("none", "NONE", "HS256", "hs512"):
        with pytest.raises(ValueError, match=f"{alg!r} is not allowed for access tokens: use an asymmetric algorithm"):
            allowed_algorithms(["ES256", alg])


def test_an_algorithm_outside_the_allow_list_is_refused(issuer: Issuer) -> None:
    error = refusal(verifier(issuer, algorithms=["RS256"]).verify(issuer.token()))
    assert (error.reason, error.message) == ("bad_algorithm", "the access token's signing algorithm is not accepted")
    # an alg that is not a string
    raw = issuer.token().split(".")
    forged = b64(json.dumps({"alg": 256, "kid": "k1"}).encode()) + "." + raw[1] + "." + raw[2]
    assert refusal(verifier(issuer).verify(forged)).reason == "bad_algorithm"


@pytest.mark.parametrize("typ", [None, "at+jwt", "AT+JWT", "application/at+jwt", "JWT", "jwt"])
def test_typ_at_jwt_or_jwt_is_accepted(issuer: Issuer, typ: str | None) -> None:
    headers = {"typ": typ} if typ is not None else {}
    token = issuer.token(headers=headers)
    if typ is None:
        token = jwt.encode({"iss": ISSUER, "aud": RESOURCE, "exp": NOW + 60}, issuer.keys[0][1], algorithm="ES256",
                           headers={"kid": "k1"})
        assert "typ" not in jwt.get_unverified_header(token) or jwt.get_unverified_header(token)["typ"] == "JWT"
    assert run(verifier(issuer).verify(token)).issuer == ISSUER


def test_require_at_jwt_refuses_jwt_and_a_missing_typ(issuer: Issuer) -> None:
    strict = verifier(issuer, require_at_jwt=True)
    assert run(strict.verify(issuer.token(headers={"typ": "application/at+jwt"}))).subject == "alice"
    for typ in ("JWT", "dpop+jwt", 7):
        error = refusal(strict.verify(issuer.token(headers={"typ": typ})))
        assert (error.reason, error.message) == ("malformed", "the token's typ is not at+jwt: it is not an access token")
    # no typ at all
    raw = issuer.token().split(".")
    header = b64(json.dumps({"alg": "ES256", "kid": "k1"}).encode())
    signing = f"{header}.{raw[1]}".encode()
    from jwt.algorithms import ECAlgorithm as Alg

    sig = Alg(Alg.SHA256).sign(signing, issuer.keys[0][1])
    no_typ = f"{header}.{raw[1]}.{b64(sig)}"
    assert refusal(strict.verify(no_typ)).reason == "malformed"
    assert run(verifier(issuer).verify(no_typ)).subject == "alice"
    assert refusal(verifier(issuer).verify(issuer.token(headers={"typ": "dpop+jwt"}))).reason == "malformed"


def test_a_key_published_for_another_alg_is_refused(issuer: Issuer) -> None:
    issuer.keys[0][0]["alg"] = "ES384"
    error = refusal(verifier(issuer, algorithms=["ES256", "ES384"]).verify(issuer.token()))
    assert (error.reason, error.message) == ("bad_algorithm", "the token's alg is not the one its key is published for")


def test_a_key_without_alg_must_still_fit_the_tokens_alg(issuer: Issuer) -> None:
    rsa_private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    rsa_jwk = json.loads(RSAAlgorithm.to_jwk(rsa_private.public_key()))
    rsa_jwk["kid"] = "k1"
    issuer.keys = [(rsa_jwk, rsa_private)]
    # An ES256 token naming an RSA key that has no alg of its own: the key does not fit the alg.
    forged = issuer.token(key=ec_key()[1])
    error = refusal(verifier(issuer).verify(forged))
    assert (error.reason, error.message) == ("bad_algorithm", "the token's alg does not fit the issuer's key")
    assert run(verifier(issuer).verify(issuer.token(alg="RS256"))).subject == "alice"


def test_a_signature_by_another_key_is_refused(issuer: Issuer) -> None:
    error = refusal(verifier(issuer).verify(issuer.token(key=ec_key()[1])))
    assert (error.reason, error.message) == ("bad_signature", "the access token's signature does not verify")


def test_the_parsed_key_is_reused_until_the_key_set_changes(issuer: Issuer) -> None:
    v = verifier(issuer)
    run(v.verify(issuer.token()))
    run(v.verify(issuer.token()))
    # The issuer rotates to a new key under the same kid: the old parsed key must not be used.
    issuer.keys = [ec_key("k1")]

    async def after_rotation() -> AccessToken:
        v.jwks.max_age = 0
        await asyncio.sleep(0.01)
        return await v.verify(issuer.token())

    assert run(after_rotation()).subject == "alice"


def test_the_issuer_is_compared_exactly(issuer: Issuer) -> None:
    for other in ("https://as.example/", "https://AS.example", "https://evil.example"):
        error = refusal(verifier(issuer).verify(issuer.token({"iss": other})))
        assert (error.reason, error.message) == ("wrong_issuer", f"the access token was not issued by {ISSUER}")
    assert refusal(verifier(issuer).verify(issuer.token(drop=("iss",)))).reason == "wrong_issuer"


def test_the_audience_must_name_this_resource(issuer: Issuer) -> None:
    ok = [RESOURCE, "HTTPS://MCP.EXAMPLE/mcp", ["other", RESOURCE], [5, "not a uri", RESOURCE]]
    for aud in ok:
        assert run(verifier(issuer).verify(issuer.token({"aud": aud}))).subject == "alice", aud
    for aud in ("https://mcp.example/MCP", "https://mcp.example/other", ["https://other.example/mcp"], 5, None, {}):
        error = refusal(verifier(issuer).verify(issuer.token({"aud": aud})))
        assert (error.reason, error.message) == ("wrong_audience", f"the access token is not for this resource ({RESOURCE})")


def test_times_with_leeway() -> None:
    check_times({"exp": NOW - 59}, NOW, 60)
    with pytest.raises(AuthError, match="the access token has expired") as info:
        check_times({"exp": NOW - 60}, NOW, 60)
    assert info.value.reason == "expired"
    check_times({"nbf": NOW + 60, "iat": NOW + 60, "exp": NOW + 100}, NOW, 60)
    for name in ("nbf", "iat"):
        with pytest.raises(AuthError, match=rf"the access token is not valid yet \({name} is in the future\)") as info:
            check_times({name: NOW + 61, "exp": NOW + 100}, NOW, 60)
        assert info.value.reason == "not_yet_valid"
        for bad in ("1", True, [1]):
            with pytest.raises(AuthError, match=f"the access token's {name} is not a number") as info:
                check_times({name: bad, "exp": NOW + 100}, NOW, 60)
            assert info.value.reason == "malformed"
    with pytest.raises(AuthError, match="the access token has no exp claim") as info:
        check_times({}, NOW, 60)
    assert info.value.reason == "malformed"
    check_times({}, NOW, 60, require_exp=False)
    for bad in ("soon", True, None and 0):
        if bad is None:
            continue
        with pytest.raises(AuthError, match="the access token's exp is not a number"):
            check_times({"exp": bad}, NOW, 60)
    check_times({"exp": float(NOW + 1)}, NOW, 0)


def test_an_expired_or_future_token_is_refused_by_the_verifier(issuer: Issuer) -> None:
    assert refusal(verifier(issuer).verify(issuer.token({"exp": NOW - 61}))).reason == "expired"
    assert refusal(verifier(issuer).verify(issuer.token({"nbf": NOW + 61}))).reason == "not_yet_valid"
    assert refusal(verifier(issuer).verify(issuer.token(drop=("exp",)))).reason == "malformed"
    assert run(verifier(issuer, leeway=0).verify(issuer.token({"exp": NOW + 1}))).subject == "alice"
    assert refusal(verifier(issuer, leeway=0).verify(issuer.token({"exp": NOW}))).reason == "expired"


def test_what_a_token_says_from_its_claims() -> None:
    token = token_from_claims({"sub": "alice", "client_id": "app", "exp": 5, "scope": "a b"}, {"jkt": "x"})
    assert (token.subject, token.client_id, token.expires_at, token.scopes, token.cnf) == (
        "alice", "app", 5.0, frozenset({"a", "b"}), {"jkt": "x"})
    assert isinstance(token.expires_at, float)
    # azp stands in for client_id (OpenID Connect); neither: None
    assert token_from_claims({"azp": "web"}, None).client_id == "web"
    assert token_from_claims({"client_id": 5, "azp": "web"}, None).client_id == "web"
    assert token_from_claims({"client_id": 5, "azp": 6}, None).client_id is None
    other = token_from_claims({"sub": 7, "exp": True}, None)
    assert (other.subject, other.expires_at, other.client_id) == (None, None, None)
    assert token_from_claims({"exp": "soon"}, None).expires_at is None
    assert AccessToken(subject=None, client_id=None, scopes=frozenset(), claims={"iss": 5}).issuer is None


def test_scopes_come_from_scope_or_scp() -> None:
    assert scopes_of({"scope": "a  b a"}) == frozenset({"a", "b"})
    assert scopes_of({"scope": "a", "scp": ["z"]}) == frozenset({"a"})
    assert scopes_of({"scope": 5, "scp": "c d"}) == frozenset({"c", "d"})
    assert scopes_of({"scp": ["e", 5, "f"]}) == frozenset({"e", "f"})
    assert scopes_of({"scp": {"g": 1}}) == frozenset()
    assert scopes_of({}) == frozenset()


# -- compact JWS taken apart strictly ------------------------------------------------------------


def test_a_token_must_be_a_compact_jws() -> None:
    good_header = b64(b'{"alg":"ES256"}')
    good_body = b64(b'{"a":1}')
    cases = {
        "caf\u00e9.a.b": "the access token is not a compact JWS",
        "a.b": "the access token is not a compact JWS",
        "a.b.c.d": "the access token is not a compact JWS",
        f"{good_header}=.{good_body}.": "the access token's header is not base64url",
        f"a+b.{good_body}.": "the access token's header is not base64url",
        f"abcde.{good_body}.": "the access token's header is not base64url",
        f"{b64(b'[1]')}.{good_body}.": "the access token's header is not a JSON object",
        f"{b64(b'nope')}.{good_body}.": "the access token's header is not a JSON object",
        f"{b64(json.dumps({'alg': 'ES256', 'crit': ['exp']}).encode())}.{good_body}.":
            "the access token names critical extensions this server does not support",
        f"{good_header}.{b64(b'1')}.": "the access token's payload is not a JSON object",
        f"{good_header}.{good_body}.a/b": "the access token's signature is not base64url",
    }
    for token, message in cases.items():
        with pytest.raises(AuthError) as info:
            parse(token)
        assert (info.value.reason, info.value.message) == ("malformed", message), token
    header, claims, signing_input, signature = parse(f"{good_header}.{good_body}.{b64(b'sig')}")
    assert header == {"alg": "ES256"} and claims == {"a": 1}
    assert signing_input == f"{good_header}.{good_body}".encode()
    assert signature == b"sig"
    with pytest.raises(AuthError) as info:
        parse("a.b", what="DPoP proof", reason="invalid_dpop")
    assert (info.value.reason, info.value.message) == ("invalid_dpop", "the DPoP proof is not a compact JWS")


# -- the key set (JWKS) --------------------------------------------------------------------------


class Clock:
    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def key_set(issuer: Issuer, clock: Clock, **options: Any) -> JWKS:
    async def locate() -> str:
        return JWKS_URI

    return JWKS(locate, Fetcher(issuer.client()), clock=clock, **options)


def test_keys_are_fetched_once_and_again_after_max_age(issuer: Issuer) -> None:
    clock = Clock()
    keys = key_set(issuer, clock, max_age=10, min_refresh_interval=1)

    async def go() -> list[int]:
        seen = []
        await keys.key("k1")
        seen.append(keys.fetches)
        clock.now += 10  # exactly max_age: still fresh
        await keys.key("k1")
        seen.append(keys.fetches)
        clock.now += 0.5
        await keys.key("k1")
        seen.append(keys.fetches)
        return seen

    assert run(go()) == [1, 1, 2]


def test_an_unknown_kid_fetches_again_at_most_once_per_interval(issuer: Issuer) -> None:
    clock = Clock()
    keys = key_set(issuer, clock, max_age=3600, min_refresh_interval=5)

    async def go() -> None:
        await keys.key("k1")
        for _ in range(3):
            with pytest.raises(AuthError) as info:
                await keys.key("rotated")
            assert (info.value.reason, info.value.message) == (
                "unknown_key", "the token is signed with a key the issuer does not publish")
        assert keys.fetches == 1
        clock.now += 5  # exactly the interval: may fetch again
        issuer.keys.append(ec_key("rotated"))
        assert (await keys.key("rotated"))["kid"] == "rotated"
        assert keys.fetches == 2

    run(go())


def test_a_failed_fetch_counts_and_old_keys_are_kept(issuer: Issuer) -> None:
    clock = Clock()
    keys = key_set(issuer, clock, max_age=10, min_refresh_interval=5)

    async def go() -> None:
        issuer.jwks_status = 500
        with pytest.raises(AuthError) as info:
            await keys.key("k1")
        assert (info.value.reason, info.value.message) == ("unavailable", "the issuer's key set (jwks_uri) could not be read")
        clock.now += 4.9
        with pytest.raises(AuthError, match="could not be read"):
            await keys.key("k1")
        assert keys.fetches == 1  # not asked again within the interval
        clock.now += 0.1
        issuer.jwks_status = 200
        assert (await keys.key("k1"))["kid"] == "k1"
        assert keys.fetches == 2
        issuer.jwks_status = 500
        clock.now += 11  # stale: fetched again, fails, the keys we had are kept
        assert (await keys.key("k1"))["kid"] == "k1"
        assert keys.fetches == 3

    run(go())


def test_concurrent_requests_wait_for_one_fetch(issuer: Issuer) -> None:
    clock = Clock()
    keys = key_set(issuer, clock)

    async def go() -> None:
        found = await asyncio.gather(*(keys.key("k1") for _ in range(5)))
        assert all(k["kid"] == "k1" for k in found)
        assert keys.fetches == 1

    run(go())


def test_concurrent_requests_share_a_failed_fetch(issuer: Issuer) -> None:
    issuer.jwks_status = 503
    keys = key_set(issuer, Clock())

    async def go() -> list[Any]:
        return await asyncio.gather(*(keys.key("k1") for _ in range(3)), return_exceptions=True)

    results = run(go())
    assert all(isinstance(r, AuthError) and r.reason == "unavailable" for r in results)
    assert keys.fetches == 1


def test_only_public_signature_keys_are_kept(issuer: Issuer) -> None:
    good, _ = ec_key("good")
    issuer.keys = []
    issuer.extra_keys = [
        {"kty": "oct", "k": "c2VjcmV0", "kid": "sym"},
        {**ec_key("enc")[0], "use": "enc"},
        {**ec_key("priv")[0], "d": "AAAA"},
        {"kid": "nokty"},
        "not a key",
        good,
    ]
    keys = key_set(issuer, Clock())

    async def go() -> None:
        assert await keys.key("good") == good
        for kid in ("sym", "enc", "priv", "nokty"):
            with pytest.raises(AuthError, match="does not publish"):
                await keys.key(kid)
        # the only usable key answers a token without kid
        assert await keys.key(None) == good

    run(go())


def test_a_token_without_kid_needs_exactly_one_key(issuer: Issuer) -> None:
    second = ec_key(None)  # a key without kid
    issuer.keys.append(second)
    keys = key_set(issuer, Clock())

    async def go() -> None:
        with pytest.raises(AuthError, match="does not publish"):
            await keys.key(None)
        assert await keys.key("k1") == issuer.keys[0][0]

    run(go())
    issuer.keys = [ec_key(None)]
    issuer.keys[0][0]["kid"] = 5  # a kid that is not a string counts as none
    assert run(key_set(issuer, Clock()).key(None)) == issuer.keys[0][0]


@pytest.mark.parametrize("document", [{"keys": {"k": 1}}, [1], {"no": "keys"}])
def test_a_key_set_that_is_not_one_is_unavailable(issuer: Issuer, document: Any) -> None:
    async def locate() -> str:
        return JWKS_URI

    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=document)

    keys = JWKS(locate, Fetcher(httpx.AsyncClient(transport=httpx.MockTransport(handle))), clock=Clock())
    with pytest.raises(AuthError, match="could not be read"):
        run(keys.key("k1"))


# -- discovery (RFC 8414) and fetching ------------------------------------------------------------


def test_only_https_or_loopback_http_is_fetched() -> None:
    for url in ("https://as.example", "http://localhost:9", "http://127.0.0.9/x", "http://[::1]:8080"):
        check_fetchable(url, "issuer")
    for url in ("http://as.example", "https://", "ftp://as.example", "http://10.0.0.1", "http://localhost.evil.example"):
        with pytest.raises(ValueError) as info:
            check_fetchable(url, "issuer")
        assert str(info.value) == f"issuer must be an https URL (http only on a loopback host): {url!r}"


def test_the_canonical_resource_uri() -> None:
    assert canonical_uri("HTTPS://MCP.Example:8443/Path/X?q=A") == "https://mcp.example:8443/Path/X?q=A"
    assert canonical_uri("https://mcp.example") == "https://mcp.example"
    for bad, message in (("/mcp", "not an absolute URI"), ("mcp.example", "not an absolute URI"),
                         ("https://mcp.example/mcp#top", "a resource URI has no fragment"),
                         ("https://mcp.example/mcp#", "a resource URI has no fragment")):
        with pytest.raises(ValueError, match=message):
            canonical_uri(bad)


def test_discovery_urls_in_the_spec_order() -> None:
    assert metadata_urls("https://as.example") == [
        "https://as.example/.well-known/oauth-authorization-server",
        "https://as.example/.well-known/openid-configuration",
    ]
    assert metadata_urls("https://as.example/tenant/1/") == [
        "https://as.example/.well-known/oauth-authorization-server/tenant/1",
        "https://as.example/.well-known/openid-configuration/tenant/1",
        "https://as.example/tenant/1/.well-known/openid-configuration",
    ]


def test_discovery_skips_what_is_not_a_document_and_refuses_another_issuer() -> None:
    answers: dict[str, httpx.Response] = {}

    def handle(request: httpx.Request) -> httpx.Response:
        return answers.get(request.url.path, httpx.Response(404))

    fetcher = Fetcher(httpx.AsyncClient(transport=httpx.MockTransport(handle)))
    answers["/.well-known/oauth-authorization-server"] = httpx.Response(200, json=["not", "an", "object"])
    answers["/.well-known/openid-configuration"] = httpx.Response(200, json={"issuer": ISSUER, "jwks_uri": JWKS_URI})
    assert run(discover(fetcher, ISSUER))["jwks_uri"] == JWKS_URI
    answers["/.well-known/oauth-authorization-server"] = httpx.Response(200, json={"issuer": "https://evil.example"})
    with pytest.raises(AuthError) as info:
        run(discover(fetcher, ISSUER))
    assert info.value.reason == "unavailable"
    assert info.value.message == (
        "the metadata at https://as.example/.well-known/oauth-authorization-server names another issuer; it is not used")
    answers.clear()
    answers["/.well-known/oauth-authorization-server"] = httpx.Response(500, json={"issuer": ISSUER})
    with pytest.raises(AuthError) as info:
        run(discover(fetcher, ISSUER))
    assert info.value.message == f"no authorization server metadata found for the issuer {ISSUER}"


def test_a_metadata_endpoint_must_be_named_and_fetchable() -> None:
    doc: dict[str, Any] = {"issuer": ISSUER}

    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=doc)

    fetcher = Fetcher(httpx.AsyncClient(transport=httpx.MockTransport(handle)))
    with pytest.raises(AuthError) as info:
        run(metadata_endpoint(fetcher, ISSUER, "jwks_uri"))
    assert (info.value.reason, info.value.message) == ("unavailable", "the issuer's metadata has no jwks_uri")
    doc["jwks_uri"] = "http://as.example/jwks"
    with pytest.raises(AuthError) as info:
        run(metadata_endpoint(fetcher, ISSUER, "jwks_uri"))
    assert info.value.message == "the issuer's jwks_uri is not an https URL"
    doc["jwks_uri"] = JWKS_URI
    assert run(metadata_endpoint(fetcher, ISSUER, "jwks_uri")) == JWKS_URI


def test_an_unreachable_server_is_unavailable_and_non_json_is_none() -> None:
    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused")

    fetcher = Fetcher(httpx.AsyncClient(transport=httpx.MockTransport(down)))
    for call in (fetcher.get_json("https://as.example/x"), fetcher.post_form("https://as.example/x", {}, None)):
        with pytest.raises(AuthError) as info:
            run(call)
        assert (info.value.reason, info.value.message) == (
            "unavailable", "the authorization server cannot be reached (ConnectError)")

    seen: list[httpx.Request] = []

    def text(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(201, text="<html>")

    fetcher = Fetcher(httpx.AsyncClient(transport=httpx.MockTransport(text)))
    assert run(fetcher.get_json("https://as.example/x")) == (201, None)
    assert run(fetcher.post_form("https://as.example/x", {"a": "b"}, None)) == (201, None)
    assert seen[0].headers["accept"] == "application/json"
    assert seen[1].headers["accept"] == "application/json"
    assert "authorization" not in seen[1].headers
    assert seen[1].content == b"a=b"


def test_client_secret_basic_form_encodes_id_and_secret() -> None:
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"ok": True})

    fetcher = Fetcher(httpx.AsyncClient(transport=httpx.MockTransport(handle)))
    assert run(fetcher.post_form("https://as.example/t", {}, ("my client", "s:e/c"))) == (200, {"ok": True})
    expected = base64.b64encode(b"my+client:s%3Ae%2Fc").decode()
    assert seen[0].headers["authorization"] == f"Basic {expected}"


def test_a_fetcher_of_its_own_makes_one_client_per_event_loop() -> None:
    fetcher = Fetcher(timeout=3.0)

    async def make() -> httpx.AsyncClient:
        first = fetcher.client()
        assert fetcher.client() is first  # the same loop: the same client
        return first

    one = run(make())
    two = run(make())
    assert one is not two
    assert two.timeout.connect == 3.0
    assert two.follow_redirects is False
    given = httpx.AsyncClient()
    mine = Fetcher(given)
    assert run(make_in(mine)) is given
    assert run(make_in(mine)) is given


async def make_in(fetcher: Fetcher) -> httpx.AsyncClient:
    return fetcher.client()


def test_the_verifier_discovers_its_key_set_once(issuer: Issuer) -> None:
    v = verifier(issuer)

    async def go() -> None:
        await v.verify(issuer.token())
        await v.verify(issuer.token())

    run(go())
    paths = [r.url.path for r in issuer.requests]
    assert paths == ["/.well-known/oauth-authorization-server", "/jwks"]


def test_a_configured_jwks_uri_skips_discovery_and_must_be_fetchable(issuer: Issuer) -> None:
    v = verifier(issuer, jwks_uri=JWKS_URI)
    run(v.verify(issuer.token()))
    assert [r.url.path for r in issuer.requests] == ["/jwks"]
    with pytest.raises(ValueError, match="jwks_uri must be an https URL"):
        JWTVerifier(issuer=ISSUER, resource=RESOURCE, jwks_uri="http://as.example/jwks")
    with pytest.raises(ValueError, match="issuer must be an https URL"):
        JWTVerifier(issuer="http://as.example", resource=RESOURCE)


# -- DPoP (RFC 9449) -----------------------------------------------------------------------------


class Holder:
    """A client's DPoP key, making proofs."""

    def __init__(self) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.jwk = json.loads(ECAlgorithm.to_jwk(self.key.public_key()))

    @property
    def jkt(self) -> str:
        return jwk_thumbprint(self.jwk)

    def proof(self, token: str | None, *, method: str = "POST", url: str = RESOURCE, iat: float = NOW,
              headers: dict[str, Any] | None = None, drop: tuple[str, ...] = (), **claims: Any) -> str:
        body: dict[str, Any] = {"jti": uuid.uuid4().hex, "htm": method, "htu": url, "iat": iat}
        if token is not None:
            body["ath"] = b64(hashlib.sha256(token.encode()).digest())
        body.update(claims)
        for name in drop:
            body.pop(name, None)
        head = {"typ": "dpop+jwt", "jwk": self.jwk, **(headers or {})}
        return jwt.encode(body, self.key, algorithm="ES256", headers=head)


ALGS = ("ES256", "RS256")


def bind(token: str, cnf: dict[str, Any] | None, proof: str | None, *, replay: ReplayCache | None = None,
         method: str = "POST", url: str = RESOURCE, leeway: float = 0) -> None:
    check_binding(token, cnf, DPoPProof(proof) if proof is not None else None, method=method, url=url,
                  algorithms=ALGS, replay=replay if replay is not None else ReplayCache(), leeway=leeway, clock=lambda: NOW)


def dpop_refusal(*args: Any, **kw: Any) -> str:
    with pytest.raises(AuthError) as info:
        bind(*args, **kw)
    assert info.value.reason == "invalid_dpop"
    return info.value.message


def test_a_valid_proof_binds_the_token() -> None:
    holder = Holder()
    bind("tok", {"jkt": holder.jkt}, holder.proof("tok"))
    # scheme and host compared case-insensitively, query and fragment ignored, "" path is "/"
    bind("tok", {"jkt": holder.jkt}, holder.proof("tok", url="HTTPS://MCP.EXAMPLE/mcp?x=1#f"))
    bind("tok", {"jkt": holder.jkt}, holder.proof("tok", url="https://mcp.example/"), url="https://mcp.example")
    bind("tok", None, None)
    bind("tok", {"other": 1}, None)


def test_each_dpop_rule_refuses_with_its_message() -> None:
    holder = Holder()
    cnf = {"jkt": holder.jkt}
    assert dpop_refusal("tok", None, holder.proof("tok")) == "a DPoP proof came with a token that is not DPoP-bound"
    assert dpop_refusal("tok", cnf, None) == "the token is DPoP-bound: send it with the DPoP scheme and a DPoP proof"
    assert dpop_refusal("tok", cnf, "x.y") == "the DPoP proof is not a compact JWS"
    assert dpop_refusal("tok", cnf, holder.proof("tok", headers={"typ": "jwt"})) == "the DPoP proof's typ is not dpop+jwt"
    es384 = jwt.encode({"htm": "POST"}, ec.generate_private_key(ec.SECP384R1()), algorithm="ES384",
                       headers={"typ": "dpop+jwt", "jwk": holder.jwk})
    assert dpop_refusal("tok", cnf, es384) == "the DPoP proof's alg is not allowed"
    assert dpop_refusal("tok", cnf, holder.proof("tok", headers={"jwk": {**holder.jwk, "d": "AAAA"}})) == (
        "the DPoP proof's jwk is missing or not a public key")
    assert dpop_refusal("tok", cnf, holder.proof("tok", headers={"jwk": "key"})) == (
        "the DPoP proof's jwk is missing or not a public key")
    rsa_jwk = json.loads(RSAAlgorithm.to_jwk(rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key()))
    assert dpop_refusal("tok", cnf, holder.proof("tok", headers={"jwk": rsa_jwk})) == (
        "the DPoP proof's jwk is not a key for its alg")
    other = Holder()
    assert dpop_refusal("tok", cnf, holder.proof("tok", headers={"jwk": other.jwk})) == (
        "the DPoP proof's signature does not verify")
    assert dpop_refusal("tok", cnf, holder.proof("tok", method="GET")) == "the DPoP proof's htm is not the request's method"
    for url in ("https://mcp.example/other", "http://mcp.example/mcp", "https://mcp.example:444/mcp", 5):
        assert dpop_refusal("tok", cnf, holder.proof("tok", url=url)) == "the DPoP proof's htu is not the request's URI"
    for iat in (NOW + 1, NOW - 61, "now", True):
        assert dpop_refusal("tok", cnf, holder.proof("tok", iat=iat)) == "the DPoP proof's iat is outside the accepted window"
    assert dpop_refusal("tok", cnf, holder.proof("other-token")) == "the DPoP proof's ath does not match the access token"
    assert dpop_refusal("tok", cnf, holder.proof("tok", drop=("ath",))) == "the DPoP proof's ath does not match the access token"
    assert dpop_refusal("tok", {"jkt": other.jkt}, holder.proof("tok")) == (
        "the DPoP proof's key is not the key the token is bound to")
    assert dpop_refusal("tok", cnf, holder.proof("tok", drop=("jti",))) == "the DPoP proof was already used (jti replay)"


def test_the_proof_age_window_and_leeway() -> None:
    holder = Holder()
    cnf = {"jkt": holder.jkt}
    bind("tok", cnf, holder.proof("tok", iat=NOW - 60))  # exactly max_age old
    bind("tok", cnf, holder.proof("tok", iat=NOW + 5), leeway=5)
    bind("tok", cnf, holder.proof("tok", iat=NOW - 65), leeway=5)
    assert "iat" in dpop_refusal("tok", cnf, holder.proof("tok", iat=NOW + 6), leeway=5)
    assert "iat" in dpop_refusal("tok", cnf, holder.proof("tok", iat=NOW - 66), leeway=5)


def test_a_replayed_proof_is_refused_until_it_expires() -> None:
    holder = Holder()
    cnf = {"jkt": holder.jkt}
    replay = ReplayCache(clock=lambda: NOW)
    proof = holder.proof("tok", jti="once")
    bind("tok", cnf, proof, replay=replay)
    assert dpop_refusal("tok", cnf, proof, replay=replay) == "the DPoP proof was already used (jti replay)"
    # remembered until iat + max_age + leeway
    assert not replay.add("once", NOW + 1000)
    late = ReplayCache(clock=lambda: NOW + 60)
    late.add("once", NOW + 60)  # expires exactly now: forgotten
    assert late.add("once", NOW + 120)


def test_the_replay_cache_is_bounded_and_forgets_the_expired() -> None:
    clock = Clock(0)
    cache = ReplayCache(capacity=3, clock=clock)
    for i in range(3):
        assert cache.add(f"j{i}", 100 + i)
    assert len(cache) == 3
    assert cache.add("j3", 200)  # full: the oldest goes
    assert len(cache) == 3
    assert cache.add("j0", 300)  # j0 was dropped, so it is new again
    assert not cache.add("j3", 400)
    clock.now = 150  # j1 and j2 (100-102) expired; j3 (200) and j0 (300) not
    assert cache.add("j4", 500)
    assert len(cache) == 3
    assert not cache.add("j0", 600)


def test_rfc7638_thumbprints() -> None:
    # RFC 7638 section 3.1
    rsa_jwk = {
        "kty": "RSA",
        "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
        "e": "AQAB",
        "alg": "RS256",
        "kid": "2011-04-29",
    }
    assert jwk_thumbprint(rsa_jwk) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
    ec_jwk = {"kty": "EC", "crv": "P-256", "x": "a", "y": "b", "kid": "ignored"}
    canonical = b'{"crv":"P-256","kty":"EC","x":"a","y":"b"}'
    assert jwk_thumbprint(ec_jwk) == b64(hashlib.sha256(canonical).digest())
    okp = {"kty": "OKP", "crv": "Ed25519", "x": "abc"}
    assert jwk_thumbprint(okp) == b64(hashlib.sha256(b'{"crv":"Ed25519","kty":"OKP","x":"abc"}').digest())
    for bad in ({"kty": "oct", "k": "x"}, {"kty": "EC", "crv": "P-256", "x": "a"}, {"kty": "RSA", "n": 5, "e": "AQAB"}, {}):
        with pytest.raises(AuthError) as info:
            jwk_thumbprint(bad)
        assert (info.value.reason, info.value.message) == ("invalid_dpop", "the DPoP proof's jwk is not a usable public key")


def test_the_jwt_verifier_applies_the_dpop_binding_at_its_resource(issuer: Issuer) -> None:
    holder = Holder()
    token = issuer.token({"cnf": {"jkt": holder.jkt}})
    v = verifier(issuer, clock=lambda: NOW)
    # the binding uses the real clock for the proof's iat: make it now
    now = time.time()
    got = run(v.verify(token, dpop=DPoPProof(holder.proof(token, iat=now)), method="POST"))
    assert got.cnf == {"jkt": holder.jkt}
    assert refusal(v.verify(token)).reason == "invalid_dpop"
    # htu defaults to the resource; another url given is checked instead
    assert refusal(v.verify(token, dpop=DPoPProof(holder.proof(token, iat=now)), url="https://mcp.example/other")).reason == "invalid_dpop"
    # a cnf that is not an object binds nothing
    assert run(v.verify(issuer.token({"cnf": "x"}))).cnf is None
    with pytest.raises(ValueError, match="'HS256' is not allowed"):
        verifier(issuer, dpop_algorithms=["HS256"])


# -- server nonces (RFC 9449 section 9) ---------------------------------------------------------


def test_nonces_of_the_current_and_previous_window_are_valid() -> None:
    clock = Clock(1000.0)
    nonces = DPoPNonces(b"s" * 32, lifetime=100, clock=clock)
    first = nonces.current()
    assert first.startswith("10.")
    assert nonces.valid(first)
    clock.now = 1100.0  # the next window: the previous one still counts
    assert nonces.current() != first and nonces.valid(first)
    clock.now = 1200.0  # two windows on: no longer
    assert not nonces.valid(first)
    future = DPoPNonces(b"s" * 32, lifetime=100, clock=Clock(1300.0)).current()
    assert not nonces.valid(future)
    # stateless: another server with the same secret accepts it, another secret does not
    assert DPoPNonces(b"s" * 32, lifetime=100, clock=clock).valid(nonces.current())
    assert not DPoPNonces(b"t" * 32, lifetime=100, clock=clock).valid(nonces.current())
    head, _, mac = nonces.current().partition(".")
    for bad in (None, 12, "", "12", f"{head}.", f"{head}x.{mac}", f"-{head}.{mac}", f"{head}.{mac}A", "1" * 21 + "." + mac):
        assert not nonces.valid(bad), bad
    assert DPoPNonces(lifetime=1).valid(DPoPNonces(lifetime=1).current()) is False  # random secrets differ
    for lifetime in (0, -1):
        with pytest.raises(ValueError, match="the nonce lifetime must be positive"):
            DPoPNonces(lifetime=lifetime)


def test_a_nonce_window_number_of_twenty_digits_is_read() -> None:
    lifetime = 1e-9
    clock = Clock(1e10)  # window 10**19: twenty digits
    nonces = DPoPNonces(b"s" * 32, lifetime=lifetime, clock=clock)
    current = nonces.current()
    assert len(current.partition(".")[0]) == 20
    assert nonces.valid(current)


def test_the_proof_nonce_is_read_without_verifying() -> None:
    holder = Holder()
    assert proof_nonce(holder.proof("tok", nonce="n-1")) == "n-1"
    assert proof_nonce(holder.proof("tok")) is None
    assert proof_nonce("garbage") is None


# -- the resource server (RFC 6750, RFC 9728) ----------------------------------------------------


class Verifier:
    """A verifier that trusts every token and records what it was asked (the verifiers have their own tests)."""

    def __init__(self, scopes: str = "mcp") -> None:
        self.scopes = scopes
        self.calls: list[tuple[str, DPoPProof | None, str, str]] = []

    async def verify(self, token: str, *, dpop: DPoPProof | None, method: str, url: str) -> AccessToken:
        self.calls.append((token, dpop, method, url))
        return AccessToken(subject="alice", client_id="app", scopes=frozenset(self.scopes.split()), claims={})


def resource_server(verifier: Any = None, **options: Any) -> ResourceServer:
    return ResourceServer(verifier or Verifier(), resource="HTTPS://MCP.Example/mcp/",
                          authorization_servers=[ISSUER], **options)


def test_the_metadata_document() -> None:
    rs = resource_server()
    assert rs.resource == "https://mcp.example/mcp/"
    assert rs.metadata_path == "/.well-known/oauth-protected-resource/mcp"
    assert rs.metadata_url == "https://mcp.example/.well-known/oauth-protected-resource/mcp"
    assert rs.metadata() == {
        "resource": "https://mcp.example/mcp/",
        "authorization_servers": [ISSUER],
        "bearer_methods_supported": ["header"],
        "dpop_signing_alg_values_supported": ["ES256", "ES384", "ES512", "RS256", "PS256", "EdDSA"],
    }
    full = resource_server(scopes_supported=["mcp", "admin", "mcp"], resource_name="Files", resource_documentation="https://d",
                           dpop=False, extra_metadata={"x": 1}).metadata()
    assert full == {
        "resource": "https://mcp.example/mcp/", "authorization_servers": [ISSUER], "bearer_methods_supported": ["header"],
        "scopes_supported": ["mcp", "admin"], "resource_name": "Files", "resource_documentation": "https://d", "x": 1,
    }
    root = ResourceServer(Verifier(), resource="https://mcp.example", authorization_servers=[ISSUER])
    assert root.metadata_path == "/.well-known/oauth-protected-resource"
    with pytest.raises(ValueError, match="authorization_servers must name at least one authorization server"):
        ResourceServer(Verifier(), resource=RESOURCE, authorization_servers=[])
    for bad in ("a b", 'q"', "back\\slash", ""):
        with pytest.raises(ValueError, match=r"required_scopes: .* is not a valid scope \(RFC 6749 section 3.3\)"):
            resource_server(required_scopes=[bad])
    with pytest.raises(ValueError, match="scopes_supported: "):
        resource_server(scopes_supported=["ok", "not ok"])


def authenticate(rs: ResourceServer, authorization: list[str], dpop: list[str] | None = None, **kw: Any) -> AccessToken:
    return run(rs.authenticate(authorization, dpop or [], method=kw.pop("method", "POST"), **kw))


def auth_refusal(rs: ResourceServer, authorization: list[str], dpop: list[str] | None = None, **kw: Any) -> AuthError:
    with pytest.raises(AuthError) as info:
        authenticate(rs, authorization, dpop, **kw)
    return info.value


def test_credentials_are_exactly_one_bearer_or_dpop_token() -> None:
    v = Verifier()
    rs = resource_server(v)
    assert authenticate(rs, ["Bearer abc.def-_~+/=="]).subject == "alice"
    assert authenticate(rs, ["  bearer   tok  "], method="GET").subject == "alice"
    assert v.calls[-1] == ("tok", None, "GET", "https://mcp.example/mcp/")
    cases = [
        ([], "missing", "this resource needs an access token (Authorization: Bearer ...)"),
        (["Bearer a", "Bearer b"], "invalid_request", "the request carries more than one Authorization header"),
        (["Basic dXNlcjpwYXNz"], "missing", "this resource accepts the Bearer authorization scheme only"),
        (["Bearer"], "malformed", "the Authorization header does not carry one token"),
        (["Bearer a b"], "malformed", "the Authorization header does not carry one token"),
        (["Bearer a=b"], "malformed", "the Authorization header does not carry one token"),
    ]
    for authorization, reason, message in cases:
        error = auth_refusal(rs, authorization)
        assert (error.reason, error.message) == (reason, message), authorization
    error = auth_refusal(rs, ["Bearer tok"], query="x=1&access_token=tok")
    assert (error.reason, error.message) == ("invalid_request", "access tokens must not be sent in the query string")
    assert authenticate(rs, ["Bearer tok"], query="token=1").subject == "alice"


def test_the_dpop_scheme_needs_one_proof_and_can_be_turned_off() -> None:
    v = Verifier()
    rs = resource_server(v)
    assert authenticate(rs, ["DPoP tok"], [" proof "]).subject == "alice"
    assert v.calls[-1][1] == DPoPProof("proof")
    for dpop in ([], ["a", "b"], ["  "]):
        error = auth_refusal(rs, ["DPoP tok"], dpop)
        assert (error.reason, error.message) == ("invalid_dpop", "the DPoP scheme needs exactly one DPoP header with a proof")
    error = auth_refusal(resource_server(dpop=False), ["DPoP tok"], ["proof"])
    assert (error.reason, error.message) == ("missing", "this resource accepts the Bearer authorization scheme only")
    assert resource_server(dpop=False).metadata().get("dpop_signing_alg_values_supported") is None


def test_with_nonces_a_proof_must_carry_this_servers_nonce() -> None:
    holder = Holder()
    rs = resource_server(dpop_nonce=True, dpop_nonce_secret=b"n" * 32)
    nonce = rs.dpop_nonce()
    assert nonce is not None
    assert authenticate(rs, ["DPoP tok"], [holder.proof("tok", nonce=nonce)]).subject == "alice"
    for proof in (holder.proof("tok"), holder.proof("tok", nonce="1.abc")):
        error = auth_refusal(rs, ["DPoP tok"], [proof])
        assert (error.reason, error.message) == ("use_dpop_nonce", "the DPoP proof must carry this server's nonce (DPoP-Nonce)")
        assert (error.status, error.error) == (401, "use_dpop_nonce")
    assert resource_server().dpop_nonce() is None
    assert resource_server(dpop=False, dpop_nonce=True).dpop_nonce() is None
    # a bearer token needs no nonce
    assert authenticate(rs, ["Bearer tok"]).subject == "alice"


def test_required_scopes_after_the_implied_ones_are_added() -> None:
    rs = resource_server(Verifier("admin"), required_scopes=["mcp", "read"], scope_implies={"admin": ["mcp"], "mcp": ["read"]})
    token = authenticate(rs, ["Bearer tok"])
    assert token.scopes == frozenset({"admin", "mcp", "read"})
    error = auth_refusal(resource_server(Verifier("read"), required_scopes=["mcp", "read"]), ["Bearer tok"])
    assert (error.reason, error.message, error.scopes) == ("insufficient_scope", "this resource needs the scope mcp read", ("mcp", "read"))
    assert (error.status, error.error) == (403, "insufficient_scope")
    same = AccessToken(subject="a", client_id=None, scopes=frozenset({"mcp"}), claims={})
    assert resource_server(scope_implies={"admin": ["mcp"]}).expand(same) is same
    assert resource_server().expand(same) is same
    assert resource_server(required_scopes=["mcp"]).needed_scopes(["admin", "mcp"]) == ("mcp", "admin")


def test_the_challenge_says_where_the_metadata_is_and_what_is_needed() -> None:
    rs = resource_server(required_scopes=["mcp"])
    url = "https://mcp.example/.well-known/oauth-protected-resource/mcp"
    assert rs.challenge(AuthError("missing", "no token")) == f'Bearer resource_metadata="{url}", scope="mcp"'
    assert rs.challenge(AuthError("expired", 'it "expired" \\ now')) == (
        f'Bearer resource_metadata="{url}", scope="mcp", error="invalid_token", '
        'error_description="it \\"expired\\" \\\\ now"')
    assert rs.challenge(AuthError("insufficient_scope", "more", scopes=("mcp", "admin")), dpop_scheme=True) == (
        f'DPoP resource_metadata="{url}", scope="mcp admin", error="insufficient_scope", error_description="more", '
        'algs="ES256 ES384 ES512 RS256 PS256 EdDSA"')
    bare = resource_server(scopes_supported=["a", "b"])
    assert bare.challenge(AuthError("missing", "x")) == f'Bearer resource_metadata="{url}", scope="a b"'
    assert resource_server().challenge(AuthError("missing", "x")) == f'Bearer resource_metadata="{url}"'


@pytest.mark.parametrize(
    "reason, status, error",
    [
        ("missing", 401, None), ("malformed", 401, "invalid_token"), ("expired", 401, "invalid_token"),
        ("insufficient_scope", 403, "insufficient_scope"), ("invalid_request", 400, "invalid_request"),
        ("unavailable", 503, None), ("use_dpop_nonce", 401, "use_dpop_nonce"), ("invalid_dpop", 401, "invalid_token"),
    ],
)
def test_each_reason_has_its_status_and_error_code(reason: Any, status: int, error: str | None) -> None:
    refused = AuthError(reason, "why")
    assert (refused.status, refused.error, refused.message, str(refused)) == (status, error, "why", "why")
    assert refused.scopes == ()
    assert repr(refused) == f"AuthError({reason!r}, 'why')"


# -- introspection (RFC 7662) --------------------------------------------------------------------


def introspector(issuer: Issuer, **options: Any) -> IntrospectionVerifier:
    return IntrospectionVerifier(issuer=ISSUER, resource=RESOURCE, client_id="rs", client_secret="s3cret",
                                 http_client=issuer.client(), clock=lambda: NOW, **options)


def test_introspection_asks_as_a_client_and_trusts_only_an_active_answer(issuer: Issuer) -> None:
    issuer.introspection = (200, {"active": True, "aud": RESOURCE, "sub": "alice", "scope": "mcp", "iss": ISSUER})
    got = run(introspector(issuer).verify("opaque"))
    assert (got.subject, got.scopes) == ("alice", frozenset({"mcp"}))
    post = issuer.requests[-1]
    assert post.url.path == "/introspect"
    assert post.headers["authorization"] == "Basic " + base64.b64encode(b"rs:s3cret").decode()
    assert dict(httpx.QueryParams(post.content.decode())) == {"token": "opaque", "token_type_hint": "access_token"}
    # discovered once
    assert [r.url.path for r in issuer.requests] == ["/.well-known/oauth-authorization-server", "/introspect"]
    run(introspector(issuer, auth_method="client_secret_post", introspection_endpoint="https://as.example/introspect").verify("t2"))
    post = issuer.requests[-1]
    assert "authorization" not in post.headers
    assert dict(httpx.QueryParams(post.content.decode())) == {
        "token": "t2", "token_type_hint": "access_token", "client_id": "rs", "client_secret": "s3cret"}
    assert "s3cret" not in repr(introspector(issuer))
    assert repr(introspector(issuer)) == f"IntrospectionVerifier(issuer={ISSUER!r}, resource={RESOURCE!r}, client_id='rs')"


def test_introspection_refusals(issuer: Issuer) -> None:
    cases = [
        ((500, {"active": True}), "unavailable", "the introspection endpoint answered 500"),
        ((200, None), "unavailable", "the introspection endpoint answered 200"),
        ((200, {"active": False, "aud": RESOURCE}), "inactive", "the access token is not active"),
        ((200, {"active": "true", "aud": RESOURCE}), "inactive", "the access token is not active"),
        ((200, {"active": True, "aud": RESOURCE, "iss": "https://evil.example"}), "wrong_issuer",
         f"the access token was not issued by {ISSUER}"),
        ((200, {"active": True}), "wrong_audience", f"the access token is not for this resource ({RESOURCE})"),
        ((200, {"active": True, "aud": "https://other.example"}), "wrong_audience",
         f"the access token is not for this resource ({RESOURCE})"),
        ((200, {"active": True, "aud": RESOURCE, "exp": NOW - 61}), "expired", "the access token has expired"),
        ((200, {"active": True, "aud": RESOURCE, "nbf": NOW + 61}), "not_yet_valid",
         "the access token is not valid yet (nbf is in the future)"),
        ((200, {"active": True, "aud": RESOURCE, "cnf": {"jkt": "abc"}}), "invalid_dpop",
         "the token is DPoP-bound: send it with the DPoP scheme and a DPoP proof"),
    ]
    for answer, reason, message in cases:
        issuer.introspection = answer
        error = refusal(introspector(issuer).verify("opaque"))
        assert (error.reason, error.message) == (reason, message), answer
    # without aud: refused unless require_audience=False; an aud present is always checked
    issuer.introspection = (200, {"active": True})
    assert run(introspector(issuer, require_audience=False).verify("opaque")).subject is None
    issuer.introspection = (200, {"active": True, "aud": "https://other.example"})
    assert refusal(introspector(issuer, require_audience=False).verify("opaque")).reason == "wrong_audience"
    issuer.introspection = (200, {"active": True, "aud": RESOURCE, "cnf": "x"})
    assert run(introspector(issuer).verify("opaque")).cnf is None


def test_introspection_configuration_is_checked() -> None:
    with pytest.raises(ValueError, match="auth_method must be client_secret_basic or client_secret_post"):
        IntrospectionVerifier(issuer=ISSUER, resource=RESOURCE, client_id="a", client_secret="b", auth_method="none")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="introspection_endpoint must be an https URL"):
        IntrospectionVerifier(issuer=ISSUER, resource=RESOURCE, client_id="a", client_secret="b",
                              introspection_endpoint="http://as.example/i")
    with pytest.raises(ValueError, match="issuer must be an https URL"):
        IntrospectionVerifier(issuer="http://as.example", resource=RESOURCE, client_id="a", client_secret="b")
    with pytest.raises(ValueError, match="'none' is not allowed"):
        IntrospectionVerifier(issuer=ISSUER, resource=RESOURCE, client_id="a", client_secret="b", dpop_algorithms=["none"])


# -- rules found by the first auth-server run ----------------------------------------------------


def test_a_nonce_is_the_same_in_every_version_and_its_mac_covers_its_window() -> None:
    nonces = DPoPNonces(b"s" * 32, lifetime=100, clock=Clock(1000.0))
    current = nonces.current()
    # "{window}.{base64url of the first 18 bytes of HMAC-SHA256(secret, window)}": servers of
    # different versions behind one load balancer accept each other's nonces.
    import hmac as hmac_

    mac = hmac_.new(b"s" * 32, b"10", hashlib.sha256).digest()[:18]
    assert current == "10." + b64(mac)
    # the current MAC under the previous window's number is not that window's nonce
    assert not nonces.valid("9." + current.partition(".")[2])
    assert nonces.valid("9." + b64(hmac_.new(b"s" * 32, b"9", hashlib.sha256).digest()[:18]))


def test_servers_sharing_a_nonce_secret_accept_each_others_nonces() -> None:
    holder = Holder()
    one = resource_server(dpop_nonce=True, dpop_nonce_secret=b"shared-secret-of-32-bytes-length")
    two = resource_server(dpop_nonce=True, dpop_nonce_secret=b"shared-secret-of-32-bytes-length")
    nonce = one.dpop_nonce()
    assert authenticate(two, ["DPoP tok"], [holder.proof("tok", nonce=nonce)]).subject == "alice"
    other = resource_server(dpop_nonce=True)
    assert auth_refusal(other, ["DPoP tok"], [holder.proof("tok", nonce=nonce)]).reason == "use_dpop_nonce"


def test_the_nonce_lifetime_is_five_minutes_unless_configured() -> None:
    assert DPoPNonces().lifetime == 300.0
    rs = resource_server(dpop_nonce=True)
    assert rs.nonces is not None and rs.nonces.lifetime == 300.0
    rs = resource_server(dpop_nonce=True, dpop_nonce_lifetime=10)
    assert rs.nonces is not None and rs.nonces.lifetime == 10


def test_the_token_reaches_the_verifier_exactly_and_only_spaces_separate_it() -> None:
    v = Verifier()
    rs = resource_server(v)
    authenticate(rs, ["Bearer XtokX"])
    assert v.calls[-1][0] == "XtokX"
    # RFC 7235: auth-scheme 1*SP token68 -- a tab is not a separator
    assert auth_refusal(rs, ["Bearer \ttok"]).reason == "malformed"


def test_the_metadata_path_keeps_the_resource_path() -> None:
    rs = ResourceServer(Verifier(), resource="https://mcp.example/boX/", authorization_servers=[ISSUER])
    assert rs.metadata_path == "/.well-known/oauth-protected-resource/boX"


def test_a_url_without_a_host_is_never_fetched() -> None:
    for url in ("http://", "http:///jwks", "http://:80/x"):
        with pytest.raises(ValueError, match="must be an https URL"):
            check_fetchable(url, "jwks_uri")


def test_an_entry_expiring_exactly_now_is_dropped() -> None:
    clock = Clock(0)
    cache = ReplayCache(capacity=10, clock=clock)
    cache.add("a", 100)
    cache.add("b", 200)
    clock.now = 100
    cache.add("c", 300)
    assert len(cache) == 2  # "a" expired at 100: gone


def test_introspection_checks_the_dpop_proof_against_the_default_method_and_the_resource(issuer: Issuer) -> None:
    holder = Holder()
    issuer.introspection = (200, {"active": True, "aud": RESOURCE, "cnf": {"jkt": holder.jkt}})
    v = introspector(issuer)
    now = time.time()
    got = run(v.verify("opaque", dpop=DPoPProof(holder.proof("opaque", iat=now))))
    assert got.cnf == {"jkt": holder.jkt}
    assert refusal(v.verify("opaque", dpop=DPoPProof(holder.proof("opaque", iat=now, method="GET")))).reason == "invalid_dpop"
    jwt_verifier = verifier(issuer)
    token = issuer.token({"cnf": {"jkt": holder.jkt}})
    assert run(jwt_verifier.verify(token, dpop=DPoPProof(holder.proof(token, iat=now)))).cnf == {"jkt": holder.jkt}


def test_an_empty_path_is_the_root_on_either_side() -> None:
    holder = Holder()
    cnf = {"jkt": holder.jkt}
    bind("tok", cnf, holder.proof("tok", url="https://mcp.example"), url="https://mcp.example/")
    bind("tok", cnf, holder.proof("tok", url="https://mcp.example/"), url="https://mcp.example")


def test_the_key_set_settings_reach_the_key_set(issuer: Issuer) -> None:
    v = verifier(issuer, jwks_max_age=5, jwks_min_refresh_interval=7)
    assert (v.jwks.max_age, v.jwks.min_refresh_interval) == (5, 7)


def test_a_configured_introspection_endpoint_skips_discovery(issuer: Issuer) -> None:
    issuer.introspection = (200, {"active": True, "aud": RESOURCE})
    run(introspector(issuer, introspection_endpoint="https://as.example/introspect").verify("t"))
    assert [r.url.path for r in issuer.requests] == ["/introspect"]
    with pytest.raises(ValueError) as info:
        IntrospectionVerifier(issuer=ISSUER, resource=RESOURCE, client_id="a", client_secret="b", auth_method="x")  # type: ignore[arg-type]
    assert str(info.value) == "auth_method must be client_secret_basic or client_secret_post"


def test_aclose_closes_the_http_client_it_was_given_and_nothing_else() -> None:
    given = httpx.AsyncClient()
    run(Fetcher(given).aclose())
    assert given.is_closed
    run(Fetcher().aclose())  # nothing made yet: nothing to close, no error


def test_configuration_errors_say_exactly_what_is_wrong() -> None:
    with pytest.raises(ValueError) as info:
        ResourceServer(Verifier(), resource=RESOURCE, authorization_servers=[])
    assert str(info.value) == "authorization_servers must name at least one authorization server"
    with pytest.raises(ValueError) as info:
        DPoPNonces(lifetime=0)
    assert str(info.value) == "the nonce lifetime must be positive"
