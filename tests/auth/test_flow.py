"""The OAuth client's flow against an in-process authorization server (fakeas.py): iss (RFC 9207),
state, PKCE, resource, scopes, step-up and retry limits, migration, DPoP nonces, refresh."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import jwt
import pytest

from wiremcp.auth import AuthError, JWTBearerGrant, MemoryTokenStore, OAuthClient, PreRegisteredClient

from .fakeas import SERVER_URL, FakeAS, challenge


def client_for(fake: FakeAS, **options: Any) -> OAuthClient:
    return OAuthClient(http_client=httpx.AsyncClient(transport=fake.transport()), **options)


def run(coro):
    return asyncio.run(coro)


async def authorize(auth: OAuthClient, status: int = 401, headers: dict[str, str] | None = None) -> bool:
    await auth.headers("POST", SERVER_URL)
    return await auth.on_response(status, headers if headers is not None else challenge(), SERVER_URL)


def token_requests(fake: FakeAS) -> int:
    return len(fake.token_forms)


def test_basic_flow_sends_pkce_resource_and_token():
    fake = FakeAS(prm_scopes=["a", "b"])

    async def go():
        auth = client_for(fake)
        assert await auth.headers("POST", SERVER_URL) == {}
        assert await authorize(auth) is True
        assert await auth.headers("POST", SERVER_URL) == {"Authorization": "Bearer token-1"}

    run(go())
    [q] = fake.authorizations
    assert q["code_challenge_method"] == "S256" and q["resource"] == SERVER_URL and q["scope"] == "a b"
    [form] = fake.token_forms
    assert form["resource"] == SERVER_URL and form["grant_type"] == "authorization_code" and form["client_id"] == "client-1"
    assert fake.registrations[0]["application_type"] == "native"
    assert "refresh_token" in fake.registrations[0]["grant_types"]


@pytest.mark.parametrize(
    "supported, mode, ok",
    [
        (True, "correct", True),
        (True, "omit", False),  # advertised but absent: reject
        (None, "omit", True),  # neither: proceed
        (False, "omit", True),
        (None, "wrong", False),  # present and wrong, even unadvertised: reject
        (True, "wrong", False),
        (True, "slash", False),  # no normalization: a trailing slash is a different issuer
    ],
)
def test_iss_validation(supported, mode, ok):
    fake = FakeAS(iss_supported=supported, iss_mode=mode)

    async def go():
        auth = client_for(fake)
        if ok:
            assert await authorize(auth)
        else:
            with pytest.raises(AuthError, match="iss"):
                await authorize(auth)

    run(go())
    assert len(fake.authorizations) == 1
    assert token_requests(fake) == (1 if ok else 0)  # the code never reaches a token endpoint on a mismatch


def test_state_mismatch_rejected():
    fake = FakeAS(state_mode="wrong")

    async def go():
        with pytest.raises(AuthError, match="state"):
            await authorize(client_for(fake))

    run(go())
    assert token_requests(fake) == 0


def test_pkce_support_required():
    fake = FakeAS(pkce_methods=None)

    async def go():
        with pytest.raises(AuthError, match="S256"):
            await authorize(client_for(fake))

    run(go())
    assert fake.authorizations == []


def test_resource_mismatch_stops_before_authorization():
    fake = FakeAS(resource="https://evil.example.com/mcp")

    async def go():
        with pytest.raises(AuthError, match="evil.example.com"):
            await authorize(client_for(fake))

    run(go())
    assert fake.authorizations == [] and fake.registrations == []


def test_metadata_issuer_mismatch_never_used():
    fake = FakeAS(metadata_issuer="https://attacker.example.com")

    async def go():
        with pytest.raises(AuthError, match="attacker"):
            await authorize(client_for(fake))

    run(go())
    assert fake.registrations == [] and fake.authorizations == []


def test_scope_from_challenge_then_offline_access_when_listed():
    fake = FakeAS(prm_scopes=["x"], as_scopes=["read", "offline_access"])

    async def go():
        await authorize(client_for(fake), headers=challenge(scope="read"))

    run(go())
    assert fake.authorizations[0]["scope"] == "read offline_access"


def test_scope_omitted_when_nothing_says():
    fake = FakeAS()
    run(authorize(client_for(fake)))
    assert "scope" not in fake.authorizations[0]


def test_step_up_unions_scopes_and_is_bounded():
    fake = FakeAS()

    async def go():
        auth = client_for(fake)
        await authorize(auth, headers=challenge(scope="basic"))
        forbidden = challenge(error="insufficient_scope", scope="write")
        assert await authorize(auth, 403, forbidden)
        with pytest.raises(AuthError, match="insufficient_scope"):
            await authorize(auth, 403, forbidden)
        # a 403 that is not insufficient_scope is not an authorization problem
        assert await auth.on_response(403, challenge(error="forbidden"), SERVER_URL) is False

    run(go())
    assert [q.get("scope") for q in fake.authorizations] == ["basic", "basic write"]


def test_repeated_401_on_fresh_tokens_is_bounded():
    fake = FakeAS()

    async def go():
        auth = client_for(fake)
        assert await authorize(auth)
        assert await authorize(auth)
        with pytest.raises(AuthError, match="in a row"):
            await authorize(auth)

    run(go())
    assert len(fake.authorizations) == 2


def test_authorization_server_change_registers_again():
    fake = FakeAS(client_id="as1-client")

    async def go():
        auth = client_for(fake)
        await authorize(auth)
        for _ in range(3):
            await auth.headers("POST", SERVER_URL)  # the token in use for a while
        fake.issuer = "http://localhost:8"
        fake.client_id = "as2-client"
        await auth.on_response(401, challenge(), SERVER_URL)

    run(go())
    assert len(fake.registrations) == 2
    assert [q["client_id"] for q in fake.authorizations] == ["as1-client", "as2-client"]
    assert fake.token_forms[-1]["client_id"] == "as2-client"


def test_preregistered_client_bound_to_its_issuer():
    fake = FakeAS(registration=False, auth_methods=["client_secret_basic"])
    pre = PreRegisteredClient("pre-id", "pre-secret", issuer=fake.issuer)
    run(authorize(client_for(fake, client=pre)))
    assert fake.token_forms[0]["_basic"] == "pre-id:pre-secret" and "client_secret" not in fake.token_forms[0]

    other = FakeAS(registration=False)
    with pytest.raises(AuthError, match="pre-registered client belongs to"):
        run(authorize(client_for(other, client=PreRegisteredClient("pre-id", "s", issuer="https://elsewhere.example"))))


def test_client_id_metadata_document_when_supported():
    fake = FakeAS(cimd=True)
    url = "https://app.example.com/client.json"
    run(authorize(client_for(fake, client_metadata_url=url)))
    assert fake.registrations == []
    assert fake.authorizations[0]["client_id"] == url and fake.token_forms[0]["client_id"] == url
    with pytest.raises(ValueError):
        OAuthClient(client_metadata_url="http://app.example.com/client.json")


def test_dpop_token_request_nonce_retry_and_proof_per_request():
    fake = FakeAS(dpop_algs=["ES256"], dpop_nonce="as-nonce")

    async def go():
        auth = client_for(fake)
        await authorize(auth)
        first = await auth.headers("POST", SERVER_URL)
        # the resource server asks for its own nonce
        assert await auth.on_response(
            401, {"www-authenticate": 'DPoP error="use_dpop_nonce"', "dpop-nonce": "rs-nonce"}, SERVER_URL
        )
        second = await auth.headers("POST", SERVER_URL + "?q=1")
        return first, second

    first, second = run(go())
    assert [("nonce" in jwt.decode(f["_dpop"], options={"verify_signature": False})) for f in fake.token_forms] == [False, True]
    assert first["Authorization"] == "DPoP token-1" and second["Authorization"] == "DPoP token-1"
    p1 = jwt.decode(first["DPoP"], options={"verify_signature": False})
    p2 = jwt.decode(second["DPoP"], options={"verify_signature": False})
    header = jwt.get_unverified_header(second["DPoP"])
    assert header["typ"] == "dpop+jwt" and "d" not in header["jwk"]
    assert p1["jti"] != p2["jti"] and p2["nonce"] == "rs-nonce" and "nonce" not in p1
    assert p2["htu"] == SERVER_URL and p2["htm"] == "POST" and p2["ath"]
    key = jwt.PyJWK(header["jwk"]).key
    jwt.decode(second["DPoP"], key, algorithms=["ES256"])  # the signature verifies with the embedded key


def test_refresh_when_expired():
    fake = FakeAS(refresh_token="r-1", expires_in=1)

    async def go():
        auth = client_for(fake)
        await authorize(auth)
        return await auth.headers("POST", SERVER_URL)  # expires_in 1 < the expiry skew: refreshed first

    assert run(go()) == {"Authorization": "Bearer token-2"}
    assert [f["grant_type"] for f in fake.token_forms] == ["authorization_code", "refresh_token"]
    assert fake.token_forms[1]["refresh_token"] == "r-1" and fake.token_forms[1]["resource"] == SERVER_URL


def test_a_new_client_uses_the_stored_client_and_refresh_token():
    """What a second process does: the first one saved its client and tokens (issuer, resource); the
    second refreshes with them on its first 401, with no registration and no login."""
    fake = FakeAS(refresh_token="r-1", expires_in=1)
    store = MemoryTokenStore()

    async def go():
        first = client_for(fake, store=store)
        await authorize(first)
        saved = await store.load(fake.issuer, SERVER_URL)
        second = client_for(fake, store=store)
        assert await authorize(second) is True
        return saved, second.authorized

    saved, authorized = run(go())
    assert saved is not None and saved["tokens"]["refresh_token"] == "r-1" and saved["client"]["client_id"] == "client-1"
    assert authorized
    assert len(fake.registrations) == 1 and len(fake.authorizations) == 1
    assert [f["grant_type"] for f in fake.token_forms] == ["authorization_code", "refresh_token"]


def test_jwt_bearer_failure_is_final():
    fake = FakeAS(token_error="invalid_grant")

    async def go():
        auth = client_for(fake, grant=JWTBearerGrant("a.b.c", client_id="wl"))
        with pytest.raises(AuthError, match="invalid_grant") as first:
            await authorize(auth)
        with pytest.raises(AuthError) as again:
            await authorize(auth)
        assert again.value is first.value

    run(go())
    assert len(fake.token_forms) == 1
    assert fake.token_forms[0]["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"


def test_errors_never_contain_secrets():
    fake = FakeAS(token_error="invalid_client", registration=False, auth_methods=["client_secret_post"])

    async def go():
        auth = client_for(fake, client=PreRegisteredClient("id", "TOPSECRET"))
        with pytest.raises(AuthError) as info:
            await authorize(auth)
        return str(info.value)

    text = run(go())
    assert "TOPSECRET" not in text and "the-code" not in text and "token request" in text
