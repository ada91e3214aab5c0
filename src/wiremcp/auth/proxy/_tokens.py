"""The proxy's token endpoint, revocation endpoint and the verifier of its own tokens.

Rules it keeps:

* **client authentication** as registered: ``none`` (a ``client_id`` and no
  secret), ``client_secret_basic`` or ``client_secret_post`` (one way only);
  a failure is 401 ``invalid_client``;
* **authorization_code**: the code is single use; it must have been issued
  to this client, for exactly this ``redirect_uri``; the ``code_verifier``
  must hash (S256) to its challenge; ``resource``, when given, must name
  the MCP server. A code presented twice revokes the grant it made (OAuth
  2.1 section 4.1.3);
* **access tokens** are the proxy's own RFC 9068 JWTs: ``iss`` the proxy,
  ``aud`` the MCP server (the resource), ``sub`` the upstream user,
  ``client_id`` the MCP client, ``scope``, and ``gid`` (the grant); short
  lived (5 minutes by default). The upstream tokens never leave the store;
* **refresh tokens** rotate: each is good once and is answered with a new
  one; a used one presented again revokes the whole grant (reuse
  detection, OAuth 2.1 section 4.3.1). A refresh may narrow the scopes,
  never widen them;
* **revocation** (RFC 7009): a refresh token or an access token of the
  calling client revokes its grant; the answer is 200 whatever the token;
* **verification** (`ProxyVerifier`): the existing `JWTVerifier` checks the
  token against the proxy's key set, then the grant must still exist: a
  revoked grant or consent stops its access tokens at once.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import secrets
from typing import TYPE_CHECKING, Any

from .._pkce import b64url
from ..server._discovery import canonical_uri
from ..server._errors import AuthError
from ..server._token import AccessToken, DPoPProof
from ._http import BadRequest, Request, Send, json_answer
from ._registration import secret_matches

if TYPE_CHECKING:
    from ..server._jwt import JWTVerifier
    from ._proxy import OAuthProxy

__all__ = ["token_endpoint", "revocation_endpoint", "ProxyVerifier"]


def _error(code: str, description: str) -> dict[str, Any]:
    return {"error": code, "error_description": description}


async def _client(proxy: OAuthProxy, request: Request) -> dict[str, Any] | None:
    """The authenticated client of a token or revocation request, or None (credentials that do not parse too)."""
    try:
        basic = request.basic()
    except BadRequest:
        return None
    form = request.form
    if basic is not None:
        if "client_secret" in form or form.get("client_id", basic[0]) != basic[0]:
            return None
        client_id, method = basic[0], "client_secret_basic"
        secret: str | None = basic[1]
    else:
        client_id, secret = form.get("client_id", ""), form.get("client_secret")
        method = "none" if secret is None else "client_secret_post"
    client = await proxy.client(client_id)
    if client is None or client["token_endpoint_auth_method"] != method:
        return None
    if method != "none" and not secret_matches(client, secret):
        return None
    return client


async def token_endpoint(proxy: OAuthProxy, request: Request, send: Send) -> None:
    client = await _client(proxy, request)
    if client is None:
        return await json_answer(send, 401, _error("invalid_client", "client authentication failed"),
                                 [(b"www-authenticate", b'Basic realm="oauth proxy"')])
    grant_type = request.form.get("grant_type")
    if grant_type not in client["grant_types"]:
        return await json_answer(send, 400, _error("unauthorized_client", f"this client may not use {grant_type}"))
    if grant_type == "authorization_code":
        status, body = await _code_grant(proxy, client, request.form)
    else:
        status, body = await _refresh_grant(proxy, client, request.form)
    await json_answer(send, status, body)


async def _code_grant(proxy: OAuthProxy, client: dict[str, Any], form: dict[str, str]) -> tuple[int, dict[str, Any]]:
    code = form.get("code", "")
    record = await proxy.store.take("code", code) if code else None
    if record is None:
        used = await proxy.store.get("used-code", code) if code else None
        if used is not None and used["client_id"] == client["client_id"]:
            await proxy.revoke_grant(used["grant_id"])
        return 400, _error("invalid_grant", "the code is unknown, expired or used")
    await proxy.store.put("used-code", (code,), {"grant_id": record["grant_id"], "client_id": record["client_id"]}, ttl=600)
    if record["client_id"] != client["client_id"]:
        await proxy.revoke_grant(record["grant_id"])
        return 400, _error("invalid_grant", "the code was issued to another client")
    if form.get("redirect_uri") != record["redirect_uri"]:
        return 400, _error("invalid_grant", "redirect_uri is not the one of the authorization request")
    verifier = form.get("code_verifier", "")
    if not 43 <= len(verifier) <= 128 or not hmac.compare_digest(
        b64url(hashlib.sha256(verifier.encode()).digest()), record["code_challenge"]
    ):
        return 400, _error("invalid_grant", "the code_verifier does not match the code_challenge")
    problem = _resource_problem(proxy, form)
    if problem is not None:
        return problem
    return 200, await _issue(proxy, client, record["user"], record["grant_id"], record["scopes"])


def _resource_problem(proxy: OAuthProxy, form: dict[str, str]) -> tuple[int, dict[str, Any]] | None:
    resource = form.get("resource")
    try:
        if resource is None or canonical_uri(resource) == proxy.resource:
            return None
    except ValueError:
        pass
    return 400, _error("invalid_target", f"this authorization server issues tokens for {proxy.resource} only")


async def _refresh_grant(proxy: OAuthProxy, client: dict[str, Any], form: dict[str, str]) -> tuple[int, dict[str, Any]]:
    token = form.get("refresh_token", "")
    record = await proxy.store.get("refresh", token) if token else None
    if record is None or record["client_id"] != client["client_id"]:
        return 400, _error("invalid_grant", "the refresh token is unknown, expired or revoked")
    if record["used"]:
        proxy.log.warning("a refresh token was used twice: grant revoked (client %s)", client["client_id"])
        await proxy.revoke_grant(record["grant_id"])
        return 400, _error("invalid_grant", "the refresh token was used already: the grant is revoked")
    grant = await proxy.store.get("grant", record["grant_id"])
    if grant is None:
        return 400, _error("invalid_grant", "the grant was revoked")
    problem = _resource_problem(proxy, form)
    if problem is not None:
        return problem
    scopes = record["scopes"]
    asked = form.get("scope")
    if asked is not None:
        wanted = [s for s in dict.fromkeys(asked.split()) if s != "offline_access"]
        if not set(wanted) <= set(scopes):
            return 400, _error("invalid_scope", "a refresh may narrow the scopes, never widen them")
        scopes = wanted
    await proxy.store.put("refresh", (token,), {**record, "used": True}, ttl=proxy.refresh_token_lifetime)
    return 200, await _issue(proxy, client, grant["user"], record["grant_id"], scopes)


async def _issue(proxy: OAuthProxy, client: dict[str, Any], user: str, grant_id: str, scopes: list[str]) -> dict[str, Any]:
    access = proxy.mint(user=user, client_id=client["client_id"], scopes=scopes, grant_id=grant_id)
    body: dict[str, Any] = {
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": proxy.access_token_lifetime,
        "scope": " ".join(scopes),
    }
    if "refresh_token" in client["grant_types"]:
        refresh = secrets.token_urlsafe(32)
        record = {"grant_id": grant_id, "client_id": client["client_id"], "scopes": scopes, "used": False}
        await proxy.store.put("refresh", (refresh,), record, ttl=proxy.refresh_token_lifetime)
        body["refresh_token"] = refresh
    return body


async def revocation_endpoint(proxy: OAuthProxy, request: Request, send: Send) -> None:
    client = await _client(proxy, request)
    if client is None:
        return await json_answer(send, 401, _error("invalid_client", "client authentication failed"))
    token = request.form.get("token", "")
    record = await proxy.store.get("refresh", token) if token else None
    if record is not None and record["client_id"] == client["client_id"]:
        await proxy.revoke_grant(record["grant_id"])
    elif token.count(".") == 2:
        claims = proxy.own_claims(token)
        if claims is not None and claims.get("client_id") == client["client_id"] and isinstance(claims.get("gid"), str):
            await proxy.revoke_grant(claims["gid"])
    await json_answer(send, 200, {})


class ProxyVerifier:
    """The proxy's access tokens, checked by `JWTVerifier`, then against the live grants."""

    def __init__(self, proxy: OAuthProxy, jwt_verifier: JWTVerifier) -> None:
        self.proxy = proxy
        self.jwt = jwt_verifier

    async def verify(self, token: str, *, dpop: DPoPProof | None, method: str, url: str) -> AccessToken:
        verified = await self.jwt.verify(token, dpop=dpop, method=method, url=url)
        grant_id = verified.claims.get("gid")
        grant = await self.proxy.store.get("grant", grant_id) if isinstance(grant_id, str) else None
        if grant is None:
            raise AuthError("inactive", "the grant behind this access token was revoked")
        identity = grant.get("upstream", {}).get("identity")
        if identity:  # the upstream email and roles, for the tools (never the upstream tokens)
            extra = {"email": identity.get("email"), "roles": identity.get("roles", [])}
            return dataclasses.replace(verified, claims={**verified.claims, **extra})
        return verified
