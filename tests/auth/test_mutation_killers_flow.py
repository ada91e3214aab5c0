"""More of the OAuth client's rules that the full mutation run of auth-client found unguarded.

Against the in-process authorization server of fakeas.py (``httpx.MockTransport``),
through the public API only (``wiremcp.auth``). Each test names the rule:

* client authentication: ``client_secret_basic`` form-encodes id and secret
  (RFC 6749 section 2.3.1, nothing left "safe"), a pre-registered client's
  private key signs a ``private_key_jwt`` assertion, chosen when no method is
  named;
* registration: ``application_type`` is ``web`` for a redirect URI that is
  not on loopback; a network failure or a body that is not JSON names the step;
* a step-up follows the 403 challenge's ``resource_metadata``;
* a token without ``expires_in`` never expires; one expires ``EXPIRY_SKEW``
  (30 s) before ``expires_in`` runs out, not a moment later;
* a refused refresh on a 401 is followed by a new authorization;
* a stored DPoP-bound token is used with the key it is bound to;
* the client's DPoP proof's ``htu`` drops the query and the fragment;
* what the client learns is stored under (issuer, resource), tokens and client;
* OAuth error bodies: a non-string ``error`` or ``error_description`` is not
  shown, a description is cut at 200 characters;
* a 2025-03-26 server's metadata is held to the PKCE rule like any other;
* the token stores: one file per (issuer, resource), files that are not
  entries passed over wherever they sort, the keyring's default service,
  its index and entries read for what they hold.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from typing import Any
from urllib.parse import parse_qs

import httpx
import jwt
import pytest

from wiremcp.auth import (
    AuthError,
    FileTokenStore,
    HeadlessRedirect,
    MemoryTokenStore,
    OAuthClient,
    PreRegisteredClient,
    bearer_challenge,
    dpop_proof,
    generate_key,
    jwk_thumbprint,
    parse_www_authenticate,
)

from .fakeas import BASE, SERVER_URL, FakeAS, challenge


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def client_for(handler: Any, **options: Any) -> OAuthClient:
    return OAuthClient(http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)), **options)


async def authorize(auth: OAuthClient, headers: dict[str, str] | None = None) -> bool:
    await auth.headers("POST", SERVER_URL)
    return await auth.on_response(401, headers if headers is not None else challenge(), SERVER_URL)


def form_of(request: httpx.Request) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(request.content.decode()).items()}


# -- client authentication at the token endpoint -----------------------------------------------


def test_client_secret_basic_form_encodes_every_reserved_character_of_id_and_secret() -> None:
    fake = FakeAS(auth_methods=["client_secret_basic"])
    pre = PreRegisteredClient("app/1", client_secret="s/e:c", token_endpoint_auth_method="client_secret_basic")
    assert run(authorize(client_for(fake.handle, client=pre)))
    assert fake.token_forms[0]["_basic"] == "app%2F1:s%2Fe%3Ac"


def _ec_key_pem() -> tuple[Any, str]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return key, pem.decode()


@pytest.mark.parametrize("as_pem", [True, False])
@pytest.mark.parametrize("method", ["private_key_jwt", None])
def test_a_preregistered_clients_private_key_signs_the_client_assertion(as_pem: bool, method: str | None) -> None:
    key, pem = _ec_key_pem()
    fake = FakeAS(auth_methods=["private_key_jwt"])
    pre = PreRegisteredClient("app-1", private_key=pem if as_pem else key, token_endpoint_auth_method=method)
    assert run(authorize(client_for(fake.handle, client=pre)))
    (form,) = fake.token_forms
    assert form["client_id"] == "app-1"
    assert form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    claims = jwt.decode(form["client_assertion"], key.public_key(), algorithms=["ES256"], audience=fake.issuer)
    assert claims["iss"] == claims["sub"] == "app-1"
    assert "_basic" not in form and "client_secret" not in form


def test_a_preregistered_client_without_a_key_sends_no_assertion() -> None:
    fake = FakeAS()
    assert run(authorize(client_for(fake.handle, client=PreRegisteredClient("app-1"))))
    (form,) = fake.token_forms
    assert form["client_id"] == "app-1" and "client_assertion" not in form


# -- dynamic client registration --------------------------------------------------------------


def test_registration_names_a_redirect_uri_off_loopback_a_web_application() -> None:
    fake = FakeAS()
    redirect = HeadlessRedirect("https://app.example.com/callback")
    assert run(authorize(client_for(fake.handle, redirect_handler=redirect)))
    (body,) = fake.registrations
    assert body["application_type"] == "web"
    assert body["redirect_uris"] == ["https://app.example.com/callback"]


def test_a_registration_secret_that_is_not_a_string_is_not_sent() -> None:
    fake = FakeAS(auth_methods=["client_secret_post"])

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/register":
            fake.registrations.append(json.loads(request.content))
            return httpx.Response(201, json={"client_id": "c-1", "client_secret": 5})
        return fake.handle(request)

    assert run(authorize(client_for(handler)))
    assert fake.registrations[0]["token_endpoint_auth_method"] == "client_secret_post"
    (form,) = fake.token_forms
    assert form["client_id"] == "c-1" and "client_secret" not in form and "_basic" not in form


def _failing_at(path: str, fake: FakeAS, answer: httpx.Response | None = None) -> Any:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == path:
            if answer is None:
                raise httpx.ConnectError("connection refused", request=request)
            return answer
        return fake.handle(request)

    return handler


@pytest.mark.parametrize("answer", [None, httpx.Response(201, text="<html>created</html>")])
def test_a_registration_that_fails_or_is_not_json_names_the_step(answer: httpx.Response | None) -> None:
    fake = FakeAS()
    with pytest.raises(AuthError) as info:
        run(authorize(client_for(_failing_at("/register", fake, answer))))
    assert info.value.step == "dynamic client registration"
    assert fake.token_forms == []


# -- discovery ----------------------------------------------------------------------------------


def test_a_step_up_reads_the_resource_metadata_its_challenge_names() -> None:
    fake = FakeAS()
    elsewhere = BASE + "/elsewhere/prm"
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        if str(request.url) == elsewhere:
            return httpx.Response(200, json={"resource": SERVER_URL, "authorization_servers": [fake.issuer]})
        return fake.handle(request)

    auth = client_for(handler)

    async def go() -> None:
        await authorize(auth)
        assert elsewhere not in seen
        forbidden = challenge(error="insufficient_scope", scope="write", resource_metadata=elsewhere)
        assert await auth.on_response(403, forbidden, SERVER_URL)

    run(go())
    assert elsewhere in seen
    assert fake.authorizations[-1]["scope"] == "write"


def test_a_legacy_servers_metadata_without_s256_is_refused() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.startswith("/.well-known/oauth-protected-resource"):
            return httpx.Response(404)
        if request.url.path == "/.well-known/oauth-authorization-server":
            return httpx.Response(200, json={"issuer": BASE, "authorization_endpoint": BASE + "/authorize",
                                             "token_endpoint": BASE + "/token", "registration_endpoint": BASE + "/register"})
        return httpx.Response(404)

    with pytest.raises(AuthError) as info:
        run(authorize(client_for(handler)))
    assert info.value.step == "authorization server metadata"
    assert "S256" in info.value.reason


def test_a_legacy_servers_metadata_request_that_fails_names_the_step() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/.well-known/oauth-authorization-server":
            raise httpx.ConnectError("connection refused", request=request)
        return httpx.Response(404)

    with pytest.raises(AuthError) as info:
        run(authorize(client_for(handler)))
    assert info.value.step == "authorization server metadata"


# -- expiry and refresh ----------------------------------------------------------------------


def test_a_token_without_expires_in_is_used_as_long_as_the_server_takes_it() -> None:
    fake = FakeAS(expires_in=0, refresh_token="r-1")
    auth = client_for(fake.handle)

    async def go() -> dict[str, str]:
        await authorize(auth)
        return await auth.headers("POST", SERVER_URL)

    assert run(go()) == {"Authorization": "Bearer token-1"}
    assert len(fake.token_forms) == 1


@pytest.mark.parametrize("expires_in, refreshed", [(30, True), (31, False)])
def test_a_token_counts_as_expired_30_seconds_before_it_runs_out(
    monkeypatch: pytest.MonkeyPatch, expires_in: int, refreshed: bool
) -> None:
    import time

    monkeypatch.setattr(time, "time", lambda: 1_000_000.0)
    fake = FakeAS(expires_in=expires_in, refresh_token="r-1")
    auth = client_for(fake.handle)

    async def go() -> dict[str, str]:
        await authorize(auth)
        return await auth.headers("POST", SERVER_URL)

    assert run(go()) == {"Authorization": "Bearer " + ("token-2" if refreshed else "token-1")}
    assert [f["grant_type"] for f in fake.token_forms][1:] == (["refresh_token"] if refreshed else [])


def test_a_refused_refresh_on_401_is_followed_by_a_new_authorization() -> None:
    fake = FakeAS(refresh_token="r-1")

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/token" and form_of(request).get("grant_type") == "refresh_token":
            fake.token_forms.append(form_of(request))
            return httpx.Response(400, json={"error": "invalid_grant"})
        return fake.handle(request)

    auth = client_for(handler)

    async def go() -> dict[str, str]:
        await authorize(auth)
        await auth.headers("POST", SERVER_URL)
        await auth.headers("POST", SERVER_URL)
        assert await auth.on_response(401, challenge(error="invalid_token"), SERVER_URL)
        return await auth.headers("POST", SERVER_URL)

    assert run(go()) == {"Authorization": "Bearer token-2"}
    assert [f["grant_type"] for f in fake.token_forms] == ["authorization_code", "refresh_token", "authorization_code"]
    assert len(fake.authorizations) == 2


# -- what is stored, and DPoP keys across processes ------------------------------------------------


def test_the_token_and_the_client_are_stored_under_the_issuer_and_the_resource() -> None:
    fake = FakeAS()
    store = MemoryTokenStore()
    assert run(authorize(client_for(fake.handle, store=store)))
    entry = run(store.load(fake.issuer, SERVER_URL))
    assert entry is not None
    assert entry["tokens"]["access_token"] == "token-1"
    assert entry["client"]["client_id"] == "client-1" and entry["client"]["issuer"] == fake.issuer


def _proof_thumbprint(headers: dict[str, str]) -> str:
    return jwk_thumbprint(jwt.get_unverified_header(headers["DPoP"])["jwk"])


@pytest.mark.parametrize("dpop", ["auto", True])
def test_a_stored_dpop_bound_token_is_used_with_the_key_it_is_bound_to(dpop: Any) -> None:
    fake = FakeAS(dpop_algs=["ES256"])
    store = MemoryTokenStore()
    first = client_for(fake.handle, store=store, dpop=dpop)

    async def go() -> tuple[dict[str, str], dict[str, str]]:
        await authorize(first)
        before = await first.headers("POST", SERVER_URL)
        second = client_for(fake.handle, store=store, dpop=dpop)  # a later process
        await authorize(second)
        return before, await second.headers("POST", SERVER_URL)

    before, after = run(go())
    assert len(fake.token_forms) == 1  # the stored token was used, not a new one
    assert after["Authorization"] == "DPoP token-1"
    assert _proof_thumbprint(after) == _proof_thumbprint(before)


@pytest.mark.parametrize(
    "url",
    ["https://mcp.example/mcp?a=1?b=2", "https://mcp.example/mcp#part", "https://mcp.example/mcp#a#b",
     "https://mcp.example/mcp?x=1#y?z"],
)
def test_a_dpop_proofs_htu_has_no_query_and_no_fragment(url: str) -> None:
    proof = dpop_proof(generate_key(), "post", url)
    assert jwt.decode(proof, options={"verify_signature": False})["htu"] == "https://mcp.example/mcp"


# -- OAuth error bodies ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body, reason",
    [
        ({"error": 5, "error_description": 7}, "HTTP 400"),
        ({"error_description": ""}, "HTTP 400"),
        ({"error": "invalid_client", "error_description": "d" * 300}, "HTTP 400, error 'invalid_client': " + "d" * 200),
    ],
)
def test_an_oauth_error_body_shows_only_what_is_well_formed(body: dict[str, Any], reason: str) -> None:
    fake = FakeAS()
    with pytest.raises(AuthError) as info:
        run(authorize(client_for(_failing_at("/token", fake, httpx.Response(400, json=body)))))
    assert info.value.reason == f"{fake.issuer}/token refused (authorization_code): {reason}"
    assert info.value.error == (body["error"] if isinstance(body.get("error"), str) else None)


# -- the enterprise IdP's token exchange ----------------------------------------------------------


IDP = "http://localhost:8"


@pytest.mark.parametrize("answer", ["refused", "html"])
def test_a_token_exchange_that_fails_or_is_not_json_names_the_step(answer: str) -> None:
    from wiremcp.auth import EnterpriseGrant

    fake = FakeAS()
    methods: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if str(request.url).startswith(IDP):
            methods.append(request.method)
            if answer == "refused":
                raise httpx.ConnectError("connection refused", request=request)
            return httpx.Response(200, text="<html></html>")
        return fake.handle(request)

    grant = EnterpriseGrant(idp_token_endpoint=IDP + "/token", id_token="the-id-token", client_id="mcp-client")
    with pytest.raises(AuthError) as info:
        run(authorize(client_for(handler, grant=grant)))
    assert info.value.step == "token exchange at the identity provider"
    assert set(methods) == {"POST"}
    assert fake.token_forms == []


# -- WWW-Authenticate quoted strings ------------------------------------------------------------


def test_a_backslash_escapes_the_next_character_even_the_last_one() -> None:
    (c,) = parse_www_authenticate('Bearer scope="a\\"')
    assert c.params["scope"] == 'a"'
    (c,) = parse_www_authenticate('Bearer realm="x\\\\"')
    assert c.params["realm"] == "x\\"


def test_a_trailing_backslash_is_taken_as_it_is_never_raised() -> None:
    (c,) = parse_www_authenticate('Bearer realm="abc\\')
    assert c.params["realm"] == "abc\\"


def test_the_parameter_after_a_quoted_string_is_read_from_the_next_character() -> None:
    found = bearer_challenge('Bearer error="insufficient_scope",scope="a b"')
    assert found is not None and found.error == "insufficient_scope" and found.scope == ["a", "b"]
    # even with the comma missing, nothing after the closing quote is lost
    (c,) = parse_www_authenticate('Bearer realm="r"a=1')
    assert c.params == {"realm": "r", "a": "1"}


# -- the token stores -----------------------------------------------------------------------------


def test_the_file_store_keeps_one_file_per_issuer_and_resource(tmp_path: Any) -> None:
    store = FileTokenStore(tmp_path)

    async def go() -> None:
        await store.save("https://as-1", "https://rs/mcp", {"tokens": {"access_token": "one"}})
        await store.save("https://as-2", "https://rs/mcp", {"tokens": {"access_token": "two"}})
        assert await store.load("https://as-1", "https://rs/mcp") == {"tokens": {"access_token": "one"}}
        assert await store.load("https://as-2", "https://rs/mcp") == {"tokens": {"access_token": "two"}}

    run(go())
    assert store.path_for("https://as-1", "https://rs/mcp") != store.path_for("https://as-2", "https://rs/mcp")


def test_the_file_stores_keys_pass_over_foreign_files_wherever_they_sort(tmp_path: Any) -> None:
    store = FileTokenStore(tmp_path)
    run(store.save("https://as", "https://rs/mcp", {"tokens": {}}))
    (tmp_path / "!broken.json").write_text("[1, 2")  # sorts before every entry's hex name
    (tmp_path / "!list.json").write_text("[1, 2]")
    assert run(store.keys()) == [("https://as", "https://rs/mcp")]


def _keyring_backend(tmp_path: Any) -> Any:
    pytest.importorskip("keyring", reason="keyring is optional (pip install keyring); the test extra installs it")
    file_backends = pytest.importorskip("keyrings.alt.file", reason="keyrings.alt gives keyring a headless backend")
    backend = file_backends.PlaintextKeyring()
    backend.file_path = str(tmp_path / "keyring.cfg")
    return backend


def test_the_keyring_store_uses_the_wiremcp_oauth_service_by_default(tmp_path: Any) -> None:
    from wiremcp.auth import KeyringTokenStore

    backend = _keyring_backend(tmp_path)
    run(KeyringTokenStore(backend=backend).save("https://as", "https://rs/mcp", {"tokens": {}}))
    assert run(KeyringTokenStore("wiremcp-oauth", backend=backend).keys()) == [("https://as", "https://rs/mcp")]


def test_the_keyring_store_uses_keyrings_own_backend_when_given_none(tmp_path: Any) -> None:
    backend = _keyring_backend(tmp_path)
    import keyring

    from wiremcp.auth import KeyringTokenStore

    previous = keyring.get_keyring()
    keyring.set_keyring(backend)
    try:
        store = KeyringTokenStore()
        run(store.save("https://as", "https://rs/mcp", {"tokens": {}}))
    finally:
        keyring.set_keyring(previous)
    assert store.backend is backend
    assert run(KeyringTokenStore(backend=backend).load("https://as", "https://rs/mcp")) == {"tokens": {}}


def test_the_keyring_store_without_the_keyring_package_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from wiremcp.auth import KeyringTokenStore

    monkeypatch.setitem(sys.modules, "keyring", None)  # import keyring raises ImportError
    with pytest.raises(RuntimeError) as info:
        KeyringTokenStore()
    assert str(info.value) == "KeyringTokenStore needs the keyring package: pip install keyring"


def test_the_keyring_store_on_a_machine_without_a_keyring_says_what_to_use_instead() -> None:
    pytest.importorskip("keyring", reason="keyring is optional (pip install keyring); the test extra installs it")
    from keyring.backends.fail import Keyring as NoKeyring

    from wiremcp.auth import KeyringTokenStore

    with pytest.raises(RuntimeError) as info:
        KeyringTokenStore(backend=NoKeyring())
    assert str(info.value) == (
        "keyring found no usable backend on this machine (no Secret Service, Keychain or Credential "
        "Locker); use FileTokenStore instead"
    )


class DictKeyring:
    """A keyring backend holding its secrets in a dict, so that a test can see and change them."""

    def __init__(self) -> None:
        self.secrets: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, name: str) -> str | None:
        return self.secrets.get((service, name))

    def set_password(self, service: str, name: str, value: str) -> None:
        self.secrets[(service, name)] = value

    def delete_password(self, service: str, name: str) -> None:
        del self.secrets[(service, name)]


def test_the_keyring_store_reads_its_index_and_entries_for_what_they_hold() -> None:
    pytest.importorskip("keyring", reason="keyring is optional (pip install keyring); the test extra installs it")
    from wiremcp.auth import KeyringTokenStore

    backend = DictKeyring()
    store = KeyringTokenStore(backend=backend)
    run(store.save("https://as", "https://rs/mcp", {"tokens": {}}))
    run(store.save("https://as", "https://rs/other", {"tokens": {}}))
    index = json.loads(backend.secrets[(store.service, store.INDEX)])
    backend.secrets[(store.service, store.INDEX)] = json.dumps([*index, ["x"], "ab", [1, 2], ["a", "b", "c"]])
    assert run(store.keys()) == [("https://as", "https://rs/mcp"), ("https://as", "https://rs/other")]

    # the secret whose value names (issuer, resource): its name is opaque
    def secret_of(resource: str) -> tuple[str, str]:
        (name,) = [k for k, v in backend.secrets.items() if k[1] != store.INDEX and json.loads(v)["resource"] == resource]
        return name

    mcp, other = secret_of("https://rs/mcp"), secret_of("https://rs/other")
    # an entry's secret that names another resource, or holds no object, is not an entry
    backend.secrets[mcp] = json.dumps({"issuer": "https://as", "resource": "https://rs/elsewhere", "entry": {"tokens": {}}})
    assert run(store.load("https://as", "https://rs/mcp")) is None
    backend.secrets[other] = json.dumps({"issuer": "https://as", "resource": "https://rs/other", "entry": [1]})
    assert run(store.load("https://as", "https://rs/other")) is None


def test_basic_authentication_header_is_base64_of_the_encoded_pair() -> None:
    fake = FakeAS(auth_methods=["client_secret_basic"])
    pre = PreRegisteredClient("a b", client_secret="p w", token_endpoint_auth_method="client_secret_basic")
    assert run(authorize(client_for(fake.handle, client=pre)))
    header = [r for r in fake.requests if r.url.path == "/token"][0].headers["authorization"]
    assert header == "Basic " + base64.b64encode(b"a%20b:p%20w").decode()


# -- the client's identity across authorizations ----------------------------------------------------


def test_a_registered_client_is_registered_once_and_reused_for_a_step_up() -> None:
    fake = FakeAS()
    auth = client_for(fake.handle)

    async def go() -> None:
        await authorize(auth)
        assert await auth.on_response(403, challenge(error="insufficient_scope", scope="write"), SERVER_URL)

    run(go())
    assert len(fake.registrations) == 1
    assert [f["client_id"] for f in fake.token_forms] == ["client-1", "client-1"]


def test_a_server_offering_metadata_documents_to_a_client_without_one_registers_it() -> None:
    fake = FakeAS(cimd=True)
    assert run(authorize(client_for(fake.handle)))
    assert len(fake.registrations) == 1
    assert fake.token_forms[0]["client_id"] == "client-1"


def test_a_preregistered_clients_own_method_wins_over_the_servers_preference() -> None:
    fake = FakeAS(auth_methods=["client_secret_basic", "client_secret_post"])
    pre = PreRegisteredClient("app-1", client_secret="pw", token_endpoint_auth_method="client_secret_post")
    assert run(authorize(client_for(fake.handle, client=pre)))
    (form,) = fake.token_forms
    assert form["client_id"] == "app-1" and form["client_secret"] == "pw" and "_basic" not in form


def test_a_refresh_authenticates_as_the_preregistered_client() -> None:
    fake = FakeAS(refresh_token="r-1", expires_in=1, auth_methods=["client_secret_basic"])
    pre = PreRegisteredClient("app-1", client_secret="pw", token_endpoint_auth_method="client_secret_basic")
    auth = client_for(fake.handle, client=pre)

    async def go() -> dict[str, str]:
        await authorize(auth)
        return await auth.headers("POST", SERVER_URL)  # expired at once (the skew): refreshed first

    assert run(go()) == {"Authorization": "Bearer token-2"}
    assert [(f["grant_type"], f.get("_basic")) for f in fake.token_forms] == [
        ("authorization_code", "app-1:pw"), ("refresh_token", "app-1:pw")]


def test_the_jwt_bearer_grant_asks_for_every_scope_space_separated() -> None:
    from wiremcp.auth import JWTBearerGrant

    fake = FakeAS(prm_scopes=["a", "b"])
    assert run(authorize(client_for(fake.handle, grant=JWTBearerGrant("the-assertion"))))
    assert fake.token_forms[0]["scope"] == "a b"


# -- the headless redirect handler ---------------------------------------------------------------------


CALLBACK = "http://127.0.0.1/callback"


def _authorize_via(hops: Any, redirect_uri: str = CALLBACK) -> tuple[FakeAS, OAuthClient]:
    """A FakeAS whose /authorize answer is replaced by ``hops(request, fake)`` (a response, or None: its own)."""
    fake = FakeAS()

    def handler(request: httpx.Request) -> httpx.Response:
        answer = hops(request, fake)
        return answer if answer is not None else fake.handle(request)

    return fake, client_for(handler, redirect_handler=HeadlessRedirect(redirect_uri, max_hops=3))


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_the_headless_redirect_follows_every_redirect_status_and_relative_locations(status: int) -> None:
    def hops(request: httpx.Request, fake: FakeAS) -> httpx.Response | None:
        if request.url.path == "/authorize":
            return httpx.Response(status, headers={"Location": "/login?" + request.url.query.decode()})
        if request.url.path == "/login":
            return fake.handle(httpx.Request("GET", fake.issuer + "/authorize?" + request.url.query.decode()))
        return None

    fake, auth = _authorize_via(hops)
    assert run(authorize(auth))
    assert fake.token_forms[0]["code"] == "the-code"


def test_the_headless_redirect_keeps_the_redirect_uris_own_query() -> None:
    def hops(request: httpx.Request, fake: FakeAS) -> httpx.Response | None:
        if request.url.path == "/authorize":
            answer = fake.handle(request)  # Location: redirect_uri + "?" + its parameters
            target, _, params = answer.headers["location"].rpartition("?")
            return httpx.Response(302, headers={"Location": target + "&" + params})
        return None

    fake, auth = _authorize_via(hops, CALLBACK + "?app=1")
    assert run(authorize(auth))
    assert fake.authorizations[0]["redirect_uri"] == CALLBACK + "?app=1"
    assert fake.token_forms[0]["redirect_uri"] == CALLBACK + "?app=1"


@pytest.mark.parametrize("headers", [{}, {"Location": "/elsewhere"}])
def test_a_page_instead_of_a_redirect_is_refused_naming_the_url_without_its_query(headers: dict[str, str]) -> None:
    def hops(request: httpx.Request, fake: FakeAS) -> httpx.Response | None:
        return httpx.Response(200, headers=headers, text="<form>log in</form>") if request.url.path == "/authorize" else None

    fake, auth = _authorize_via(hops)
    with pytest.raises(AuthError) as info:
        run(authorize(auth))
    assert info.value.step == "authorization request"
    assert info.value.reason == f"{fake.issuer}/authorize answered HTTP 200 without a redirect"
    assert fake.token_forms == []


def test_the_headless_redirect_gives_up_after_max_hops() -> None:
    def hops(request: httpx.Request, fake: FakeAS) -> httpx.Response | None:
        if request.url.path in ("/authorize", "/again"):
            return httpx.Response(302, headers={"Location": "/again"})
        return None

    fake, auth = _authorize_via(hops)
    with pytest.raises(AuthError) as info:
        run(authorize(auth))
    assert info.value.step == "authorization request"
    assert info.value.reason == "no redirect to the redirect URI within 3 hops (does the server need a person?)"


def test_an_authorization_endpoint_that_cannot_be_reached_names_the_step() -> None:
    def hops(request: httpx.Request, fake: FakeAS) -> httpx.Response | None:
        if request.url.path == "/authorize":
            raise httpx.ConnectError("connection refused", request=request)
        return None

    fake, auth = _authorize_via(hops)
    with pytest.raises(AuthError) as info:
        run(authorize(auth))
    assert info.value.step == "authorization request"


def test_a_callback_with_its_answer_in_the_fragment_ends_the_redirects() -> None:
    def hops(request: httpx.Request, fake: FakeAS) -> httpx.Response | None:
        if request.url.path == "/authorize":
            return httpx.Response(302, headers={"Location": CALLBACK + "#code=the-code"})
        return None

    fake, auth = _authorize_via(hops)
    with pytest.raises(AuthError) as info:
        run(authorize(auth))
    # the callback was reached (no further request): its query has no state, so the answer is refused
    assert info.value.step == "authorization response"
    assert not any(r.url.host == "127.0.0.1" for r in fake.requests)


# -- the SSRF guard's own resolver (no resolver injected) -------------------------------------------


def test_the_system_resolver_reads_numeric_hosts_the_way_connections_do() -> None:
    """``127.1`` and ``2130706433`` are 127.0.0.1 to getaddrinfo (and so to a connection), though not IP literals."""
    from wiremcp.auth import URLGuard

    guard = URLGuard("https://mcp.example.com/mcp")  # the system resolver: numeric forms need no DNS
    run(guard.check("https://1572395042/.well-known/x", "test step"))  # 93.184.216.34: public
    for host in ("127.1", "2130706433"):
        with pytest.raises(AuthError) as info:
            run(guard.check(f"https://{host}/token", "test step"))
        assert info.value.reason == f"'https://{host}/token' resolves to loopback (127.0.0.1) but the MCP server is not local: refused"


# -- the authorization request -------------------------------------------------------------------------


def _with_metadata(fake: FakeAS, **changes: Any) -> Any:
    """fake.handle, with its authorization server metadata changed (a member set to None is left out)."""

    def handler(request: httpx.Request) -> httpx.Response:
        answer = fake.handle(request)
        if request.url.path == "/.well-known/oauth-authorization-server" and answer.status_code == 200:
            doc = {**answer.json(), **changes}
            return httpx.Response(200, json={k: v for k, v in doc.items() if v is not None})
        return answer

    return handler


@pytest.mark.parametrize("missing", ["authorization_endpoint", "token_endpoint"])
def test_metadata_without_an_authorization_or_token_endpoint_is_refused_before_anything_is_sent(missing: str) -> None:
    fake = FakeAS()
    with pytest.raises(AuthError) as info:
        run(authorize(client_for(_with_metadata(fake, **{missing: None}))))
    assert info.value.step == "authorization server metadata"
    assert info.value.reason == f"{fake.issuer!r} lists no authorization or token endpoint"
    assert fake.authorizations == [] and fake.registrations == []


def test_metadata_without_s256_is_refused_naming_the_step() -> None:
    fake = FakeAS(pkce_methods=["plain"])
    with pytest.raises(AuthError) as info:
        run(authorize(client_for(fake.handle)))
    assert info.value.step == "authorization server metadata"
    assert info.value.reason == (
        f"{fake.issuer!r} does not list S256 in code_challenge_methods_supported: PKCE cannot be verified, refused")


def test_an_authorization_endpoint_with_a_fragment_is_refused_as_an_authorization_request() -> None:
    fake = FakeAS()
    with pytest.raises(AuthError) as info:
        run(authorize(client_for(_with_metadata(fake, authorization_endpoint=fake.issuer + "/authorize#x"))))
    assert info.value.step == "authorization request"
    assert fake.authorizations == []


def test_an_authorization_endpoint_with_a_query_keeps_it_and_asks_for_a_code() -> None:
    fake = FakeAS()
    assert run(authorize(client_for(_with_metadata(fake, authorization_endpoint=fake.issuer + "/authorize?tenant=t1"))))
    (query,) = fake.authorizations
    assert query["tenant"] == "t1"
    assert query["response_type"] == "code" and query["client_id"] == "client-1"


def test_a_state_mismatch_is_refused_as_the_authorization_response() -> None:
    fake = FakeAS(state_mode="wrong")
    with pytest.raises(AuthError) as info:
        run(authorize(client_for(fake.handle)))
    assert info.value.step == "authorization response"
    assert info.value.reason == "the state parameter does not match the request: refused"


@pytest.mark.parametrize("pre", [None, PreRegisteredClient("app-1", issuer="https://other.example")])
def test_a_server_without_any_way_to_identify_the_client_is_refused_saying_so(pre: PreRegisteredClient | None) -> None:
    fake = FakeAS(registration=False)
    with pytest.raises(AuthError) as info:
        run(authorize(client_for(fake.handle, client=pre)))
    mismatch = " (the pre-registered client belongs to 'https://other.example')" if pre is not None else ""
    assert info.value.step == "client registration"
    assert info.value.reason == (
        f"no client credentials for {fake.issuer!r}{mismatch}, and it supports neither "
        "client ID metadata documents nor dynamic client registration")


def test_offline_access_is_asked_for_once() -> None:
    fake = FakeAS(prm_scopes=["a", "offline_access"], as_scopes=["a", "offline_access"])
    assert run(authorize(client_for(fake.handle)))
    assert fake.authorizations[0]["scope"] == "a offline_access"


def _answering(params: dict[str, str]) -> Any:
    """Hops for _authorize_via: /authorize redirects to the callback with ``params``, the request's state and the issuer."""

    def hops(request: httpx.Request, fake: FakeAS) -> httpx.Response | None:
        if request.url.path != "/authorize":
            return None
        query = {k: v[0] for k, v in parse_qs(request.url.query.decode()).items()}
        fake.authorizations.append(query)
        answer = {**params, "state": query["state"], "iss": fake.issuer}
        from urllib.parse import urlencode

        return httpx.Response(302, headers={"Location": query["redirect_uri"] + "?" + urlencode(answer)})

    return hops


@pytest.mark.parametrize(
    "params, reason",
    [
        ({"error": "access_denied", "error_description": "the user said no"},
         "the authorization server answered 'access_denied': the user said no"),
        ({"error": "access_denied"}, "the authorization server answered 'access_denied'"),
        ({"error": "server_error", "error_description": "x" * 300}, "the authorization server answered 'server_error': " + "x" * 200),
    ],
)
def test_an_error_in_the_authorization_response_is_refused_with_the_servers_words(params: dict[str, str], reason: str) -> None:
    fake, auth = _authorize_via(_answering(params))
    with pytest.raises(AuthError) as info:
        run(authorize(auth))
    assert (info.value.step, info.value.reason, info.value.error) == ("authorization response", reason, params["error"])
    assert fake.token_forms == []


@pytest.mark.parametrize("supported, mode", [(True, "omit"), (None, "wrong")])
def test_an_iss_refusal_names_the_authorization_response(supported: bool | None, mode: str) -> None:
    fake = FakeAS(iss_supported=supported, iss_mode=mode)
    with pytest.raises(AuthError) as info:
        run(authorize(client_for(fake.handle)))
    assert info.value.step == "authorization response"


# -- closing, and JOSE details that reach the wire ---------------------------------------------------


def test_aclose_leaves_an_http_client_the_caller_gave_open() -> None:
    fake = FakeAS()
    given = httpx.AsyncClient(transport=fake.transport())
    auth = OAuthClient(http_client=given)

    async def go() -> None:
        await authorize(auth)
        await auth.aclose()
        assert not given.is_closed
        await given.aclose()

    run(go())


def test_an_rsa_keys_jwk_has_no_leading_zero_octet_and_assertions_never_share_a_jti() -> None:
    from cryptography.hazmat.primitives.asymmetric import rsa

    from wiremcp.auth import public_jwk, sign_jwt

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    n = base64.urlsafe_b64decode(public_jwk(key)["n"] + "==")
    assert len(n) == 256 and n[0] != 0  # RFC 7518 section 6.3.1.1: the minimal big-endian form
    first, second = (jwt.decode(sign_jwt(key, {"sub": "s"}), options={"verify_signature": False}) for _ in range(2))
    assert first["jti"] != second["jti"]
    token = sign_jwt(key, {"sub": "s"}, headers={"kid": "k-1"})
    assert jwt.get_unverified_header(token)["kid"] == "k-1"


def test_a_key_on_an_unsupported_curve_is_refused_naming_the_curve() -> None:
    from cryptography.hazmat.primitives.asymmetric import ec

    from wiremcp.auth import sign_jwt

    with pytest.raises(ValueError) as info:
        sign_jwt(ec.generate_private_key(ec.SECP256K1()), {"sub": "s"})
    assert str(info.value) == "unsupported EC curve secp256k1"


# -- the loopback redirect listener, spoken to over a raw socket ---------------------------------------


@pytest.mark.parametrize("ending", ["lf", "half-close"])
def test_the_loopback_listener_answers_a_request_with_bare_lf_lines_or_no_blank_line(ending: str) -> None:
    """A request head ends at a blank line, a bare LF one included, or at the end of what the client sends."""
    import socket

    from wiremcp.auth import LoopbackRedirect

    async def go() -> tuple[bytes, Any]:
        redirect = LoopbackRedirect(open_browser=lambda url: None)
        uri = await redirect.redirect_uri()
        waiting = asyncio.ensure_future(redirect.authorize("https://as.example/authorize?state=S1", None))  # type: ignore[arg-type]
        await asyncio.sleep(0)
        reader, writer = await asyncio.open_connection("127.0.0.1", redirect.port)
        path = uri.split(str(redirect.port), 1)[1]
        if ending == "lf":
            writer.write(f"GET {path}?code=c1&state=S1 HTTP/1.1\nHost: 127.0.0.1\n\n".encode())
        else:
            writer.write(f"GET {path}?code=c1&state=S1 HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode())
            writer.transport.get_extra_info("socket").shutdown(socket.SHUT_WR)
        answer = await reader.read()
        writer.close()
        params = await waiting
        await redirect.aclose()
        return answer, params

    answer, params = run(go())
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
    assert params == {"code": "c1", "state": "S1"}


async def _raw(port: int, request: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    answer = await reader.read()
    writer.close()
    return answer


@pytest.mark.parametrize(
    "request_line, status, words",
    [
        (b"GET /callback?code=c1&state=S1 HTTP/1.1", b"200 OK", b"Authorization received. You can close this window."),
        (b"GET /callback?code=c1&state=S1", b"200 OK", b"Authorization received."),  # no version (HTTP/0.9 form)
        (b"GET /favicon.ico HTTP/1.1", b"404 Not Found", b"Nothing to do here. You can close this window."),
        (b"GET", b"404 Not Found", b"Nothing to do here."),  # no target at all
    ],
)
def test_the_loopback_listener_answers_the_callback_and_nothing_else(request_line: bytes, status: bytes, words: bytes) -> None:
    from wiremcp.auth import LoopbackRedirect

    async def go() -> tuple[bytes, bool]:
        redirect = LoopbackRedirect(open_browser=lambda url: None)
        await redirect.redirect_uri()
        waiting = asyncio.ensure_future(redirect.authorize("https://as.example/authorize?state=S1", None))  # type: ignore[arg-type]
        await asyncio.sleep(0)
        answer = await _raw(redirect.port, request_line + b"\r\nHost: 127.0.0.1\r\n\r\n")
        done = waiting.done()
        waiting.cancel()
        await redirect.aclose()
        return answer, done

    answer, done = run(go())
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0] == b"HTTP/1.1 " + status
    assert b"Content-Length: %d" % len(body) in head.split(b"\r\n")
    assert words in body
    assert done == status.startswith(b"200")


def test_the_loopback_listener_listens_on_the_port_asked_and_stops_on_aclose() -> None:
    import socket

    from wiremcp.auth import LoopbackRedirect

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    async def go() -> None:
        redirect = LoopbackRedirect(port=port, open_browser=lambda url: None)
        assert await redirect.redirect_uri() == f"http://127.0.0.1:{port}/callback"
        assert (await _raw(port, b"GET /x HTTP/1.1\r\n\r\n")).startswith(b"HTTP/1.1 404")
        await redirect.aclose()
        with pytest.raises(OSError):
            await asyncio.open_connection("127.0.0.1", port)
        # used again after aclose: a new listener
        assert await redirect.redirect_uri() == f"http://127.0.0.1:{port}/callback"
        assert (await _raw(port, b"GET /x HTTP/1.1\r\n\r\n")).startswith(b"HTTP/1.1 404")
        await redirect.aclose()

    run(go())


# -- the SSRF guard's refusals: the step and the words ------------------------------------------------


def _resolving_to(address: str) -> Any:
    async def resolve(host: str, port: int) -> list[str]:
        return [address]

    return resolve


@pytest.mark.parametrize(
    "address, reason",
    [
        ("169.254.169.254", "resolves to the cloud metadata address 169.254.169.254: refused"),
        ("127.0.0.2", "resolves to loopback (127.0.0.2) but the MCP server is not local: refused"),
        ("192.0.0.8", "resolves to a special-purpose address (192.0.0.8): refused"),
        ("10.1.2.3", "resolves to a private, link-local or reserved address (10.1.2.3): refused "
                     "(OAuthClient(allow_private_networks=True) allows private networks)"),
        ("64:ff9b::a01:203", "resolves to a private, link-local or reserved address (64:ff9b::a01:203, which carries "
                             "10.1.2.3): refused (OAuthClient(allow_private_networks=True) allows private networks)"),
        ("::2", "resolves to a special-purpose address (::2, which carries 0.0.0.2): refused"),
        ("not-an-address", "resolved to something that is not an IP address"),
    ],
)
def test_each_refusal_of_the_ssrf_guard_names_the_step_the_url_and_the_address(address: str, reason: str) -> None:
    from wiremcp.auth import URLGuard

    guard = URLGuard("https://mcp.example.com/mcp", resolver=_resolving_to(address))
    with pytest.raises(AuthError) as info:
        run(guard.check("https://as.example.com/token", "token request"))
    assert info.value.step == "token request"
    assert info.value.reason == f"'https://as.example.com/token' {reason}"


# -- the token response, and client authentication choices ------------------------------------------


@pytest.mark.parametrize(
    "body, reason",
    [
        ({"token_type": "Bearer"}, "returned no access_token"),
        ({"access_token": "", "token_type": "Bearer"}, "returned no access_token"),
        ({"access_token": 5, "token_type": "Bearer"}, "returned no access_token"),
        ({"access_token": "t"}, "returned token_type None; only Bearer and DPoP are supported"),
        ({"access_token": "t", "token_type": "mac"}, "returned token_type 'mac'; only Bearer and DPoP are supported"),
        ({"access_token": "t", "token_type": "DPoP"}, "returned a DPoP-bound token to a request without a DPoP proof"),
    ],
)
def test_a_token_response_without_a_usable_token_is_refused(body: dict[str, Any], reason: str) -> None:
    fake = FakeAS()
    auth = client_for(_failing_at("/token", fake, httpx.Response(200, json=body)), dpop=False)
    with pytest.raises(AuthError) as info:
        run(authorize(auth))
    assert (info.value.step, info.value.reason) == ("token request", f"{fake.issuer}/token {reason}")
    assert not auth.authorized


def test_a_token_response_that_is_not_json_names_the_token_request() -> None:
    fake = FakeAS()
    with pytest.raises(AuthError) as info:
        run(authorize(client_for(_failing_at("/token", fake, httpx.Response(200, text="<html>")))))
    assert info.value.step == "token request"


@pytest.mark.parametrize(
    "supported, sent",
    [
        (["private_key_jwt"], "basic"),  # nothing the client can do: client_secret_basic, the default
        (["none"], "id only"),
        (["client_secret_post", "none"], "post"),
    ],
)
def test_a_secret_without_a_method_authenticates_as_the_server_supports(supported: list[str], sent: str) -> None:
    fake = FakeAS(auth_methods=supported)
    assert run(authorize(client_for(fake.handle, client=PreRegisteredClient("app-1", client_secret="pw"))))
    (form,) = fake.token_forms
    got = "basic" if form.get("_basic") == "app-1:pw" else "post" if form.get("client_secret") == "pw" else "id only"
    assert got == sent
    if sent != "basic":
        assert form["client_id"] == "app-1"


def test_a_client_of_method_none_never_sends_its_secret() -> None:
    fake = FakeAS(auth_methods=["none", "client_secret_post"])
    pre = PreRegisteredClient("app-1", client_secret="pw", token_endpoint_auth_method="none")
    assert run(authorize(client_for(fake.handle, client=pre)))
    (form,) = fake.token_forms
    assert form["client_id"] == "app-1" and "client_secret" not in form and "_basic" not in form


def test_private_key_jwt_without_a_key_is_refused_before_the_token_request() -> None:
    fake = FakeAS(auth_methods=["private_key_jwt"])
    pre = PreRegisteredClient("app-1", token_endpoint_auth_method="private_key_jwt")
    with pytest.raises(AuthError) as info:
        run(authorize(client_for(fake.handle, client=pre)))
    assert (info.value.step, info.value.reason) == (
        "token request", "private_key_jwt needs a private key (PreRegisteredClient.private_key)")
    assert fake.token_forms == []


def test_a_grant_at_a_server_without_a_token_endpoint_is_refused_naming_the_metadata() -> None:
    from wiremcp.auth import ClientCredentialsGrant

    fake = FakeAS()
    auth = client_for(_with_metadata(fake, token_endpoint=None), grant=ClientCredentialsGrant("svc", client_secret="pw"))
    with pytest.raises(AuthError) as info:
        run(authorize(auth))
    assert (info.value.step, info.value.reason) == ("authorization server metadata", f"{fake.issuer!r} lists no token endpoint")


# -- discovery of the authorization server's metadata -------------------------------------------------


def test_metadata_is_looked_for_at_each_location_in_turn_and_every_failure_is_reported() -> None:
    fake = FakeAS()
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        if request.url.path == "/.well-known/oauth-authorization-server":
            return httpx.Response(404)
        if request.url.path == "/.well-known/openid-configuration":
            return fake.handle(httpx.Request("GET", fake.issuer + "/.well-known/oauth-authorization-server"))
        return fake.handle(request)

    assert run(authorize(client_for(handler)))
    assert seen.index("/.well-known/oauth-authorization-server") < seen.index("/.well-known/openid-configuration")

    def nothing(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/.well-known/openid-configuration":
            return httpx.Response(200, json={"issuer": "https://other.example"})
        if request.url.path == "/.well-known/oauth-authorization-server":
            return httpx.Response(404)
        return fake.handle(request)

    with pytest.raises(AuthError) as info:
        run(authorize(client_for(nothing)))
    assert (info.value.step, info.value.reason) == (
        "authorization server metadata",
        f"no usable metadata for issuer {fake.issuer!r} ({fake.issuer}/.well-known/oauth-authorization-server: HTTP 404; "
        f"{fake.issuer}/.well-known/openid-configuration: issuer 'https://other.example' is not {fake.issuer!r})")


def test_an_empty_endpoint_in_the_metadata_counts_as_none() -> None:
    fake = FakeAS()
    with pytest.raises(AuthError) as info:
        run(authorize(client_for(_with_metadata(fake, authorization_endpoint=""))))
    assert info.value.reason == f"{fake.issuer!r} lists no authorization or token endpoint"


# -- what the token endpoint says, and DPoP at the token endpoint ------------------------------------------


def test_the_scopes_the_server_says_it_granted_are_the_tokens_scopes() -> None:
    fake = FakeAS(prm_scopes=["read", "write"])
    body = {"access_token": "t-1", "token_type": "Bearer", "scope": "read"}
    auth = client_for(_failing_at("/token", fake, httpx.Response(200, json=body)))
    assert run(authorize(auth))
    assert auth.granted_scopes == ["read"]


def test_a_preregistered_clients_signing_algorithm_is_used_for_its_assertion() -> None:
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    fake = FakeAS(auth_methods=["private_key_jwt"])
    pre = PreRegisteredClient("app-1", private_key=key, signing_algorithm="PS256")
    assert run(authorize(client_for(fake.handle, client=pre)))
    assertion = fake.token_forms[0]["client_assertion"]
    assert jwt.get_unverified_header(assertion)["alg"] == "PS256"
    jwt.decode(assertion, key.public_key(), algorithms=["PS256"], audience=fake.issuer)


@pytest.mark.parametrize("dpop, algs, bound", [(False, ["ES256"], False), (True, None, True), ("auto", None, False)])
def test_dpop_at_the_token_endpoint_follows_the_setting(dpop: Any, algs: list[str] | None, bound: bool) -> None:
    fake = FakeAS(dpop_algs=algs)
    assert run(authorize(client_for(fake.handle, dpop=dpop)))
    (form,) = fake.token_forms
    assert ("_dpop" in form) is bound
    if bound:
        claims = jwt.decode(form["_dpop"], options={"verify_signature": False})
        assert claims["htm"] == "POST" and claims["htu"] == fake.issuer + "/token"


@pytest.mark.parametrize(
    "answer, requests",
    [
        ((400, {"DPoP-Nonce": "n-new"}, {"error": "use_dpop_nonce"}), 2),  # retried once with the nonce, not more
        ((400, {}, {"error": "use_dpop_nonce"}), 1),  # no nonce to use: not retried
        ((400, {"DPoP-Nonce": "n-new"}, {"error": "invalid_grant"}), 1),  # another error: not retried
    ],
)
def test_a_use_dpop_nonce_error_is_retried_once_and_only_with_a_nonce(answer: tuple[int, dict[str, str], Any], requests: int) -> None:
    fake = FakeAS(dpop_algs=["ES256"])
    status, headers, body = answer
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/token":
            sent.append(request)
            return httpx.Response(status, headers=headers, json=body)
        return fake.handle(request)

    with pytest.raises(AuthError):
        run(authorize(client_for(handler)))
    assert len(sent) == requests
    if requests == 2:
        assert jwt.decode(sent[1].headers["dpop"], options={"verify_signature": False})["nonce"] == "n-new"



# -- protected resource metadata ---------------------------------------------------------------------------


PRM_URL = BASE + "/.well-known/oauth-protected-resource/mcp"


@pytest.mark.parametrize(
    "doc, reason",
    [
        ({"authorization_servers": ["http://localhost:7"]}, f"{PRM_URL} has no 'resource'"),
        ({"resource": "", "authorization_servers": ["http://localhost:7"]}, f"{PRM_URL} has no 'resource'"),
        ({"resource": SERVER_URL}, f"{PRM_URL} lists no 'authorization_servers'"),
        ({"resource": SERVER_URL, "authorization_servers": []}, f"{PRM_URL} lists no 'authorization_servers'"),
        ({"resource": SERVER_URL, "authorization_servers": "http://localhost:7"}, f"{PRM_URL} lists no 'authorization_servers'"),
        ({"resource": SERVER_URL, "authorization_servers": ["http://localhost:7", ""]}, f"{PRM_URL} lists no 'authorization_servers'"),
        ({"resource": SERVER_URL, "authorization_servers": [7]}, f"{PRM_URL} lists no 'authorization_servers'"),
    ],
)
def test_resource_metadata_without_a_resource_or_authorization_servers_is_refused(doc: dict[str, Any], reason: str) -> None:
    fake = FakeAS()

    def handler(request: httpx.Request) -> httpx.Response:
        if str(request.url) == PRM_URL:
            return httpx.Response(200, json=doc)
        return fake.handle(request)

    with pytest.raises(AuthError) as info:
        run(authorize(client_for(handler)))
    assert (info.value.step, info.value.reason) == ("protected resource metadata", reason)
    assert fake.authorizations == []


def test_well_known_locations_drop_a_trailing_slash_and_nothing_else() -> None:
    from wiremcp.auth import metadata_urls, prm_urls

    assert prm_urls("https://mcp.example/tenantX/") == [
        "https://mcp.example/.well-known/oauth-protected-resource/tenantX", "https://mcp.example/.well-known/oauth-protected-resource"]
    assert metadata_urls("https://as.example/realmX/")[0] == "https://as.example/.well-known/oauth-authorization-server/realmX"
    assert metadata_urls("https://as.example/realmX")[2] == "https://as.example/realmX/.well-known/openid-configuration"


def test_a_metadata_document_client_names_itself_by_its_url_in_a_refresh_too() -> None:
    url = "https://app.example/oauth/client.json"
    fake = FakeAS(cimd=True, refresh_token="r-1", expires_in=1)
    auth = client_for(fake.handle, client_metadata_url=url)

    async def go() -> dict[str, str]:
        await authorize(auth)
        return await auth.headers("POST", SERVER_URL)  # expired at once (the skew): refreshed first

    assert run(go()) == {"Authorization": "Bearer token-2"}
    assert fake.registrations == []
    assert [(f["grant_type"], f["client_id"]) for f in fake.token_forms] == [
        ("authorization_code", url), ("refresh_token", url)]
