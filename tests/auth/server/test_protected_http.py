"""``examples/protected.py`` over real HTTP, with tokens from a real authorization server.

basic/authorization/ (2026-07-28): the protected resource metadata (RFC 9728),
401 with ``WWW-Authenticate: Bearer resource_metadata=...`` for a missing
or invalid token, 403 ``insufficient_scope`` naming the scopes needed, audience
binding (a token for another resource is refused), and the verified identity
reaching the tool.
"""

from __future__ import annotations

import time

import httpx
import jwt
import pytest

from ._oauth import AuthorizationServer, DPoPKey, ProtectedServer, b64, challenge, ec_key, request

pytestmark = pytest.mark.slow


def structured(response: httpx.Response) -> dict:
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert result.get("isError") is not True, result
    return result


# -- metadata ------------------------------------------------------------------


def test_metadata_at_the_path_based_and_the_root_well_known_urls(protected: ProtectedServer, auth_server: AuthorizationServer):
    base = f"http://127.0.0.1:{protected.port}"
    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        got = httpx.get(base + path, timeout=10)
        assert got.status_code == 200
        assert got.headers["content-type"] == "application/json"
        doc = got.json()
        assert doc["resource"] == protected.url
        assert doc["authorization_servers"] == [auth_server.issuer]
        assert doc["scopes_supported"] == ["mcp", "admin"]
        assert doc["bearer_methods_supported"] == ["header"]
    # the metadata is public: no token needed; other methods are refused
    assert httpx.post(base + "/.well-known/oauth-protected-resource/mcp", timeout=10).status_code == 405
    assert httpx.get(base + "/.well-known/oauth-protected-resource/other", timeout=10).status_code == 404


# -- 401 -----------------------------------------------------------------------


def test_no_token_is_401_with_resource_metadata_and_scope(protected: ProtectedServer):
    got = protected.call("whoami")
    assert got.status_code == 401
    params = challenge(got)
    assert params["scheme"] == "Bearer"
    assert params["resource_metadata"] == f"http://127.0.0.1:{protected.port}/.well-known/oauth-protected-resource/mcp"
    assert params["scope"] == "mcp"
    assert "error" not in params  # RFC 6750 section 3.1: no error code without credentials
    assert got.json()["error"]["code"] == -32600


def test_every_method_at_the_endpoint_needs_the_token(protected: ProtectedServer):
    for method in ("GET", "DELETE"):
        got = httpx.request(method, protected.url, headers={"mcp-session-id": "x"}, timeout=10)
        assert got.status_code == 401, method


def invalid(got: httpx.Response) -> dict[str, str]:
    assert got.status_code == 401, got.text
    params = challenge(got)
    assert params["error"] == "invalid_token"
    assert "resource_metadata" in params
    return params


def test_valid_token_reaches_the_tool_with_its_identity(protected: ProtectedServer, auth_server: AuthorizationServer):
    token = auth_server.token("reader", protected.url, "mcp")
    result = structured(protected.call("whoami", token=token))
    assert result["structuredContent"] == {"subject": "reader", "client_id": "reader", "scopes": ["mcp"]}


def test_the_scheme_name_is_case_insensitive(protected: ProtectedServer, auth_server: AuthorizationServer):
    token = auth_server.token("reader", protected.url, "mcp")
    structured(protected.call("whoami", token=token, scheme="bearer"))


def test_token_for_another_resource_is_refused(protected: ProtectedServer, auth_server: AuthorizationServer):
    other = f"http://127.0.0.1:{protected.port}/other-mcp"
    token = auth_server.token("reader", other, "mcp")
    params = invalid(protected.call("whoami", token=token))
    assert "resource" in params["error_description"]


def test_expired_token_is_refused(protected: ProtectedServer, auth_server: AuthorizationServer):
    now = int(time.time())
    token = auth_server.forge({"aud": protected.url, "scope": "mcp", "iat": now - 600, "exp": now - 300})
    params = invalid(protected.call("whoami", token=token))
    assert "expired" in params["error_description"]


def test_tampered_signature_is_refused(protected: ProtectedServer, auth_server: AuthorizationServer):
    token = auth_server.token("reader", protected.url, "mcp")
    head, body, sig = token.split(".")
    claims = jwt.utils.base64url_decode(body)
    forged_body = b64(claims.replace(b'"scope":"mcp"', b'"scope":"mcp admin"'))
    assert forged_body != body
    invalid(protected.call("admin_echo", {"text": "x"}, token=f"{head}.{forged_body}.{sig}"))
    flipped = sig[:-2] + ("A" if sig[-2] != "A" else "B") + sig[-1]
    invalid(protected.call("whoami", token=f"{head}.{body}.{flipped}"))


def test_alg_none_is_refused(protected: ProtectedServer, auth_server: AuthorizationServer):
    now = int(time.time())
    claims = {"iss": auth_server.issuer, "aud": protected.url, "scope": "mcp admin", "exp": now + 300, "sub": "x"}
    token = jwt.encode(claims, None, algorithm="none", headers={"kid": "key-1", "typ": "at+jwt"})
    params = invalid(protected.call("whoami", token=token))
    assert "algorithm" in params["error_description"]


def test_hs256_signed_with_the_public_key_is_refused(protected: ProtectedServer, auth_server: AuthorizationServer):
    """The classic key-confusion attack: the issuer's public key used as an HMAC secret."""
    public = httpx.get(f"{auth_server.issuer}/jwks", timeout=10).json()["keys"][0]
    secret = jwt.utils.base64url_decode(public["x"]) + jwt.utils.base64url_decode(public["y"])
    now = int(time.time())
    claims = {"iss": auth_server.issuer, "aud": protected.url, "scope": "mcp", "exp": now + 300}
    token = jwt.encode(claims, secret, algorithm="HS256", headers={"kid": "key-1"})
    invalid(protected.call("whoami", token=token))


def test_garbage_tokens_are_malformed_and_never_echoed(protected: ProtectedServer):
    for token in ("not-a-jwt", "a.b.c", "eyJhbGciOiJFUzI1NiJ9.e30.sig-secret-value"):
        got = protected.call("whoami", token=token)
        params = invalid(got)
        assert token not in got.text and token not in got.headers["www-authenticate"]
        assert "secret" not in params["error_description"]


def test_wrong_issuer_is_refused(node: str, protected: ProtectedServer, auth_server: AuthorizationServer, tmp_path):
    """Another issuer signing with the very same key: the signature verifies, the issuer does not."""
    impostor = AuthorizationServer(node, tmp_path).start(auth_server.keys)
    try:
        token = impostor.token("reader", protected.url, "mcp")
    finally:
        impostor.stop()
    params = invalid(protected.call("whoami", token=token))
    assert "issued" in params["error_description"]


def test_token_in_the_query_string_is_refused(protected: ProtectedServer, auth_server: AuthorizationServer):
    token = auth_server.token("reader", protected.url, "mcp")
    got = httpx.post(
        protected.url + "?access_token=" + token,
        content=b"{}",
        headers={"content-type": "application/json", "accept": "application/json, text/event-stream"},
        timeout=10,
    )
    assert got.status_code == 400
    assert challenge(got)["error"] == "invalid_request"
    assert token not in got.text


# -- 403 -----------------------------------------------------------------------


def test_token_without_the_required_scope_is_403(protected: ProtectedServer, auth_server: AuthorizationServer):
    token = auth_server.token("outsider", protected.url, "admin")  # admin, but not mcp
    got = protected.call("whoami", token=token)
    assert got.status_code == 403
    params = challenge(got)
    assert params["error"] == "insufficient_scope"
    assert params["scope"] == "mcp"


def test_admin_echo_without_admin_is_403_insufficient_scope(protected: ProtectedServer, auth_server: AuthorizationServer):
    token = auth_server.token("admin", protected.url, "mcp")  # may have admin, did not ask for it
    got = protected.call("admin_echo", {"text": "hi"}, token=token)
    assert got.status_code == 403
    params = challenge(got)
    assert params["error"] == "insufficient_scope"
    assert params["scope"].split() == ["mcp", "admin"]  # everything the operation needs, at once
    assert params["resource_metadata"].endswith("/.well-known/oauth-protected-resource/mcp")
    body = got.json()
    assert body["id"] == 1 and "admin" in body["error"]["message"]


def test_admin_echo_with_admin(protected: ProtectedServer, auth_server: AuthorizationServer):
    token = auth_server.token("admin", protected.url, "mcp admin")
    result = structured(protected.call("admin_echo", {"text": "hi"}, token=token))
    assert result["content"] == [{"type": "text", "text": "hi"}]
    who = structured(protected.call("whoami", token=token))["structuredContent"]
    assert who["scopes"] == ["admin", "mcp"]


def test_listing_needs_only_the_required_scope_and_hides_what_the_token_may_not_call(
    protected: ProtectedServer, auth_server: AuthorizationServer
):
    token = auth_server.token("reader", protected.url, "mcp")
    got = protected.post(request("tools/list"), token=token)
    assert got.status_code == 200
    assert {t["name"] for t in got.json()["result"]["tools"]} == {"whoami"}  # admin_echo needs admin
    admin = auth_server.token("admin", protected.url, "mcp admin")
    got = protected.post(request("tools/list"), token=admin)
    assert {t["name"] for t in got.json()["result"]["tools"]} == {"whoami", "admin_echo"}


# -- key rotation --------------------------------------------------------------


def test_key_rotation_new_kid_is_fetched(node: str, tmp_path):
    """The issuer restarts with a new key: the server fetches the key set again for the unknown kid."""
    issuer = AuthorizationServer(node, tmp_path).start([ec_key("old")])
    server = ProtectedServer(issuer.issuer)
    try:
        old = issuer.token("reader", server.url, "mcp")
        assert jwt.get_unverified_header(old)["kid"] == "old"
        structured(server.call("whoami", token=old))
        issuer.stop()
        time.sleep(1.1)  # the key set is fetched again at most once a second (JWKS min_refresh_interval)
        issuer.start([ec_key("new")])
        new = issuer.token("reader", server.url, "mcp")
        assert jwt.get_unverified_header(new)["kid"] == "new"
        structured(server.call("whoami", token=new))
        # the old key is no longer published: its tokens stop working
        assert server.call("whoami", token=old).status_code == 401
    finally:
        server.stop()
        issuer.stop()


# -- DPoP (RFC 9449) -----------------------------------------------------------


def test_dpop_bound_token(protected: ProtectedServer, auth_server: AuthorizationServer):
    key = DPoPKey()
    response = auth_server.token_response("reader", protected.url, "mcp", dpop=key)
    assert response["token_type"] == "DPoP"
    token = response["access_token"]
    assert jwt.decode(token, options={"verify_signature": False})["cnf"]["jkt"]
    proof = key.proof("POST", protected.url, token)
    ok = protected.call("whoami", token=token, scheme="DPoP", headers={"DPoP": proof})
    assert structured(ok)["structuredContent"]["subject"] == "reader"
    # the same proof again: a replay
    again = protected.call("whoami", token=token, scheme="DPoP", headers={"DPoP": proof})
    assert again.status_code == 401
    params = challenge(again)
    assert params["scheme"] == "DPoP" and params["error"] == "invalid_token" and "algs" in params
    # a bound token sent as a plain bearer token
    assert protected.call("whoami", token=token).status_code == 401
    # a proof for another URI, another method, another token, or made with another key
    for bad in (
        key.proof("POST", protected.url + "x", token),
        key.proof("GET", protected.url, token),
        key.proof("POST", protected.url, token + "x"),
        DPoPKey().proof("POST", protected.url, token),
        key.proof("POST", protected.url, token, iat=time.time() - 3600),
    ):
        assert protected.call("whoami", token=token, scheme="DPoP", headers={"DPoP": bad}).status_code == 401
    # no proof at all
    assert protected.call("whoami", token=token, scheme="DPoP").status_code == 401


def test_dpop_bound_token_without_the_scope_gets_a_dpop_challenge(protected: ProtectedServer, auth_server: AuthorizationServer):
    key = DPoPKey()
    token = auth_server.token("reader", protected.url, "mcp", dpop=key)
    got = protected.call("admin_echo", {"text": "x"}, token=token, scheme="DPoP", headers={"DPoP": key.proof("POST", protected.url, token)})
    assert got.status_code == 403
    params = challenge(got)
    assert params["scheme"] == "DPoP" and params["error"] == "insufficient_scope" and params["scope"] == "mcp admin"
