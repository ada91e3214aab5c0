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
* **logout** (`OAuthClient.logout`): the tokens of the server are revoked
  (RFC 7009, `_revocation`) where the authorization server names a
  ``revocation_endpoint``, the client authenticating as at the token
  endpoint; then they are forgotten, here and in the store, even when
  revocation failed (the failure is returned, one line per entry);
* **limits**: one authorization at a time (a lock); a fresh token refused
  again on its first use is tried at most ``max_authorizations`` times in a
  row; a failed JWT-bearer grant is never retried.

The steps live in modules of their own, each with its rules: discovery
(`_discovery`), the client's identity (`_registration`), the authorization
code (`_code_flow`), the other grants (`_grant_requests`), the token
endpoint (`_token_endpoint`), DPoP (`_dpop`), revocation (`_revocation`); this class holds the state
of one flow and runs it in order.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any, Literal
from urllib.parse import urlsplit

from ._challenge import Challenge, bearer_challenge
from ._code_flow import authorization_code, authorization_endpoint
from ._discovery import ServerMetadata, discover_resource, discover_server, legacy_server, resource_matches
from ._dpop import DPoPKey
from ._errors import AuthError
from ._grant_requests import grant_client, grant_request
from ._grants import ClientCredentialsGrant, Grant, JWTBearerGrant, PreRegisteredClient
from ._http import DEFAULT_MAX_BODY, DEFAULT_TIMEOUT, Fetcher
from ._redirect import HeadlessRedirect, RedirectHandler
from ._registration import identify, private_key
from ._revocation import Revocation, revoke_tokens
from ._ssrf import Resolver, URLGuard
from ._storage import MemoryTokenStore, TokenStore
from ._token_endpoint import NO_CLIENT, TokenClient, expired, token_request

__all__ = ["OAuthClient"]

log = logging.getLogger("wiremcp.auth")


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
        self._dpop = DPoPKey()
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
        if expired(token) and token.get("refresh_token"):
            async with self._lock:
                if self._token is token:
                    await self._try_refresh()
            token = self._token
            if token is None:
                return {}
        self._uses += 1
        access = token["access_token"]
        if token.get("token_type", "bearer").lower() == "dpop":
            proof = self._dpop.proof(method, url, access)
            return {"Authorization": f"DPoP {access}", "DPoP": proof}
        return {"Authorization": f"Bearer {access}"}

    async def on_response(self, status: int, headers: Mapping[str, str], url: str) -> bool:
        """Handle a 401/403 (authorize, step up) or note a DPoP nonce; True: retry the request once."""
        self._bind(url)
        nonce = headers.get("dpop-nonce") or headers.get("DPoP-Nonce")
        if nonce:
            self._dpop.note_nonce(url, nonce)
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

    # -- logging out -----------------------------------------------------------

    async def logout(self, server_url: str | None = None) -> list[Revocation]:
        """Log out of an MCP server: revoke its tokens (RFC 7009) where the authorization server
        offers it, then forget them, here and in the store, whether or not revocation worked.

        The entries: the one this client uses, if any, and every stored entry whose resource is
        ``server_url`` (default: the server this client was used with) or a parent path of it,
        when the store lists its keys (the three stores here do). One `Revocation` per entry; a
        failure to revoke is its ``problem`` (one line), never raised."""
        url = server_url or self.server_url
        if url is None:
            raise ValueError("logout needs the MCP server's URL: this client has not been used yet")
        fetch = self._bind(url)
        async with self._lock:
            keys: list[tuple[str, str]] = []
            if self._metadata is not None and self._resource is not None:
                keys.append((self._metadata.issuer, self._resource))
            listed = getattr(self.store, "keys", None)
            if listed is not None:
                keys += [key for key in await listed() if resource_matches(key[1], url) and key not in keys]
            outcomes = [await self._logout_one(fetch, issuer, resource) for issuer, resource in keys]
            self._token = None
            self._uses = 0
        return outcomes

    async def _logout_one(self, fetch: Fetcher, issuer: str, resource: str) -> Revocation:
        outcome = Revocation(issuer, resource)
        entry = await self.store.load(issuer, resource) or {}
        tokens, client = entry.get("tokens"), entry.get("client")
        current = self._metadata is not None and self._metadata.issuer == issuer
        if current and resource == self._resource and self._token is not None:
            tokens, client = self._token, self._client_info
        try:
            if isinstance(tokens, dict):
                metadata = self._metadata if current and self._metadata is not None else await discover_server(fetch, issuer)
                await revoke_tokens(fetch, metadata, tokens, self._revoker(issuer, client), outcome)
        except AuthError as exc:
            outcome.problem = f"{exc.step}: {exc.reason}"
        finally:
            await self.store.delete(issuer, resource)
        return outcome

    def _revoker(self, issuer: str, client: Any) -> TokenClient:
        """Who asks ``issuer`` to revoke: the client the tokens were issued to, as it authenticated for them."""
        if isinstance(client, dict) and client.get("issuer") == issuer and isinstance(client.get("client_id"), str):
            return self._sender(client)
        if self.grant is not None:
            return grant_client(self.grant)
        return NO_CLIENT

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
                if not expired(tokens) and set(scopes) <= set(tokens.get("scope") or []):
                    self._use_token(tokens)
                    return
                if tokens.get("refresh_token"):
                    self._dpop.adopt(tokens, self.dpop)
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
        self._dpop.adopt(token, self.dpop)
        self._token = token
        self._uses = 0

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
        assert self._fetch is not None
        info = await identify(
            self._fetch, metadata, redirect_uri, preregistered=self.preregistered,
            client_metadata_url=self.client_metadata_url, client_name=self.client_name,
        )
        self._client_info = info
        return info

    # -- the grants -------------------------------------------------------------

    async def _authorization_code(self, metadata: ServerMetadata, resource: str, scopes: list[str]) -> None:
        fetch = self._fetch
        assert fetch is not None
        endpoint = authorization_endpoint(metadata, fetch)
        redirect_uri = await self.redirect_handler.redirect_uri()
        client = await self._client(metadata, redirect_uri)
        self._requested = list(scopes)
        form = await authorization_code(
            self.redirect_handler, fetch, metadata, endpoint, client["client_id"], redirect_uri, resource, scopes
        )
        await self._token_request(metadata, form, client=client, scopes=scopes)

    async def _run_grant(self, grant: Grant, metadata: ServerMetadata, resource: str, scopes: list[str]) -> None:
        assert self._fetch is not None
        wanted = grant.scopes if grant.scopes is not None else scopes
        self._requested = list(wanted)
        form, sender = await grant_request(grant, self._fetch, metadata, resource, wanted)
        try:
            await self._token_request(metadata, form, sender=sender, scopes=wanted)
        except AuthError as exc:
            if isinstance(grant, JWTBearerGrant):
                self._grant_failed = exc  # final: never retried, never replaced by another grant
            raise

    # -- token endpoint -------------------------------------------------------

    async def _token_request(
        self,
        metadata: ServerMetadata,
        form: dict[str, str],
        *,
        client: dict[str, Any] | None = None,
        sender: TokenClient = NO_CLIENT,
        scopes: list[str] | None = None,
    ) -> None:
        """A token request by ``client`` (an identity of `_registration`) or ``sender``; the token it gets is used."""
        fetch = self._fetch
        assert fetch is not None
        if metadata.token_endpoint is None:
            raise AuthError("authorization server metadata", f"{metadata.issuer!r} lists no token endpoint")
        if client is not None:
            sender = self._sender(client)
        use_dpop = self._dpop.wanted(self.dpop, metadata)
        self._use_token(await token_request(fetch, metadata, form, sender, self._dpop, use_dpop, scopes))

    def _sender(self, client: Mapping[str, Any]) -> TokenClient:
        """How ``client`` (an identity of `_registration`) authenticates at the token endpoint."""
        method = client.get("token_endpoint_auth_method")
        key = algorithm = None
        if method == "private_key_jwt" or (method is None and private_key(self.preregistered) is not None):
            key = private_key(self.preregistered)
            algorithm = self.preregistered.signing_algorithm if self.preregistered else None
        return TokenClient(client["client_id"], client.get("client_secret"), method, key, algorithm)

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
