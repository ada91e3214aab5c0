"""`OAuthClient`: OAuth 2.1 for an MCP client over HTTP (2026-07-28 basic/authorization/).

It plugs into the HTTP transport through two calls:
``await auth.headers(method, url)`` before each request (the
``Authorization`` header and, for DPoP-bound tokens, a fresh ``DPoP``
proof) and ``await auth.on_response(status, headers, url)`` on 401 and 403
replies and on any reply carrying ``DPoP-Nonce`` (True: send the request
again, once, with fresh headers).

Rules it keeps:

* **401**: discovery from the challenge (`_discovery`), then, in this
  order, a stored token for (issuer, resource), a refresh, or a new grant.
  The token is sent only to the MCP server it was issued for (the transport
  calls ``headers`` only for its own endpoint);
* **client identity** (client-registration.mdx): pre-registered credentials
  bound to the issuer, else a client ID metadata document URL when the
  authorization server advertises ``client_id_metadata_document_supported``,
  else dynamic client registration (``application_type`` native for a
  loopback redirect URI). Credentials are bound to the issuer that issued
  them: when ``authorization_servers`` names another issuer, the client
  registers again and never presents the old client id;
* **authorization code** (OAuth 2.1 section 4.1): PKCE S256 always, and only
  with an authorization server that lists S256 in
  ``code_challenge_methods_supported``; ``state`` checked; ``iss`` (RFC 9207)
  compared with the recorded issuer by plain string comparison when present,
  and required when the server advertises
  ``authorization_response_iss_parameter_supported`` — before the code goes
  anywhere, and before an ``error`` in the response is acted on;
* **resource** (RFC 8707): on every authorization and token request, the PRM
  ``resource`` exactly as published;
* **scopes**: the challenge's ``scope``, else all of the PRM
  ``scopes_supported``, else none; plus ``offline_access`` when the
  authorization server lists it (and ``refresh_token`` in the client
  metadata's ``grant_types``). A 403 ``insufficient_scope`` re-authorizes
  with the union of the scopes requested so far and the challenged ones,
  at most ``max_step_up`` times for the same scope set;
* **token endpoint authentication**: what registration returned, else what
  the server supports: ``private_key_jwt`` (with a key), ``client_secret_basic``,
  ``client_secret_post``, ``none``;
* **DPoP** (RFC 9449): with ``dpop="auto"`` when the authorization server
  lists ES256 in ``dpop_signing_alg_values_supported``: one P-256 key per
  client, stored with the tokens it binds (``dpop_key``, PEM) so that a
  later process can use them, a fresh proof per request (``htm``, ``htu``, ``jti``, ``iat``,
  ``ath`` with the token), server nonces from ``DPoP-Nonce`` kept per origin
  and a ``use_dpop_nonce`` error answered by one retry, at the
  authorization server and at the MCP server;
* **limits**: one authorization at a time (a lock); a fresh token refused
  again on its first use is tried at most ``max_authorizations`` times in a
  row; a failed JWT-bearer grant is never retried.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import time
from collections.abc import Mapping
from typing import Any, Literal
from urllib.parse import quote, urlencode, urlsplit

from ._challenge import Challenge, bearer_challenge
from ._discovery import ServerMetadata, discover_resource, discover_server, legacy_server
from ._errors import AuthError
from ._grants import (
    CLIENT_ASSERTION_TYPE,
    ID_JAG,
    ID_TOKEN,
    JWT_BEARER,
    TOKEN_EXCHANGE,
    ClientCredentialsGrant,
    EnterpriseGrant,
    Grant,
    JWTBearerGrant,
    PreRegisteredClient,
    resolve_token,
)
from ._http import DEFAULT_MAX_BODY, DEFAULT_TIMEOUT, Fetcher, Response
from ._jose import (
    PrivateKey,
    client_assertion,
    default_algorithm,
    dpop_proof,
    generate_key,
    load_private_key,
    private_key_pem,
)
from ._pkce import code_challenge, code_verifier, new_state, same_state
from ._redirect import HeadlessRedirect, RedirectHandler, check_authorization_url
from ._ssrf import Resolver, URLGuard, is_loopback_host
from ._storage import MemoryTokenStore, TokenStore

__all__ = ["OAuthClient"]

log = logging.getLogger("wiremcp.auth")

#: Seconds before ``expires_in`` runs out at which a token counts as expired.
EXPIRY_SKEW = 30.0


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def _form_quote(value: str) -> str:
    return quote(value, safe="")


class OAuthClient:
    """OAuth 2.1 for one MCP server; pass it as ``Client.http(url, auth=OAuthClient(...))``."""

    def __init__(
        self,
        *,
        client_name: str = "wiremcp",
        redirect_handler: RedirectHandler | None = None,
        client: PreRegisteredClient | None = None,
        client_metadata_url: str | None = None,
        grant: Grant | None = None,
        scopes: list[str] | None = None,
        offline_access: bool = True,
        dpop: bool | Literal["auto"] = "auto",
        store: TokenStore | None = None,
        allow_private_networks: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
        max_response_bytes: int = DEFAULT_MAX_BODY,
        max_step_up: int = 1,
        max_authorizations: int = 2,
        http_client: Any = None,
        resolver: Resolver | None = None,
    ) -> None:
        if client_metadata_url is not None:
            parts = urlsplit(client_metadata_url)
            if parts.scheme != "https" or parts.path in ("", "/"):
                raise ValueError("client_metadata_url must be an https URL with a path (client-registration.mdx)")
        self.client_name = client_name
        self.redirect_handler: RedirectHandler = redirect_handler or HeadlessRedirect()
        self.preregistered = client
        self.client_metadata_url = client_metadata_url
        self.grant = grant
        self.scopes = scopes
        self.offline_access = offline_access
        self.dpop = dpop
        self.store: TokenStore = store or MemoryTokenStore()
        self.allow_private_networks = allow_private_networks
        self.timeout = timeout
        self.max_response_bytes = max_response_bytes
        self.max_step_up = max_step_up
        self.max_authorizations = max_authorizations
        self._http_client = http_client
        self._resolver = resolver

        self.server_url: str | None = None
        self._fetch: Fetcher | None = None
        self._lock = asyncio.Lock()
        self._token: dict[str, Any] | None = None
        self._client_info: dict[str, Any] | None = None
        self._metadata: ServerMetadata | None = None
        self._resource: str | None = None
        self._requested: list[str] = []
        self._step_ups: dict[frozenset[str], int] = {}
        self._uses = 0  # requests that carried the current token
        self._fresh_failures = 0
        self._dpop_key: PrivateKey | None = None
        self._nonces: dict[str, str] = {}
        self._grant_failed: AuthError | None = None

    # -- the transport hook -------------------------------------------------

    def _bind(self, url: str) -> Fetcher:
        if self.server_url is None:
            self.server_url = url
        if self._fetch is None:
            guard = URLGuard(self.server_url, allow_private_networks=self.allow_private_networks, resolver=self._resolver)
            self._fetch = Fetcher(guard, http_client=self._http_client, timeout=self.timeout, max_body=self.max_response_bytes)
        return self._fetch

    async def headers(self, method: str, url: str) -> dict[str, str]:
        """``Authorization`` (and ``DPoP``) for one request to the MCP server."""
        self._bind(url)
        token = self._token
        if token is None:
            return {}
        if self._expired(token) and token.get("refresh_token"):
            async with self._lock:
                if self._token is token:
                    await self._try_refresh()
            token = self._token
            if token is None:
                return {}
        self._uses += 1
        access = token["access_token"]
        if token.get("token_type", "bearer").lower() == "dpop":
            proof = dpop_proof(self._dpop(), method, url, nonce=self._nonces.get(_origin(url)), access_token=access)
            return {"Authorization": f"DPoP {access}", "DPoP": proof}
        return {"Authorization": f"Bearer {access}"}

    async def on_response(self, status: int, headers: Mapping[str, str], url: str) -> bool:
        """Handle a 401/403 (authorize, step up) or note a DPoP nonce; True: retry the request once."""
        self._bind(url)
        nonce = headers.get("dpop-nonce") or headers.get("DPoP-Nonce")
        if nonce:
            self._nonces[_origin(url)] = nonce
        if status not in (401, 403):
            return False
        challenge = bearer_challenge(headers.get("www-authenticate") or headers.get("WWW-Authenticate"))
        if status == 401 and challenge is not None and challenge.error == "use_dpop_nonce":
            return bool(nonce)
        async with self._lock:
            if status == 401:
                return await self._on_401(challenge)
            return await self._on_403(challenge)

    async def aclose(self) -> None:
        """Close the HTTP client of the flow and the redirect handler's listener, if any."""
        if self._fetch is not None:
            await self._fetch.aclose()
            self._fetch = None
        close = getattr(self.redirect_handler, "aclose", None)
        if close is not None:
            await close()

    # -- 401 / 403 ------------------------------------------------------------

    async def _on_401(self, challenge: Challenge | None) -> bool:
        if self._grant_failed is not None:
            raise self._grant_failed
        if self._token is not None and self._uses <= 1:
            self._fresh_failures += 1
        else:
            self._fresh_failures = 1
        if self._fresh_failures > self.max_authorizations:
            raise AuthError(
                "authorization", f"the server refused a freshly issued token {self.max_authorizations} times in a row; giving up"
            )
        had_token = self._token is not None
        await self._authorize(challenge, None, refresh=had_token)
        return True

    async def _on_403(self, challenge: Challenge | None) -> bool:
        if challenge is None or challenge.error != "insufficient_scope":
            return False
        wanted = challenge.scope or []
        union = list(dict.fromkeys([*self._requested, *wanted]))
        key = frozenset(union)
        tries = self._step_ups.get(key, 0)
        if tries >= self.max_step_up:
            raise AuthError(
                "step-up authorization",
                f"the server still answers insufficient_scope (scope {' '.join(wanted) or '(none)'}) after "
                f"{tries} re-authorization(s) for that scope set; giving up",
                error="insufficient_scope",
            )
        self._step_ups[key] = tries + 1
        await self._authorize(challenge, union, refresh=False)
        return True

    # -- the flow -------------------------------------------------------------

    async def _authorize(self, challenge: Challenge | None, scopes: list[str] | None, *, refresh: bool) -> None:
        fetch = self._fetch
        assert fetch is not None and self.server_url is not None
        prm = await discover_resource(fetch, self.server_url, challenge.resource_metadata if challenge else None)
        if prm is None:
            log.info("no protected resource metadata: treating %s as a 2025-03-26 server", self.server_url)
            metadata = await legacy_server(fetch, self.server_url)
            resource = self.server_url
            scopes_supported = None
        else:
            metadata = await discover_server(fetch, prm.issuer)
            resource = prm.resource
            scopes_supported = prm.scopes_supported

        if self._metadata is not None and self._metadata.issuer != metadata.issuer:
            log.info("the authorization server changed to %s: registering again", metadata.issuer)
            self._token = None
            self._client_info = None
            refresh = False
        if self._resource is not None and self._resource != resource:
            self._token = None
            refresh = False
        self._metadata = metadata
        self._resource = resource

        if scopes is None:
            if self.scopes is not None:
                scopes = list(self.scopes)
            elif challenge is not None and challenge.scope:
                scopes = challenge.scope
            elif scopes_supported:
                scopes = list(scopes_supported)
            else:
                scopes = []

        stored = await self.store.load(metadata.issuer, resource)
        if stored is not None:
            if self._client_info is None and isinstance(stored.get("client"), dict):
                client = stored["client"]
                if client.get("issuer") == metadata.issuer:
                    self._client_info = client
            tokens = stored.get("tokens")
            if self._token is None and isinstance(tokens, dict) and isinstance(tokens.get("access_token"), str):
                if not self._expired(tokens) and set(scopes) <= set(tokens.get("scope") or []):
                    self._use_token(tokens)
                    return
                if tokens.get("refresh_token"):
                    self._adopt_dpop_key(tokens)
                    self._token = tokens
                    refresh = True

        if refresh and self._token is not None and self._token.get("refresh_token"):
            if await self._try_refresh():
                return

        if self.grant is not None:
            await self._run_grant(self.grant, metadata, resource, scopes)
        else:
            await self._authorization_code(metadata, resource, self._with_offline(scopes, metadata))
        await self._save()

    def _with_offline(self, scopes: list[str], metadata: ServerMetadata) -> list[str]:
        if self.offline_access and "offline_access" in (metadata.get_list("scopes_supported") or []):
            if "offline_access" not in scopes:
                return [*scopes, "offline_access"]
        return scopes

    def _use_token(self, token: dict[str, Any]) -> None:
        self._adopt_dpop_key(token)
        self._token = token
        self._uses = 0

    def _adopt_dpop_key(self, token: Mapping[str, Any]) -> None:
        """Use the DPoP key a stored token is bound to."""
        pem = token.get("dpop_key")
        if isinstance(pem, str) and self.dpop is not False:
            try:
                self._dpop_key = load_private_key(pem)
            except ValueError:
                log.info("the stored DPoP key is unreadable: a new one will be made")

    @staticmethod
    def _expired(token: Mapping[str, Any]) -> bool:
        expires_at = token.get("expires_at")
        return isinstance(expires_at, (int, float)) and time.time() >= expires_at - EXPIRY_SKEW

    async def _save(self) -> None:
        if self._metadata is None or self._resource is None:
            return
        entry: dict[str, Any] = {}
        if self._token is not None:
            entry["tokens"] = self._token
        if self._client_info is not None:
            entry["client"] = self._client_info
        await self.store.save(self._metadata.issuer, self._resource, entry)

    # -- client identity -----------------------------------------------------

    async def _client(self, metadata: ServerMetadata, redirect_uri: str | None) -> dict[str, Any]:
        info = self._client_info
        if info is not None and info.get("issuer") == metadata.issuer:
            return info
        pre = self.preregistered
        if pre is not None and (pre.issuer is None or pre.issuer == metadata.issuer):
            info = {
                "issuer": metadata.issuer,
                "client_id": pre.client_id,
                "client_secret": pre.client_secret,
                "token_endpoint_auth_method": pre.token_endpoint_auth_method,
                "kind": "pre-registered",
            }
        elif self.client_metadata_url is not None and metadata.cimd_supported:
            info = {
                "issuer": metadata.issuer,
                "client_id": self.client_metadata_url,
                "token_endpoint_auth_method": "private_key_jwt" if self._private_key() is not None else "none",
                "kind": "metadata-document",
            }
        elif metadata.registration_endpoint is not None:
            info = await self._register(metadata, redirect_uri)
        else:
            mismatch = f" (the pre-registered client belongs to {pre.issuer!r})" if pre is not None else ""
            raise AuthError(
                "client registration",
                f"no client credentials for {metadata.issuer!r}{mismatch}, and it supports neither "
                "client ID metadata documents nor dynamic client registration",
            )
        self._client_info = info
        return info

    async def _register(self, metadata: ServerMetadata, redirect_uri: str | None) -> dict[str, Any]:
        step = "dynamic client registration"
        endpoint = metadata.registration_endpoint
        assert endpoint is not None and self._fetch is not None
        supported = metadata.get_list("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
        method = "none" if "none" in supported else next(
            (m for m in ("client_secret_basic", "client_secret_post") if m in supported), "client_secret_basic"
        )
        body: dict[str, Any] = {
            "client_name": self.client_name,
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
        }
        if redirect_uri is not None:
            body["redirect_uris"] = [redirect_uri]
            host = urlsplit(redirect_uri).hostname or ""
            body["application_type"] = "native" if is_loopback_host(host) else "web"
        else:
            body["application_type"] = "native"
        resp = await self._fetch.request("POST", endpoint, step, json=body)
        if resp.status not in (200, 201):
            error, text = resp.oauth_error()
            raise AuthError(step, f"{endpoint} refused the registration: {text}", error=error)
        doc = resp.json(step)
        client_id = doc.get("client_id")
        if not isinstance(client_id, str) or not client_id:
            raise AuthError(step, f"{endpoint} returned no client_id")
        secret = doc.get("client_secret")
        returned = doc.get("token_endpoint_auth_method")
        return {
            "issuer": metadata.issuer,
            "client_id": client_id,
            "client_secret": secret if isinstance(secret, str) else None,
            "token_endpoint_auth_method": returned if isinstance(returned, str) else None,
            "kind": "registered",
        }

    def _private_key(self) -> PrivateKey | None:
        pre = self.preregistered
        if pre is None or pre.private_key is None:
            return None
        return load_private_key(pre.private_key) if isinstance(pre.private_key, str) else pre.private_key

    def _authenticate(
        self,
        form: dict[str, str],
        headers: dict[str, str],
        metadata: ServerMetadata,
        client_id: str | None,
        secret: str | None,
        method: str | None,
        key: PrivateKey | None = None,
        algorithm: str | None = None,
    ) -> None:
        """Client authentication at the token endpoint (OAuth 2.1 section 2.4)."""
        if client_id is None:
            return
        if method is None:
            supported = metadata.get_list("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
            if key is not None:
                method = "private_key_jwt"
            elif secret:
                method = next(
                    (m for m in ("client_secret_basic", "client_secret_post", "none") if m in supported), "client_secret_basic"
                )
            else:
                method = "none"
        if method == "client_secret_basic" and secret:
            raw = f"{_form_quote(client_id)}:{_form_quote(secret)}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(raw).decode("ascii")
        elif method == "client_secret_post" and secret:
            form["client_id"] = client_id
            form["client_secret"] = secret
        elif method == "private_key_jwt":
            if key is None:
                raise AuthError("token request", "private_key_jwt needs a private key (PreRegisteredClient.private_key)")
            form["client_id"] = client_id
            form["client_assertion_type"] = CLIENT_ASSERTION_TYPE
            form["client_assertion"] = client_assertion(key, client_id, metadata.issuer, algorithm=algorithm)
        else:
            form["client_id"] = client_id

    # -- authorization code ---------------------------------------------------

    async def _authorization_code(self, metadata: ServerMetadata, resource: str, scopes: list[str]) -> None:
        fetch = self._fetch
        assert fetch is not None
        endpoint = metadata.authorization_endpoint
        if endpoint is None or metadata.token_endpoint is None:
            raise AuthError("authorization server metadata", f"{metadata.issuer!r} lists no authorization or token endpoint")
        if metadata.metadata_url is not None and "S256" not in (metadata.get_list("code_challenge_methods_supported") or []):
            raise AuthError(
                "authorization server metadata",
                f"{metadata.issuer!r} does not list S256 in code_challenge_methods_supported: PKCE cannot be verified, refused",
            )
        check_authorization_url(endpoint)
        fetch.guard.check_syntax(endpoint, "authorization request")
        redirect_uri = await self.redirect_handler.redirect_uri()
        client = await self._client(metadata, redirect_uri)

        verifier = code_verifier()
        state = new_state()
        params = {
            "response_type": "code",
            "client_id": client["client_id"],
            "redirect_uri": redirect_uri,
            "state": state,
            "code_challenge": code_challenge(verifier),
            "code_challenge_method": "S256",
            "resource": resource,
        }
        if scopes:
            params["scope"] = " ".join(scopes)
        url = endpoint + ("&" if "?" in endpoint else "?") + urlencode(params)
        self._requested = list(scopes)
        answer = await self.redirect_handler.authorize(url, fetch)

        step = "authorization response"
        iss = answer.get("iss")
        if iss is not None and iss != metadata.issuer:
            raise AuthError(step, f"iss {iss!r} is not the recorded issuer {metadata.issuer!r} (RFC 9207): refused")
        if iss is None and metadata.iss_supported:
            raise AuthError(step, f"{metadata.issuer!r} advertises the iss parameter but the response has none (RFC 9207): refused")
        if not same_state(state, answer.get("state")):
            raise AuthError(step, "the state parameter does not match the request: refused")
        if "error" in answer:
            desc = (answer.get("error_description") or "")[:200]
            raise AuthError(step, f"the authorization server answered {answer['error']!r}" + (f": {desc}" if desc else ""), error=answer["error"])
        code = answer.get("code")
        if not code:
            raise AuthError(step, "no authorization code in the response")

        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": verifier,
            "resource": resource,
        }
        await self._token_request(metadata, form, client=client, scopes=scopes)

    # -- other grants -----------------------------------------------------------

    async def _run_grant(self, grant: Grant, metadata: ServerMetadata, resource: str, scopes: list[str]) -> None:
        wanted = grant.scopes if grant.scopes is not None else scopes
        self._requested = list(wanted)
        if isinstance(grant, ClientCredentialsGrant):
            form = {"grant_type": "client_credentials", "resource": resource}
            if wanted:
                form["scope"] = " ".join(wanted)
            key = load_private_key(grant.private_key) if isinstance(grant.private_key, str) else grant.private_key
            await self._token_request(
                metadata, form, client_id=grant.client_id, secret=grant.client_secret,
                method="private_key_jwt" if key is not None else None, key=key, algorithm=grant.signing_algorithm,
                scopes=wanted,
            )
            return
        if isinstance(grant, JWTBearerGrant):
            form = {"grant_type": JWT_BEARER, "assertion": await resolve_token(grant.assertion), "resource": resource}
            if wanted:
                form["scope"] = " ".join(wanted)
            try:
                await self._token_request(metadata, form, client_id=grant.client_id, secret=grant.client_secret, scopes=wanted)
            except AuthError as exc:
                self._grant_failed = exc  # final: never retried, never replaced by another grant
                raise
            return
        if isinstance(grant, EnterpriseGrant):
            jag = await self._token_exchange(grant, metadata, resource, wanted)
            form = {"grant_type": JWT_BEARER, "assertion": jag, "resource": resource}
            if wanted:
                form["scope"] = " ".join(wanted)
            await self._token_request(metadata, form, client_id=grant.client_id, secret=grant.client_secret, scopes=wanted)
            return
        raise TypeError(f"unknown grant {grant!r}")

    async def _token_exchange(self, grant: EnterpriseGrant, metadata: ServerMetadata, resource: str, scopes: list[str]) -> str:
        """RFC 8693 at the enterprise IdP: ID token in, ID-JAG out."""
        step = "token exchange at the identity provider"
        assert self._fetch is not None
        form = {
            "grant_type": TOKEN_EXCHANGE,
            "requested_token_type": ID_JAG,
            "audience": metadata.issuer,
            "resource": resource,
            "subject_token": await resolve_token(grant.id_token),
            "subject_token_type": ID_TOKEN,
        }
        if scopes:
            form["scope"] = " ".join(scopes)
        headers: dict[str, str] = {}
        if grant.idp_client_id is not None:
            if grant.idp_client_secret:
                raw = f"{_form_quote(grant.idp_client_id)}:{_form_quote(grant.idp_client_secret)}".encode()
                headers["Authorization"] = "Basic " + base64.b64encode(raw).decode("ascii")
            else:
                form["client_id"] = grant.idp_client_id
        resp = await self._fetch.request("POST", grant.idp_token_endpoint, step, data=form, headers=headers)
        if resp.status != 200:
            error, text = resp.oauth_error()
            raise AuthError(step, f"{grant.idp_token_endpoint} refused: {text}", error=error)
        doc = resp.json(step)
        token = doc.get("access_token")
        if doc.get("issued_token_type") != ID_JAG or not isinstance(token, str) or not token:
            raise AuthError(step, f"{grant.idp_token_endpoint} did not issue an ID-JAG")
        return token

    # -- token endpoint -------------------------------------------------------

    def _dpop(self) -> PrivateKey:
        if self._dpop_key is None:
            self._dpop_key = generate_key()
        return self._dpop_key

    def _use_dpop(self, metadata: ServerMetadata) -> bool:
        if self.dpop is True:
            return True
        if self.dpop is False:
            return False
        algs = metadata.get_list("dpop_signing_alg_values_supported") or []
        return default_algorithm(self._dpop()) in algs if algs else False

    async def _token_request(
        self,
        metadata: ServerMetadata,
        form: dict[str, str],
        *,
        client: dict[str, Any] | None = None,
        client_id: str | None = None,
        secret: str | None = None,
        method: str | None = None,
        key: PrivateKey | None = None,
        algorithm: str | None = None,
        scopes: list[str] | None = None,
    ) -> None:
        step = "token request"
        fetch = self._fetch
        endpoint = metadata.token_endpoint
        assert fetch is not None
        if endpoint is None:
            raise AuthError("authorization server metadata", f"{metadata.issuer!r} lists no token endpoint")
        if client is not None:
            client_id, secret, method = client["client_id"], client.get("client_secret"), client.get("token_endpoint_auth_method")
            if method == "private_key_jwt" or (method is None and self._private_key() is not None):
                key = self._private_key()
                algorithm = self.preregistered.signing_algorithm if self.preregistered else None
        use_dpop = self._use_dpop(metadata)
        resp: Response | None = None
        for _ in range(2):
            body = dict(form)
            headers: dict[str, str] = {}
            self._authenticate(body, headers, metadata, client_id, secret, method, key, algorithm)
            if use_dpop:
                headers["DPoP"] = dpop_proof(self._dpop(), "POST", endpoint, nonce=self._nonces.get(_origin(endpoint)))
            resp = await fetch.request("POST", endpoint, step, data=body, headers=headers)
            nonce = resp.headers.get("dpop-nonce")
            if nonce:
                self._nonces[_origin(endpoint)] = nonce
            if resp.status == 400 and use_dpop and nonce and resp.oauth_error()[0] == "use_dpop_nonce":
                continue
            break
        assert resp is not None
        if resp.status != 200:
            error, text = resp.oauth_error()
            raise AuthError(step, f"{endpoint} refused ({form['grant_type']}): {text}", error=error)
        doc = resp.json(step)
        access = doc.get("access_token")
        token_type = doc.get("token_type")
        if not isinstance(access, str) or not access:
            raise AuthError(step, f"{endpoint} returned no access_token")
        if not isinstance(token_type, str) or token_type.lower() not in ("bearer", "dpop"):
            raise AuthError(step, f"{endpoint} returned token_type {token_type!r}; only Bearer and DPoP are supported")
        if token_type.lower() == "dpop" and not use_dpop:
            raise AuthError(step, f"{endpoint} returned a DPoP-bound token to a request without a DPoP proof")
        token: dict[str, Any] = {"access_token": access, "token_type": token_type}
        expires_in = doc.get("expires_in")
        if isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool) and expires_in > 0:
            token["expires_at"] = time.time() + float(expires_in)
        refresh = doc.get("refresh_token")
        if isinstance(refresh, str) and refresh:
            token["refresh_token"] = refresh
        elif form["grant_type"] == "refresh_token":
            token["refresh_token"] = form["refresh_token"]  # the old one stays valid unless rotated
        granted = doc.get("scope")
        token["scope"] = granted.split() if isinstance(granted, str) else list(scopes or [])
        if use_dpop:
            # the access token (and, for a public client, the refresh token) is bound to this
            # key: it is stored with them, or a new process could use neither
            token["dpop_key"] = private_key_pem(self._dpop())
        self._use_token(token)

    async def _try_refresh(self) -> bool:
        """The refresh_token grant (OAuth 2.1 section 4.3); False (and the token dropped) when refused."""
        token, metadata = self._token, self._metadata
        if token is None or metadata is None or self._resource is None or not token.get("refresh_token"):
            return False
        form = {"grant_type": "refresh_token", "refresh_token": token["refresh_token"], "resource": self._resource}
        client = self._client_info if self._client_info and self._client_info.get("issuer") == metadata.issuer else None
        try:
            if client is not None:
                await self._token_request(metadata, form, client=client, scopes=token.get("scope"))
            elif isinstance(self.grant, ClientCredentialsGrant):
                return False
            else:
                await self._token_request(metadata, form, scopes=token.get("scope"))
        except AuthError as exc:
            log.info("refresh refused (%s): authorizing again", exc.reason)
            self._token = None
            return False
        await self._save()
        return True

    # -- what the flow found (read-only; for display) ---------------------------

    @property
    def authorized(self) -> bool:
        """Whether the client holds an access token."""
        return self._token is not None

    @property
    def issuer(self) -> str | None:
        """The authorization server's issuer, once discovered."""
        return self._metadata.issuer if self._metadata is not None else None

    @property
    def resource(self) -> str | None:
        """The resource (RFC 8707) the tokens are for, once discovered."""
        return self._resource

    @property
    def granted_scopes(self) -> list[str]:
        """The scopes of the current access token (as granted, else as requested)."""
        return list(self._token.get("scope") or []) if self._token is not None else []

    def __repr__(self) -> str:
        state = "authorized" if self._token is not None else "not authorized"
        return f"<OAuthClient {self.server_url or '(unbound)'} {state}>"

