"""`OAuthProxy`: an authorization server facade in front of one upstream provider.

MCP clients register with it and authorize against it; it signs people in
at the upstream provider with its one pre-registered client and issues its
own tokens, bound to the MCP client, the resource and the user. The steps
live in modules of their own, each with its rules: the browser's side
(`_flow`), the token and revocation endpoints and the verifier (`_tokens`),
registration (`_registration`), client metadata documents (`_cimd`), the
pages (`_pages`), the sealed records (`_store`). This class holds the configuration and the records' life:

* routes (all under the issuer, which is an origin without a path):
  ``/.well-known/oauth-authorization-server`` (RFC 8414), ``/oauth/jwks``,
  ``/oauth/register``, ``/oauth/authorize``, ``/oauth/consent``,
  ``/oauth/callback``, ``/oauth/token``, ``/oauth/revoke`` and
  ``/oauth/consents`` (the signed-in user's approvals, revocable);
* `asgi` serves them beside an MCP endpoint (any other path goes to it);
  `resource_server` is the ``Server(auth=...)`` that accepts the proxy's
  tokens for that endpoint;
* consents are remembered per (user, client) for ``consent_lifetime``
  seconds; revoking one deletes every grant of that user and client, and
  with them their refresh tokens' and access tokens' validity, and revokes
  the upstream refresh token when the provider has a revocation endpoint;
* the browser's proxy session (a random cookie, its user in the store)
  lives ``session_lifetime`` seconds; it only serves to recognise a
  remembered consent and to list and revoke consents;
* records are kept on ``store`` (by default a `SQLiteStore` in the user's
  state directory; a `RedisStore` when several workers serve the origin) and
  sealed with ``key`` (bytes or text, 16 bytes at least; by default the first
  of ``WIREMCP_STATE_KEY``); without one a random key is made and the records
  do not survive a restart. The access tokens are signed with
  ``signing_key``, by default a P-256 key derived from ``key`` (so that
  every worker given the same key signs alike), or a fresh one when no key
  was configured.
"""

from __future__ import annotations

import logging
import os
import secrets
import time
from typing import TYPE_CHECKING, Any, Iterable

from .._jose import PrivateKey, default_algorithm, generate_key, jwk_thumbprint, public_jwk, sign_jwt
from ..server._discovery import canonical_uri
from ._config import Upstream
from ._http import BadRequest, Receive, Request, Scope, Send, cookie, error_page_answer, html_answer, json_answer, read_request, redirect
from ._pages import consents_page
from ._store import SealedStore, derive

if TYPE_CHECKING:
    from ...server.storage import KeyValueStore
    from ..server import ResourceServer

__all__ = ["OAuthProxy"]

METADATA_PATH = "/.well-known/oauth-authorization-server"
SESSION_COOKIE = "wmp_session"
ASGIApp = Any


class OAuthProxy:
    """An OAuth authorization server for MCP clients, signing people in at ``upstream`` (see the module docs).

    >>> # proxy = OAuthProxy(upstream, issuer="https://mcp.example.com", resource="https://mcp.example.com/mcp",
    >>> #                    scopes=["notes:read"], store=SQLiteStore("proxy.sqlite3"), key=SECRET)
    """

    log = logging.getLogger("wiremcp.auth.proxy")

    def __init__(
        self,
        upstream: Upstream,
        *,
        issuer: str,
        resource: str,
        scopes: Iterable[str],
        store: KeyValueStore | None = None,
        key: bytes | str | None = None,
        signing_key: PrivateKey | None = None,
        server_name: str = "this MCP server",
        access_token_lifetime: int = 300,
        refresh_token_lifetime: int = 30 * 86400,
        consent_lifetime: int = 180 * 86400,
        session_lifetime: int = 86400,
        client_metadata_documents: bool = True,
        client_metadata_hosts: Iterable[str] | None = None,
        http_client: Any = None,
    ) -> None:
        from ..server._discovery import check_fetchable

        check_fetchable(issuer, "issuer")
        if issuer.rstrip("/") != issuer or issuer.count("/") != 2:
            raise ValueError(f"the proxy's issuer is an origin without a path or trailing slash, not {issuer!r}")
        self.upstream = upstream
        self.issuer = issuer
        self.resource = canonical_uri(resource)
        self.scopes = tuple(dict.fromkeys(scopes))
        if not self.scopes:
            raise ValueError("scopes: name at least one scope the MCP server's tools use")
        self.server_name = server_name
        self.secure = issuer.startswith("https:")
        self.callback_uri = issuer + "/oauth/callback"
        self.access_token_lifetime = access_token_lifetime
        self.refresh_token_lifetime = refresh_token_lifetime
        self.consent_lifetime = consent_lifetime
        self.session_lifetime = session_lifetime
        if store is None:
            from ...server.storage import SQLiteStore

            store = SQLiteStore()
        secret, configured = _secret(key)
        self.store = SealedStore(store, secret)
        self._csrf_key = derive(secret, b"consents csrf")
        if signing_key is None:
            signing_key = _derived_key(secret) if configured else generate_key()
        self.signing_key: PrivateKey = signing_key
        self.algorithm = default_algorithm(self.signing_key)
        self._jwk = public_jwk(self.signing_key)
        self.kid = jwk_thumbprint(self._jwk)
        #: Whether clients may be identified by a metadata document's URL (`_cimd`), and from which hosts (None: any).
        self.client_metadata_documents = client_metadata_documents
        self.client_metadata_hosts = (
            frozenset(h.lower() for h in client_metadata_hosts) if client_metadata_hosts is not None else None
        )
        self._http: Any = http_client
        self._fetcher: Any = None

    # -- what the MCP server uses -------------------------------------------

    def resource_server(self, *, required_scopes: Iterable[str] = (), leeway: float = 60.0, **options: Any) -> ResourceServer:
        """The ``Server(auth=...)`` accepting this proxy's tokens (`ProxyVerifier`) for ``resource``.

        ``leeway``: seconds of clock skew on ``exp``; ``options`` go to `ResourceServer`.
        """
        from ..server import JWTVerifier, ResourceServer
        from ._tokens import ProxyVerifier

        verifier = JWTVerifier(issuer=self.issuer, resource=self.resource, jwks_uri=self.issuer + "/oauth/jwks",
                               require_at_jwt=True, leeway=leeway)
        return ResourceServer(
            ProxyVerifier(self, verifier), resource=self.resource, authorization_servers=[self.issuer],
            scopes_supported=self.scopes, required_scopes=required_scopes, dpop=False, authorization_server_app=self,
            **options,
        )

    def metadata(self) -> dict[str, Any]:
        """The authorization server metadata (RFC 8414)."""
        base = self.issuer + "/oauth/"
        return {
            "issuer": self.issuer,
            "authorization_endpoint": base + "authorize",
            "token_endpoint": base + "token",
            "registration_endpoint": base + "register",
            "revocation_endpoint": base + "revoke",
            "jwks_uri": base + "jwks",
            "scopes_supported": list(self.scopes),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
            "revocation_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
            "authorization_response_iss_parameter_supported": True,
            "client_id_metadata_document_supported": self.client_metadata_documents,
        }

    def asgi(self, app: ASGIApp) -> ASGIApp:
        """An ASGI app serving the proxy's routes and, on every other path, ``app`` (the MCP endpoint)."""

        async def serve(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http" and (scope["path"] == METADATA_PATH or scope["path"].startswith("/oauth/")):
                await self(scope, receive, send)
            else:
                await app(scope, receive, send)

        return serve

    def handles(self, path: str) -> bool:
        """Whether ``path`` is one of the proxy's routes (`MCPApp` serves them with ``Server(auth=proxy.resource_server())``,
        so ``wiremcp run`` serves the proxy too)."""
        return path == METADATA_PATH or path.startswith("/oauth/")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from . import _flow, _tokens

        path, method = scope["path"], scope["method"]
        if path == METADATA_PATH or path == "/oauth/jwks":
            if method not in ("GET", "HEAD"):
                return await json_answer(send, 405, {"error": "method_not_allowed"}, [(b"allow", b"GET")])
            body = self.metadata() if path == METADATA_PATH else self.jwks()
            return await json_answer(send, 200, body, [(b"access-control-allow-origin", b"*")])
        routes = {
            ("GET", "/oauth/authorize"): _flow.authorize,
            ("POST", "/oauth/consent"): _flow.consent,
            ("GET", "/oauth/callback"): _flow.callback,
            ("POST", "/oauth/token"): _tokens.token_endpoint,
            ("POST", "/oauth/revoke"): _tokens.revocation_endpoint,
            ("POST", "/oauth/register"): _register,
            ("GET", "/oauth/consents"): _consents,
            ("POST", "/oauth/consents"): _revoke_consent,
        }
        handler = routes.get((method, path))
        if handler is None:
            known = any(p == path for _, p in routes)
            return await json_answer(send, 405 if known else 404, {"error": "method_not_allowed" if known else "not_found"})
        try:
            request = await read_request(scope, receive)
        except BadRequest as exc:
            return await json_answer(send, 400, {"error": "invalid_request", "error_description": str(exc)})
        await handler(self, request, send)

    # -- keys and tokens ----------------------------------------------------

    def jwks(self) -> dict[str, Any]:
        """The public key set of the access tokens' signing key."""
        return {"keys": [{**self._jwk, "kid": self.kid, "alg": self.algorithm, "use": "sig"}]}

    def mint(self, *, user: str, client_id: str, scopes: list[str], grant_id: str) -> str:
        """An access token (RFC 9068) for ``user`` through ``client_id``, for the resource, under a grant."""
        claims = {"iss": self.issuer, "sub": user, "aud": self.resource, "client_id": client_id,
                  "scope": " ".join(scopes), "gid": grant_id}
        headers = {"typ": "at+jwt", "kid": self.kid}
        return sign_jwt(self.signing_key, claims, algorithm=self.algorithm, headers=headers, lifetime=self.access_token_lifetime)

    def own_claims(self, token: str) -> dict[str, Any] | None:
        """The claims of one of this proxy's access tokens (signature checked, expiry not), or None."""
        import jwt

        try:
            claims = jwt.decode(token, self.signing_key.public_key(), algorithms=[self.algorithm],
                                audience=self.resource, issuer=self.issuer, options={"verify_exp": False})
        except jwt.PyJWTError:
            return None
        return claims if isinstance(claims, dict) else None

    # -- records ------------------------------------------------------------

    async def client(self, client_id: str) -> dict[str, Any] | None:
        """The client ``client_id``: registered here, or named by its metadata document's URL; or None."""
        if self.client_metadata_documents and client_id.startswith("https://"):
            from ._cimd import document_client

            return await document_client(self, client_id)
        return await self.store.get("client", client_id) if client_id else None

    def fetcher(self) -> Any:
        """The SSRF-guarded fetcher of client metadata documents (`wiremcp.auth`'s own)."""
        if self._fetcher is None:
            from .._http import Fetcher
            from .._ssrf import URLGuard

            self._fetcher = Fetcher(URLGuard(self.issuer), http_client=self._http, max_body=65536)
        return self._fetcher

    def cookie_name(self, name: str) -> str:
        """``name`` with the ``__Host-`` prefix on an https issuer (bound to this origin, Secure, Path=/)."""
        return "__Host-" + name if self.secure else name

    async def session_user(self, request: Request) -> str | None:
        """The user of the browser's proxy session, or None."""
        sid = request.cookies.get(self.cookie_name(SESSION_COOKIE))
        record = await self.store.get("session", sid) if sid else None
        return record["user"] if record is not None else None

    async def new_session(self, user: str) -> tuple[bytes, bytes]:
        """A proxy session for ``user``: the Set-Cookie header."""
        sid = secrets.token_urlsafe(32)
        await self.store.put("session", (sid,), {"user": user}, ttl=self.session_lifetime)
        return cookie(self.cookie_name(SESSION_COOKIE), sid, secure=self.secure, max_age=self.session_lifetime)

    async def has_consent(self, user: str, client_id: str, scopes: list[str]) -> bool:
        """Whether ``user`` approved ``client_id`` for every one of ``scopes``."""
        record = await self.store.get("consent", user, client_id)
        return record is not None and set(scopes) <= set(record["scopes"])

    async def remember_consent(self, user: str, pending: dict[str, Any]) -> None:
        """Record ``user``'s approval of the pending authorization's client and scopes (added to earlier ones)."""
        previous = await self.store.get("consent", user, pending["client_id"])
        scopes = list(dict.fromkeys([*(previous or {}).get("scopes", []), *pending["scopes"]]))
        record = {"client_id": pending["client_id"], "client_name": pending.get("client_name"), "scopes": scopes,
                  "redirect_uri": pending["redirect_uri"], "at": int(time.time())}
        await self.store.put("consent", (user, pending["client_id"]), record, ttl=self.consent_lifetime)

    async def consents(self, user: str) -> list[dict[str, Any]]:
        """``user``'s consents, oldest first."""
        out = []
        for slot in await self.store.slots("consent", user):
            record = await self.store.get_slot(slot)
            if record is not None:
                out.append(record)
        return sorted(out, key=lambda r: r["at"])

    async def revoke_consent(self, user: str, client_id: str) -> None:
        """Forget ``user``'s consent to ``client_id`` and revoke every grant between them."""
        await self.store.delete("consent", user, client_id)
        for slot in await self.store.slots("user-grant", user, client_id):
            record = await self.store.get_slot(slot)
            if record is not None:
                await self.revoke_grant(record["grant_id"])
            await self.store.delete_slot(slot)

    async def new_grant(self, user: str, pending: dict[str, Any], upstream_tokens: dict[str, Any]) -> str:
        """A new grant for ``user`` and the pending authorization's client, keeping the upstream tokens; its id."""
        grant_id = secrets.token_urlsafe(18)
        record = {"user": user, "client_id": pending["client_id"], "scopes": pending["scopes"], "upstream": upstream_tokens}
        await self.store.put("grant", (grant_id,), record, ttl=self.refresh_token_lifetime)
        await self.store.put("user-grant", (user, pending["client_id"], grant_id), {"grant_id": grant_id},
                             ttl=self.refresh_token_lifetime)
        return grant_id

    async def revoke_grant(self, grant_id: str) -> None:
        """End a grant: its tokens are refused from now on; the upstream refresh token is revoked if possible."""
        grant = await self.store.take("grant", grant_id)
        if grant is None:
            return
        self.log.info("revoked grant of client %s", grant["client_id"])
        refresh = grant.get("upstream", {}).get("refresh_token")
        if refresh and self.upstream.revocation_endpoint:
            try:
                await self._post_upstream(self.upstream.revocation_endpoint,
                                          {"token": refresh, "token_type_hint": "refresh_token"})
            except Exception as exc:  # revocation upstream is best effort; the grant is gone here
                self.log.warning("revoking the upstream refresh token failed: %s", exc)

    async def upstream_tokens(self, grant_id: str) -> dict[str, Any] | None:
        """The upstream tokens kept for a grant (for the server's own calls upstream), or None."""
        grant = await self.store.get("grant", grant_id)
        return grant["upstream"] if grant is not None else None

    # -- upstream -----------------------------------------------------------

    async def _post_upstream(self, url: str, form: dict[str, str]) -> Any:
        import httpx

        if self._http is None:
            self._http = httpx.AsyncClient(timeout=15)
        up = self.upstream
        if up.token_auth_method == "client_secret_post":
            return await self._http.post(url, data={**form, "client_id": up.client_id, "client_secret": up.client_secret},
                                         headers={"accept": "application/json"})
        return await self._http.post(url, data=form, auth=(up.client_id, up.client_secret),
                                     headers={"accept": "application/json"})

    async def exchange_upstream(self, code: str, verifier: str) -> tuple[str, dict[str, Any]]:
        """The upstream code exchanged (with the proxy's secret and PKCE verifier): (user, upstream tokens)."""
        up = self.upstream
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": self.callback_uri, "code_verifier": verifier}
        if up.resource is not None:
            form["resource"] = up.resource
        response = await self._post_upstream(up.token_endpoint, form)
        body = response.json()
        if response.status_code != 200 or not isinstance(body, dict) or not isinstance(body.get("access_token"), str):
            raise ValueError(f"the upstream token endpoint answered {response.status_code}")
        identity: dict[str, Any] | None = None
        if up.identify is not None:
            who = await up.identify(body)
            subject, identity = who.subject, who.record()
        else:
            assert up.verifier is not None
            verified = await up.verifier.verify(body["access_token"], dpop=None, method="GET", url=up.resource or up.issuer)
            subject = verified.subject or ""
        if not subject:
            raise ValueError("the upstream access token names no subject")
        expires_in = body.get("expires_in")
        tokens = {
            "access_token": body["access_token"],
            "refresh_token": body.get("refresh_token"),
            "scope": body.get("scope"),
            "expires_at": time.time() + expires_in if isinstance(expires_in, (int, float)) else None,
        }
        if identity is not None:
            tokens["identity"] = identity
        return subject, tokens

    async def aclose(self) -> None:
        """Close the HTTP clients (upstream, client metadata documents)."""
        if self._fetcher is not None:
            await self._fetcher.aclose()
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def html(self, send: Send, status: int, page: str, extra: list[tuple[bytes, bytes]]) -> None:
        """Answer with an HTML page (the headers of `_http`)."""
        await html_answer(send, status, page, extra)

    def consents_csrf(self, sid: str) -> str:
        """The CSRF token of the consents page for the proxy session ``sid``."""
        import hashlib
        import hmac

        return hmac.new(self._csrf_key, sid.encode(), hashlib.sha256).hexdigest()


def _secret(key: bytes | str | None) -> tuple[bytes, bool]:
    """The proxy's secret, and whether it was configured (else a random one for this process)."""
    if key is None:
        env = os.environ.get("WIREMCP_STATE_KEY")
        if env:
            return env.split(",")[0].strip().encode(), True
        OAuthProxy.log.warning("the OAuth proxy has no key (key= or WIREMCP_STATE_KEY): its records last this process only")
        return os.urandom(32), False
    return (key.encode() if isinstance(key, str) else key), True


def _derived_key(secret: bytes) -> PrivateKey:
    """The P-256 signing key derived from the secret: every worker given the same secret signs alike."""
    from cryptography.hazmat.primitives.asymmetric import ec

    order = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551  # of P-256
    wide = derive(secret, b"signing key 1") + derive(secret, b"signing key 2")  # 512 bits: no modulo bias to speak of
    return ec.derive_private_key(int.from_bytes(wide, "big") % (order - 1) + 1, ec.SECP256R1())


async def _register(proxy: OAuthProxy, request: Request, send: Send) -> None:
    from ._registration import RegistrationError, register

    if request.json is None:
        return await json_answer(send, 400, {"error": "invalid_client_metadata", "error_description": "send the metadata as JSON"})
    try:
        record, response = register(request.json)
    except RegistrationError as exc:
        return await json_answer(send, 400, {"error": exc.code, "error_description": str(exc)})
    await proxy.store.put("client", (record["client_id"],), record, ttl=None)
    await json_answer(send, 201, response)


async def _consents(proxy: OAuthProxy, request: Request, send: Send) -> None:
    sid = request.cookies.get(proxy.cookie_name(SESSION_COOKIE), "")
    user = await proxy.session_user(request)
    if user is None:
        return await error_page_answer(send, 401, "Not signed in", "Sign in through an application first.")
    page = consents_page(user=user, consents=await proxy.consents(user), csrf=proxy.consents_csrf(sid))
    await proxy.html(send, 200, page, [])


async def _revoke_consent(proxy: OAuthProxy, request: Request, send: Send) -> None:
    import hmac

    sid = request.cookies.get(proxy.cookie_name(SESSION_COOKIE), "")
    user = await proxy.session_user(request)
    if user is None or not hmac.compare_digest(request.form.get("csrf", ""), proxy.consents_csrf(sid)):
        return await error_page_answer(send, 403, "Not allowed", "This request did not come from your consents page.")
    await proxy.revoke_consent(user, request.form.get("client_id", ""))
    await redirect(send, proxy.issuer + "/oauth/consents")
