"""The OAuth client's rules that mutation testing found unguarded by the in-process tests.

Against the in-process authorization server of fakeas.py (``httpx.MockTransport``),
as tests/auth/test_flow.py. Each test names the rule:

* enterprise-managed authorization (extensions/auth, "Enterprise-Managed
  Authorization"; RFC 8693 token exchange then the RFC 7523 JWT-bearer
  grant): the ID token goes to the enterprise IdP only, with the requested
  token type ID-JAG, the authorization server as ``audience``, the MCP
  ``resource`` and the scopes; the IdP client authenticates with HTTP Basic
  (form-encoded id and secret) or names itself in the form; anything but an
  ID-JAG back is refused, naming the step;
* a server without protected resource metadata is a 2025-03-26 server: its
  origin is the authorization server (metadata with that issuer, else the
  default endpoints ``/authorize``, ``/token``, ``/register``);
* ``repr`` never shows a token; ``aclose`` closes what the flow opened.
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest

from wiremcp.auth import AuthError, EnterpriseGrant, OAuthClient

from .fakeas import BASE, SERVER_URL, FakeAS, challenge

IDP = "http://localhost:8"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


def run(coro: Any) -> Any:
    return asyncio.run(coro)


class IdP:
    """The enterprise identity provider's token endpoint, in front of a FakeAS."""

    def __init__(self, fake: FakeAS) -> None:
        self.fake = fake
        self.forms: list[dict[str, str]] = []
        self.headers: list[httpx.Headers] = []
        self.answer: tuple[int, Any] = (200, {"access_token": "the-id-jag", "issued_token_type": ID_JAG, "token_type": "N_A"})

    def handle(self, request: httpx.Request) -> httpx.Response:
        if str(request.url).startswith(IDP):
            self.forms.append({k: v[0] for k, v in parse_qs(request.content.decode()).items()})
            self.headers.append(request.headers)
            status, body = self.answer
            return httpx.Response(status, json=body)
        return self.fake.handle(request)

    def client(self, **options: Any) -> OAuthClient:
        return OAuthClient(http_client=httpx.AsyncClient(transport=httpx.MockTransport(self.handle)), **options)


async def authorize(auth: OAuthClient, headers: dict[str, str] | None = None) -> bool:
    await auth.headers("POST", SERVER_URL)
    return await auth.on_response(401, headers if headers is not None else challenge(), SERVER_URL)


def enterprise(**options: Any) -> EnterpriseGrant:
    values: dict[str, Any] = {"idp_token_endpoint": IDP + "/token", "id_token": "the-id-token", "client_id": "mcp-client"}
    values.update(options)
    return EnterpriseGrant(**values)


def test_the_id_token_is_exchanged_at_the_idp_for_an_id_jag_then_traded_at_the_authorization_server() -> None:
    fake = FakeAS(prm_scopes=["files:read", "files:write"])
    idp = IdP(fake)
    auth = idp.client(grant=enterprise(idp_client_id="idp client", idp_client_secret="s&c:r"))

    async def go() -> dict[str, str]:
        assert await authorize(auth)
        return await auth.headers("POST", SERVER_URL)

    headers = run(go())
    assert headers == {"Authorization": "Bearer token-1"}
    (exchange,) = idp.forms
    assert exchange == {
        "grant_type": TOKEN_EXCHANGE,
        "requested_token_type": ID_JAG,
        "audience": fake.issuer,
        "resource": SERVER_URL,
        "subject_token": "the-id-token",
        "subject_token_type": ID_TOKEN,
        "scope": "files:read files:write",
    }
    # client_secret_basic at the IdP: id and secret form-encoded (nothing left safe), then joined
    expected = base64.b64encode(b"idp%20client:s%26c%3Ar").decode()
    assert idp.headers[0]["authorization"] == f"Basic {expected}"
    (bearer,) = fake.token_forms
    assert bearer["grant_type"] == JWT_BEARER
    assert bearer["assertion"] == "the-id-jag"
    assert bearer["resource"] == SERVER_URL
    assert bearer["scope"] == "files:read files:write"
    # the ID token never goes to the authorization server
    assert all("the-id-token" not in request.content.decode() for request in fake.requests)


def test_a_public_idp_client_names_itself_in_the_form_and_no_scope_is_sent_when_none_is_wanted() -> None:
    fake = FakeAS()
    idp = IdP(fake)
    auth = idp.client(grant=enterprise(idp_client_id="public-idp-client"))
    assert run(authorize(auth))
    (exchange,) = idp.forms
    assert exchange["client_id"] == "public-idp-client"
    assert "scope" not in exchange
    assert "authorization" not in idp.headers[0]
    assert "scope" not in fake.token_forms[0]


def test_without_an_idp_client_nothing_identifies_the_client_at_the_idp() -> None:
    fake = FakeAS()
    idp = IdP(fake)
    assert run(authorize(idp.client(grant=enterprise(idp_client_secret="unused-without-an-id"))))
    assert "client_id" not in idp.forms[0]
    assert "authorization" not in idp.headers[0]


def test_the_grants_own_scopes_win() -> None:
    fake = FakeAS(prm_scopes=["a", "b"])
    idp = IdP(fake)
    assert run(authorize(idp.client(grant=enterprise(scopes=["only"]))))
    assert idp.forms[0]["scope"] == "only"
    assert fake.token_forms[0]["scope"] == "only"


@pytest.mark.parametrize(
    "answer, reason, error",
    [
        ((400, {"error": "invalid_grant", "error_description": "expired id token"}),
         f"{IDP}/token refused: HTTP 400, error 'invalid_grant': expired id token", "invalid_grant"),
        ((200, {"access_token": "x", "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"}),
         f"{IDP}/token did not issue an ID-JAG", None),
        ((200, {"issued_token_type": ID_JAG}), f"{IDP}/token did not issue an ID-JAG", None),
        ((200, {"access_token": "", "issued_token_type": ID_JAG}), f"{IDP}/token did not issue an ID-JAG", None),
        ((200, {"access_token": 5, "issued_token_type": ID_JAG}), f"{IDP}/token did not issue an ID-JAG", None),
    ],
)
def test_anything_but_an_id_jag_from_the_idp_is_refused_naming_the_step(answer: tuple[int, Any], reason: str, error: str | None) -> None:
    fake = FakeAS()
    idp = IdP(fake)
    idp.answer = answer
    with pytest.raises(AuthError) as info:
        run(authorize(idp.client(grant=enterprise())))
    assert info.value.step == "token exchange at the identity provider"
    assert info.value.reason == reason
    assert info.value.error == error
    assert fake.token_forms == []  # nothing reached the authorization server's token endpoint


class Legacy:
    """A 2025-03-26 server at BASE: no protected resource metadata; its origin is the authorization server."""

    def __init__(self, metadata: dict[str, Any] | None) -> None:
        self.metadata = metadata
        self.requests: list[httpx.Request] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        path = request.url.path
        if path == "/.well-known/oauth-authorization-server" and self.metadata is not None:
            return httpx.Response(200, json=self.metadata)
        if path == "/register":
            return httpx.Response(201, json={"client_id": "legacy-client", "redirect_uris": json.loads(request.content)["redirect_uris"]})
        if path == "/authorize":
            query = parse_qs(request.url.query.decode())
            location = query["redirect_uri"][0] + "?code=c&state=" + query["state"][0]
            return httpx.Response(302, headers={"Location": location})
        if path == "/token":
            return httpx.Response(200, json={"access_token": "legacy-token", "token_type": "Bearer", "expires_in": 60})
        return httpx.Response(404, json={"error": "not_found"})

    def client(self) -> OAuthClient:
        return OAuthClient(http_client=httpx.AsyncClient(transport=httpx.MockTransport(self.handle)))


def test_a_server_without_resource_metadata_uses_its_origins_default_endpoints() -> None:
    legacy = Legacy(None)
    auth = legacy.client()
    assert run(authorize(auth, {}))
    assert auth.issuer == BASE
    assert auth.resource == SERVER_URL
    paths = [(r.method, r.url.path) for r in legacy.requests]
    assert ("GET", "/.well-known/oauth-authorization-server") in paths
    assert ("POST", "/register") in paths
    assert ("GET", "/authorize") in paths
    assert ("POST", "/token") in paths
    assert all(str(r.url).startswith(BASE + "/") for r in legacy.requests)
    assert run(auth.headers("POST", SERVER_URL)) == {"Authorization": "Bearer legacy-token"}


@pytest.mark.parametrize("issuer", [BASE, BASE + "/"])
def test_a_legacy_servers_metadata_is_used_when_it_names_the_origin(issuer: str) -> None:
    metadata = {
        "issuer": issuer,
        "authorization_endpoint": BASE + "/authorize",
        "token_endpoint": BASE + "/token",
        "registration_endpoint": BASE + "/register",
        "code_challenge_methods_supported": ["S256"],
    }
    auth = Legacy(metadata).client()
    assert run(authorize(auth, {}))
    assert auth.issuer == issuer


@pytest.mark.parametrize("issuer", ["http://localhost:7", 5, None, BASE + "/X"])  # an issuer with a path is another one
def test_a_legacy_servers_metadata_for_another_issuer_is_refused(issuer: Any) -> None:
    auth = Legacy({"issuer": issuer, "token_endpoint": BASE + "/token"}).client()
    with pytest.raises(AuthError) as info:
        run(authorize(auth, {}))
    assert info.value.step == "authorization server metadata"
    assert info.value.reason == f"{BASE}/.well-known/oauth-authorization-server: issuer {issuer!r} is not {BASE!r}"


def test_repr_shows_the_server_and_the_state_never_a_token() -> None:
    fake = FakeAS()
    auth = OAuthClient(http_client=httpx.AsyncClient(transport=fake.transport()))
    assert repr(auth) == "<OAuthClient (unbound) not authorized>"
    run(authorize(auth))
    assert repr(auth) == f"<OAuthClient {SERVER_URL} authorized>"
    assert "token-1" not in repr(auth)


class Handler:
    """A redirect handler with a listener to close (as LoopbackRedirect has)."""

    def __init__(self) -> None:
        self.closed = 0

    async def authorize(self, url: str, redirect_uri: str | None = None) -> str:  # pragma: no cover - not reached
        raise AssertionError("not used")

    async def aclose(self) -> None:
        self.closed += 1


def test_aclose_closes_the_flows_http_client_and_the_redirect_listener() -> None:
    fake = FakeAS()
    transport = fake.transport()
    given = httpx.AsyncClient(transport=transport)
    handler = Handler()
    auth = OAuthClient(http_client=given, redirect_handler=handler)  # type: ignore[arg-type]

    async def go() -> None:
        await auth.headers("POST", SERVER_URL)  # binds the flow: its fetcher exists
        await auth.aclose()
        assert handler.closed == 1
        await auth.aclose()  # again: nothing left to close but the handler
        assert handler.closed == 2

    run(go())
    plain = OAuthClient()
    run(plain.aclose())  # nothing opened, a handler without aclose: no error


# -- the client_credentials and JWT-bearer grants (OAuth 2.1 section 4.2, RFC 7523) -------------


def form_of(fake: FakeAS) -> dict[str, str]:
    (form,) = fake.token_forms
    return form


def test_client_credentials_with_a_secret_asks_for_the_resource_and_scopes() -> None:
    from wiremcp.auth import ClientCredentialsGrant

    fake = FakeAS(prm_scopes=["a", "b"], auth_methods=["client_secret_basic"])
    auth = OAuthClient(http_client=httpx.AsyncClient(transport=fake.transport()),
                       grant=ClientCredentialsGrant("svc", client_secret="pw"))
    assert run(authorize(auth))
    assert form_of(fake) == {"grant_type": "client_credentials", "resource": SERVER_URL, "scope": "a b", "_basic": "svc:pw"}
    assert auth.granted_scopes == ["a", "b"]
    assert fake.authorizations == []  # no browser, no authorization endpoint


def test_client_credentials_without_scopes_sends_none_and_the_grants_scopes_win() -> None:
    from wiremcp.auth import ClientCredentialsGrant

    fake = FakeAS(auth_methods=["client_secret_post"])
    auth = OAuthClient(http_client=httpx.AsyncClient(transport=fake.transport()),
                       grant=ClientCredentialsGrant("svc", client_secret="pw"))
    assert run(authorize(auth))
    assert form_of(fake) == {"grant_type": "client_credentials", "resource": SERVER_URL, "client_id": "svc", "client_secret": "pw"}
    fake = FakeAS(prm_scopes=["a", "b"], auth_methods=["client_secret_basic"])
    auth = OAuthClient(http_client=httpx.AsyncClient(transport=fake.transport()),
                       grant=ClientCredentialsGrant("svc", client_secret="pw", scopes=["c"]))
    assert run(authorize(auth))
    assert form_of(fake)["scope"] == "c"


@pytest.mark.parametrize("as_pem", [True, False])
def test_client_credentials_with_a_private_key_authenticates_with_a_signed_assertion(as_pem: bool) -> None:
    import jwt
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

    from wiremcp.auth import ClientCredentialsGrant

    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()).decode()
    fake = FakeAS(auth_methods=["private_key_jwt", "client_secret_basic"])
    grant = ClientCredentialsGrant("svc", private_key=pem if as_pem else key, signing_algorithm="ES256")
    assert run(authorize(OAuthClient(http_client=httpx.AsyncClient(transport=fake.transport()), grant=grant)))
    form = form_of(fake)
    assert form["grant_type"] == "client_credentials"
    assert form["client_id"] == "svc"
    assert form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    assert "_basic" not in form and "client_secret" not in form
    assert jwt.get_unverified_header(form["client_assertion"])["alg"] == "ES256"
    claims = jwt.decode(form["client_assertion"], key.public_key(), algorithms=["ES256"], audience=fake.issuer)
    assert (claims["iss"], claims["sub"], claims["aud"]) == ("svc", "svc", fake.issuer)


@pytest.mark.parametrize("kind", ["string", "function", "coroutine function"])
def test_the_jwt_bearer_grant_sends_the_assertion_its_source_gives(kind: str) -> None:
    from wiremcp.auth import JWTBearerGrant

    async def fresh_async() -> str:
        return "workload.jwt.async"

    source: Any = {"string": "workload.jwt", "function": lambda: "workload.jwt.sync", "coroutine function": fresh_async}[kind]
    expected = {"string": "workload.jwt", "function": "workload.jwt.sync", "coroutine function": "workload.jwt.async"}[kind]
    fake = FakeAS(prm_scopes=["x"], auth_methods=["client_secret_basic"])
    auth = OAuthClient(http_client=httpx.AsyncClient(transport=fake.transport()),
                       grant=JWTBearerGrant(source, client_id="wl", client_secret="s"))
    assert run(authorize(auth))
    assert form_of(fake) == {
        "grant_type": JWT_BEARER, "assertion": expected, "resource": SERVER_URL, "scope": "x", "_basic": "wl:s",
    }


def test_the_jwt_bearer_grant_without_scopes_or_client() -> None:
    from wiremcp.auth import JWTBearerGrant

    fake = FakeAS()
    assert run(authorize(OAuthClient(http_client=httpx.AsyncClient(transport=fake.transport()), grant=JWTBearerGrant("a.b.c"))))
    assert form_of(fake) == {"grant_type": JWT_BEARER, "assertion": "a.b.c", "resource": SERVER_URL}


def test_a_failed_client_credentials_grant_is_asked_again_on_the_next_challenge() -> None:
    from wiremcp.auth import ClientCredentialsGrant

    fake = FakeAS(token_error="invalid_client", auth_methods=["client_secret_basic"])
    auth = OAuthClient(http_client=httpx.AsyncClient(transport=fake.transport()),
                       grant=ClientCredentialsGrant("svc", client_secret="pw"))

    async def go() -> None:
        for _ in range(2):
            with pytest.raises(AuthError) as info:
                await authorize(auth)
            assert info.value.step == "token request"
            assert info.value.error == "invalid_client"

    run(go())
    # unlike the JWT-bearer grant's, its failure is not final: the second challenge asked again
    assert len(fake.token_forms) == 2


# -- refresh (OAuth 2.1 section 4.3) and step-up ------------------------------------------------


def test_a_refresh_authenticates_as_the_registered_client_and_keeps_the_granted_scopes() -> None:
    fake = FakeAS(refresh_token="r-1", expires_in=1, prm_scopes=["a", "b"])
    auth = OAuthClient(http_client=httpx.AsyncClient(transport=fake.transport()))

    async def go() -> dict[str, str]:
        await authorize(auth)
        return await auth.headers("POST", SERVER_URL)  # expired at once (the skew): refreshed first

    assert run(go()) == {"Authorization": "Bearer token-2"}
    refresh = fake.token_forms[1]
    assert refresh == {"grant_type": "refresh_token", "refresh_token": "r-1", "resource": SERVER_URL, "client_id": "client-1"}
    # the server did not say which scopes it granted: the ones of the refreshed token stay
    assert auth.granted_scopes == ["a", "b"]


def test_a_refused_refresh_drops_the_token_and_sends_none() -> None:
    fake = FakeAS(refresh_token="r-1", expires_in=1)
    auth = OAuthClient(http_client=httpx.AsyncClient(transport=fake.transport()))

    async def go() -> dict[str, str]:
        await authorize(auth)
        fake.token_error = "invalid_grant"
        return await auth.headers("POST", SERVER_URL)

    assert run(go()) == {}
    assert not auth.authorized
    assert [f["grant_type"] for f in fake.token_forms] == ["authorization_code", "refresh_token"]


def test_a_client_credentials_client_gets_a_new_token_instead_of_refreshing() -> None:
    from wiremcp.auth import ClientCredentialsGrant

    fake = FakeAS(refresh_token="r-1", expires_in=1, auth_methods=["client_secret_basic"])
    auth = OAuthClient(http_client=httpx.AsyncClient(transport=fake.transport()),
                       grant=ClientCredentialsGrant("svc", client_secret="pw"))

    async def go() -> dict[str, str]:
        await authorize(auth)
        return await auth.headers("POST", SERVER_URL)

    assert run(go()) == {"Authorization": "Bearer token-1"}  # not refreshed: used as it is
    assert [f["grant_type"] for f in fake.token_forms] == ["client_credentials"]


def test_step_up_gives_up_naming_the_scopes_and_the_error() -> None:
    fake = FakeAS()
    auth = OAuthClient(http_client=httpx.AsyncClient(transport=fake.transport()), max_step_up=2)

    async def go() -> None:
        await authorize(auth)
        forbidden = challenge(error="insufficient_scope", scope="write admin")
        assert await auth.on_response(403, forbidden, SERVER_URL)
        assert await auth.on_response(403, forbidden, SERVER_URL)
        with pytest.raises(AuthError) as info:
            await auth.on_response(403, forbidden, SERVER_URL)
        assert info.value.step == "step-up authorization"
        assert info.value.error == "insufficient_scope"
        assert info.value.reason == (
            "the server still answers insufficient_scope (scope write admin) after 2 re-authorization(s) "
            "for that scope set; giving up")
        # no scope in the challenge: the same scope set as requested so far, already tried twice
        bare = challenge(error="insufficient_scope")
        with pytest.raises(AuthError) as info:
            await auth.on_response(403, bare, SERVER_URL)
        assert "(scope (none)) after 2 re-authorization(s)" in info.value.reason

    run(go())
    assert [q.get("scope") for q in fake.authorizations][:3] == [None, "write admin", "write admin"]


def test_step_up_authorizes_anew_even_with_a_refresh_token() -> None:
    fake = FakeAS(refresh_token="r-1")
    auth = OAuthClient(http_client=httpx.AsyncClient(transport=fake.transport()))

    async def go() -> None:
        await authorize(auth)
        assert await auth.on_response(403, challenge(error="insufficient_scope", scope="write"), SERVER_URL)

    run(go())
    # a refresh cannot add scopes: the step-up is a new authorization
    assert [f["grant_type"] for f in fake.token_forms] == ["authorization_code", "authorization_code"]
    assert fake.authorizations[-1]["scope"] == "write"


# -- the token store (files readable by the user only) ------------------------------------------


def test_the_file_store_round_trips_and_refuses_what_is_not_its_entry(tmp_path: Any) -> None:
    import os
    import stat

    from wiremcp.auth import FileTokenStore

    store = FileTokenStore(tmp_path / "oauth")

    async def go() -> None:
        assert await store.load("iss", "res") is None
        await store.save("iss", "res", {"tokens": {"access_token": "t"}})
        assert await store.load("iss", "res") == {"tokens": {"access_token": "t"}}
        assert await store.load("iss", "other") is None
        path = store.path_for("iss", "res")
        assert path.parent == tmp_path / "oauth" and path.suffix == ".json"
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(tmp_path / "oauth").st_mode) == 0o700
        assert [p.name for p in (tmp_path / "oauth").iterdir()] == [path.name]  # no temporary file left
        assert await store.keys() == [("iss", "res")]
        # a file that is not this store's entry for the pair is passed over
        for text in (b"not json", b"[1]", b'{"issuer": "iss", "resource": "res", "entry": [1]}',
                     b'{"issuer": "other", "resource": "res", "entry": {}}'):
            path.write_bytes(text)
            assert await store.load("iss", "res") is None
        await store.delete("iss", "res")
        await store.delete("iss", "res")  # no error when there is none
        assert await store.keys() == []

    run(go())


def test_the_default_state_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    from pathlib import Path

    from wiremcp.auth import FileTokenStore

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert FileTokenStore().directory == tmp_path / "wiremcp" / "oauth"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert FileTokenStore().directory == Path(tmp_path / "home" / ".local" / "state" / "wiremcp" / "oauth")
    monkeypatch.setenv("XDG_STATE_HOME", "")
    assert FileTokenStore().directory == Path(tmp_path / "home" / ".local" / "state" / "wiremcp" / "oauth")


# -- dynamic client registration (RFC 7591, client-registration.mdx) -----------------------------


class Registering(FakeAS):
    """FakeAS whose registration endpoint answers what the test says."""

    register_answer: tuple[int, Any] | None = None

    def handle(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/register" and self.register_answer is not None:
            self.registrations.append(json.loads(request.content))
            status, body = self.register_answer
            return httpx.Response(status, json=body)
        return super().handle(request)


@pytest.mark.parametrize(
    "supported, method",
    [(["none", "client_secret_basic"], "none"), (["client_secret_post"], "client_secret_post"),
     (["client_secret_basic", "client_secret_post"], "client_secret_basic"), (["private_key_jwt"], "client_secret_basic")],
)
def test_registration_asks_for_the_code_and_refresh_grants_and_a_supported_method(supported: list[str], method: str) -> None:
    fake = FakeAS(auth_methods=supported)
    auth = OAuthClient(http_client=httpx.AsyncClient(transport=fake.transport()), client_name="My Agent")
    assert run(authorize(auth))
    (body,) = fake.registrations
    redirect = body.pop("redirect_uris")
    assert len(redirect) == 1
    assert body == {
        "client_name": "My Agent",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
        "application_type": "native",  # the redirect is on loopback
    }


def test_the_registered_secret_and_method_are_used_at_the_token_endpoint() -> None:
    fake = Registering(auth_methods=["client_secret_post", "client_secret_basic"])
    fake.register_answer = (200, {"client_id": "reg-1", "client_secret": "reg-secret", "token_endpoint_auth_method": "client_secret_post"})
    assert run(authorize(OAuthClient(http_client=httpx.AsyncClient(transport=fake.transport()))))
    form = fake.token_forms[0]
    assert (form["client_id"], form["client_secret"]) == ("reg-1", "reg-secret")
    assert "_basic" not in form
    fake = Registering(auth_methods=["client_secret_post", "client_secret_basic"])
    fake.register_answer = (201, {"client_id": "reg-2", "client_secret": "pw", "token_endpoint_auth_method": 5})
    assert run(authorize(OAuthClient(http_client=httpx.AsyncClient(transport=fake.transport()))))
    # no usable method returned: the first the server supports of basic, post
    assert fake.token_forms[0]["_basic"] == "reg-2:pw"


@pytest.mark.parametrize(
    "answer, reason, error",
    [
        ((400, {"error": "invalid_client_metadata", "error_description": "bad name"}),
         "http://localhost:7/register refused the registration: HTTP 400, error 'invalid_client_metadata': bad name",
         "invalid_client_metadata"),
        ((201, {"client_secret": "x"}), "http://localhost:7/register returned no client_id", None),
        ((201, {"client_id": ""}), "http://localhost:7/register returned no client_id", None),
        ((201, {"client_id": 7}), "http://localhost:7/register returned no client_id", None),
    ],
)
def test_a_failed_registration_names_the_step_and_the_servers_error(answer: tuple[int, Any], reason: str, error: str | None) -> None:
    fake = Registering()
    fake.register_answer = answer
    with pytest.raises(AuthError) as info:
        run(authorize(OAuthClient(http_client=httpx.AsyncClient(transport=fake.transport()))))
    assert (info.value.step, info.value.reason, info.value.error) == ("dynamic client registration", reason, error)
    assert fake.token_forms == []


# -- the client's DPoP proofs, checked by the resource server's rules (RFC 9449 section 4.3) -----


@pytest.mark.parametrize("kind", ["ec", "rsa", "ed25519"])
def test_the_clients_dpop_proof_passes_the_resource_servers_checks(kind: str) -> None:
    import time

    import jwt
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

    from wiremcp.auth._jose import dpop_proof, public_jwk
    from wiremcp.auth.server import DPoPProof, ReplayCache, jwk_thumbprint
    from wiremcp.auth.server._dpop import check_binding

    key: Any = {"ec": lambda: ec.generate_private_key(ec.SECP256R1()),
                "rsa": lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048),
                "ed25519": ed25519.Ed25519PrivateKey.generate}[kind]()
    alg = {"ec": "ES256", "rsa": "RS256", "ed25519": "EdDSA"}[kind]
    jkt = jwk_thumbprint(public_jwk(key))
    replay = ReplayCache()
    proofs = [dpop_proof(key, "post", "https://MCP.example/mcp?x=1#frag", nonce="n-1", access_token="tok") for _ in range(2)]
    for proof in proofs:
        header = jwt.get_unverified_header(proof)
        assert header["typ"] == "dpop+jwt" and header["alg"] == alg
        assert set(header["jwk"]) <= {"kty", "crv", "x", "y", "n", "e"}  # the public half only
        claims = jwt.decode(proof, options={"verify_signature": False})
        assert claims["htm"] == "POST"
        assert claims["htu"] == "https://MCP.example/mcp"
        assert claims["nonce"] == "n-1"
        assert abs(claims["iat"] - time.time()) < 5
        check_binding("tok", {"jkt": jkt}, DPoPProof(proof), method="POST", url="https://mcp.example/mcp",
                      algorithms=(alg,), replay=replay, leeway=0)
    first, second = (jwt.decode(p, options={"verify_signature": False}) for p in proofs)
    assert first["jti"] != second["jti"] and len(first["jti"]) >= 22  # 128 random bits
    bare = jwt.decode(dpop_proof(key, "GET", "https://mcp.example/mcp"), options={"verify_signature": False})
    assert "nonce" not in bare and "ath" not in bare


# -- rules found by the re-run ---------------------------------------------------------------


def test_each_scope_set_gets_its_own_step_up_allowance() -> None:
    fake = FakeAS()
    auth = OAuthClient(http_client=httpx.AsyncClient(transport=fake.transport()), max_step_up=1)

    async def go() -> None:
        await authorize(auth)
        assert await auth.on_response(403, challenge(error="insufficient_scope", scope="a"), SERVER_URL)
        # a new scope set (a and b): a new allowance
        assert await auth.on_response(403, challenge(error="insufficient_scope", scope="b"), SERVER_URL)

    run(go())
    assert [q.get("scope") for q in fake.authorizations] == [None, "a", "a b"]


def test_an_expired_client_credentials_token_is_replaced_by_a_new_grant_on_401() -> None:
    from wiremcp.auth import ClientCredentialsGrant

    fake = FakeAS(refresh_token="r-1", expires_in=1, auth_methods=["client_secret_basic"])
    auth = OAuthClient(http_client=httpx.AsyncClient(transport=fake.transport()),
                       grant=ClientCredentialsGrant("svc", client_secret="pw"))

    async def go() -> dict[str, str]:
        await authorize(auth)
        await auth.headers("POST", SERVER_URL)
        assert await auth.on_response(401, challenge(), SERVER_URL)  # the server refused the expired token
        return await auth.headers("POST", SERVER_URL)

    assert run(go()) == {"Authorization": "Bearer token-2"}
    assert [f["grant_type"] for f in fake.token_forms] == ["client_credentials", "client_credentials"]


def test_private_keys_load_from_text_or_bytes_with_a_password_and_only_of_the_supported_types() -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import dsa, ec

    from wiremcp.auth._jose import load_private_key

    key = ec.generate_private_key(ec.SECP256R1())
    plain = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    locked = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                               serialization.BestAvailableEncryption(b"pw"))
    numbers = key.private_numbers().private_value
    for pem in (plain, plain.decode()):
        assert load_private_key(pem).private_numbers().private_value == numbers
    assert load_private_key(locked, password=b"pw").private_numbers().private_value == numbers
    other = dsa.generate_private_key(key_size=1024)
    pem = other.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    with pytest.raises(ValueError) as info:
        load_private_key(pem)
    assert str(info.value) == f"unsupported key type {type(other).__name__}: use EC, RSA or Ed25519"


def test_a_legacy_servers_metadata_that_is_not_json_is_refused_naming_the_step() -> None:
    class NotJSON(Legacy):
        def handle(self, request: httpx.Request) -> httpx.Response:
            if request.url.path == "/.well-known/oauth-authorization-server":
                return httpx.Response(200, text="<html>")
            return super().handle(request)

    with pytest.raises(AuthError) as info:
        run(authorize(NotJSON(None).client(), {}))
    assert info.value.step == "authorization server metadata"
    assert info.value.reason == f"{BASE}/.well-known/oauth-authorization-server did not answer with JSON (HTTP 200)"


def test_the_token_store_never_writes_through_a_link_at_its_temporary_file(tmp_path: Any) -> None:
    import os

    from wiremcp.auth import FileTokenStore

    store = FileTokenStore(tmp_path / "oauth")
    run(store.save("iss", "res", {"n": 1}))
    victim = tmp_path / "victim"
    victim.write_text("untouched")
    path = store.path_for("iss", "res")
    os.symlink(victim, path.with_suffix(f".{os.getpid()}.tmp"))
    with pytest.raises(OSError):
        run(store.save("iss", "res", {"n": 2}))
    assert victim.read_text() == "untouched"
    assert run(store.load("iss", "res")) == {"n": 1}


def test_step_up_after_a_grant_asks_the_grant_again_with_the_union_of_scopes() -> None:
    from wiremcp.auth import ClientCredentialsGrant

    fake = FakeAS(auth_methods=["client_secret_basic"])
    auth = OAuthClient(http_client=httpx.AsyncClient(transport=fake.transport()),
                       grant=ClientCredentialsGrant("svc", client_secret="pw", scopes=["a"]))

    async def go() -> None:
        await authorize(auth)
        assert await auth.on_response(403, challenge(error="insufficient_scope", scope="b"), SERVER_URL)

    run(go())
    # the grant's own scopes win over what was requested: the second request asks for them again
    assert [f.get("scope") for f in fake.token_forms] == ["a", "a"]


def test_a_pem_key_without_an_algorithm_signs_with_its_own_and_an_algorithm_given_is_used() -> None:
    import jwt
    from cryptography.hazmat.primitives.asymmetric import ec, rsa
    from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

    from wiremcp.auth import ClientCredentialsGrant

    for key, algorithm, expected in ((ec.generate_private_key(ec.SECP256R1()), None, "ES256"),
                                     (rsa.generate_private_key(public_exponent=65537, key_size=2048), "PS256", "PS256")):
        pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()).decode()
        fake = FakeAS(auth_methods=["private_key_jwt"])
        grant = ClientCredentialsGrant("svc", private_key=pem, signing_algorithm=algorithm)
        assert run(authorize(OAuthClient(http_client=httpx.AsyncClient(transport=fake.transport()), grant=grant)))
        assertion = fake.token_forms[0]["client_assertion"]
        assert jwt.get_unverified_header(assertion)["alg"] == expected
        jwt.decode(assertion, key.public_key(), algorithms=[expected], audience=fake.issuer)


def test_grants_keep_the_scopes_they_asked_for_and_authenticate_the_client() -> None:
    from wiremcp.auth import JWTBearerGrant

    fake = FakeAS(prm_scopes=["x"], auth_methods=["client_secret_basic"])
    auth = OAuthClient(http_client=httpx.AsyncClient(transport=fake.transport()),
                       grant=JWTBearerGrant("a.b.c", client_id="wl", client_secret="s"))
    assert run(authorize(auth))
    assert auth.granted_scopes == ["x"]  # the server did not say: what was asked for
    fake = FakeAS(prm_scopes=["y"], auth_methods=["client_secret_basic"])
    idp = IdP(fake)
    auth = idp.client(grant=enterprise(client_secret="cs"))
    assert run(authorize(auth))
    assert fake.token_forms[0]["_basic"] == "mcp-client:cs"
    assert auth.granted_scopes == ["y"]
    fake = FakeAS()
    idp = IdP(fake)
    assert run(authorize(idp.client(grant=enterprise())))
    assert fake.token_forms[0]["client_id"] == "mcp-client"


def test_an_unknown_grant_is_a_type_error_naming_it() -> None:
    from types import SimpleNamespace

    fake = FakeAS()
    grant = SimpleNamespace(scopes=None)
    auth = OAuthClient(http_client=httpx.AsyncClient(transport=fake.transport()), grant=grant)  # type: ignore[arg-type]
    with pytest.raises(TypeError) as info:
        run(authorize(auth))
    assert str(info.value) == "unknown grant namespace(scopes=None)"


def test_a_grants_token_is_refreshed_without_client_authentication_and_keeps_its_scopes() -> None:
    from wiremcp.auth import JWTBearerGrant

    fake = FakeAS(prm_scopes=["x"], refresh_token="r-1", expires_in=1)
    auth = OAuthClient(http_client=httpx.AsyncClient(transport=fake.transport()), grant=JWTBearerGrant("a.b.c"))

    async def go() -> dict[str, str]:
        await authorize(auth)
        return await auth.headers("POST", SERVER_URL)

    assert run(go()) == {"Authorization": "Bearer token-2"}
    assert fake.token_forms[1] == {"grant_type": "refresh_token", "refresh_token": "r-1", "resource": SERVER_URL}
    assert auth.granted_scopes == ["x"]


def test_a_401_answered_by_a_refresh_needs_no_new_authorization() -> None:
    fake = FakeAS(refresh_token="r-1", expires_in=1)
    auth = OAuthClient(http_client=httpx.AsyncClient(transport=fake.transport()))

    async def go() -> None:
        await authorize(auth)
        await auth.headers("POST", SERVER_URL)  # refreshed (token-2), expired again at once
        assert await auth.on_response(401, challenge(), SERVER_URL)

    run(go())
    assert len(fake.authorizations) == 1
    assert [f["grant_type"] for f in fake.token_forms] == ["authorization_code", "refresh_token", "refresh_token"]
