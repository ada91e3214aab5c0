"""The browser's side of the proxy: authorize, consent, the upstream callback.

Rules it keeps (security_best_practices.mdx, "Confused Deputy Problem"):

* **the client and its redirect URI first**: an unknown ``client_id`` or a
  ``redirect_uri`` that is not exactly one the client registered (string
  equality, no normalisation) gets an error page, never a redirect;
* then the request itself (its errors go back to the redirect URI, with
  ``state`` and ``iss``, RFC 9207): ``response_type=code``; PKCE with S256
  (a 43-character challenge); scopes within the proxy's; ``resource``, when
  given, naming the MCP server (RFC 8707);
* **consent per user and client before going upstream**: the consent page
  (`_pages`) is shown unless the browser's proxy session belongs to a user
  who already approved this client for these scopes. The approval is a POST
  carrying the authorization's id and a CSRF token, from the browser that
  was shown the page (a cookie set with the page, whose SHA-256 the pending
  record keeps). A remembered consent is checked again once the upstream
  provider says who signed in: a consent of one user never covers another;
* **state bound to the browser, only after consent**: the upstream
  ``state`` and the cookie that binds it to the browser (its SHA-256 kept
  server-side) are made when the browser is sent upstream, once consent is
  given, never before (security_best_practices.mdx, "OAuth State Parameter
  Validation"); the callback must come with that cookie. A ``state``
  replayed from another browser is refused and does not consume the pending
  sign-in. Cookies are ``__Host-`` prefixed on an https issuer;
* **upstream**: the proxy's own client id, its callback, a fresh ``state``
  and a fresh PKCE S256 pair; the callback's state is single use (ten
  minutes at most); the code is exchanged with the proxy's secret and the
  verifier, and the access token verified to learn the user
  (`Upstream.verifier`);
* **the code for the MCP client**: single use, 60 seconds, bound to the
  client, the redirect URI, the PKCE challenge, the scopes, the resource,
  the user and a new grant (which keeps the upstream tokens).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

from .._pkce import b64url
from ..server._discovery import canonical_uri
from ._http import Request, Send, cookie, error_page_answer, redirect
from ._pages import consent_page

if TYPE_CHECKING:
    from ._proxy import OAuthProxy

__all__ = ["authorize", "consent", "callback", "with_params", "browser_hash"]

_CHALLENGE = re.compile(r"[A-Za-z0-9\-._~]{43}")
PENDING_TTL = 600
CODE_TTL = 60


def with_params(uri: str, params: dict[str, str]) -> str:
    """``uri`` with ``params`` added to its query."""
    return uri + ("&" if urlsplit(uri).query else "?") + urlencode(params)


def browser_hash(value: str | None) -> str:
    return hashlib.sha256((value or "").encode()).hexdigest()


def _bound(request: Request, pending: dict[str, Any]) -> bool:
    """Whether ``request`` comes from the browser that started ``pending``."""
    value = request.cookies.get(pending["cookie"])
    return value is not None and hmac.compare_digest(browser_hash(value), pending["browser"])


async def _to_client(proxy: OAuthProxy, send: Send, pending: dict[str, Any], params: dict[str, str],
                     extra: list[tuple[bytes, bytes]] | None = None) -> None:
    answer = dict(params)
    if pending.get("state") is not None:
        answer["state"] = pending["state"]
    answer["iss"] = proxy.issuer
    await redirect(send, with_params(pending["redirect_uri"], answer), extra)


async def authorize(proxy: OAuthProxy, request: Request, send: Send) -> None:
    q = request.query
    client = await proxy.client(q.get("client_id", ""))
    if client is None:
        return await error_page_answer(send, 400, "Unknown client", "This application is not registered here.")
    redirect_uri = q.get("redirect_uri")
    if redirect_uri is None or redirect_uri not in client["redirect_uris"]:
        return await error_page_answer(
            send, 400, "Wrong redirect URI", "The redirect URI is not one this application registered: nothing was sent to it."
        )
    pending: dict[str, Any] = {"client_id": client["client_id"], "redirect_uri": redirect_uri, "state": q.get("state")}
    problem = _request_problem(proxy, q, pending)
    if problem is not None:
        return await _to_client(proxy, send, pending, {"error": problem[0], "error_description": problem[1]})
    txn = secrets.token_urlsafe(24)
    binding = secrets.token_urlsafe(24)
    pending.update(consented=False, client_name=client.get("client_name"))
    user = await proxy.session_user(request)
    if user is not None and await proxy.has_consent(user, client["client_id"], pending["scopes"]):
        return await _upstream(proxy, send, pending, [])
    pending.update(cookie=proxy.cookie_name("wmp_tx_" + txn[:16]), browser=browser_hash(binding), csrf=secrets.token_urlsafe(24))
    set_binding = [cookie(pending["cookie"], binding, secure=proxy.secure, max_age=PENDING_TTL)]
    await proxy.store.put("txn", (txn,), pending, ttl=PENDING_TTL)
    page = consent_page(
        client=client, redirect_uri=redirect_uri, scopes=pending["scopes"], resource=pending["resource"], txn=txn,
        csrf=pending["csrf"], server_name=proxy.server_name, upstream=proxy.upstream.issuer,
        upstream_scopes=proxy.upstream.scopes,
    )
    await proxy.html(send, 200, page, set_binding)


def _request_problem(proxy: OAuthProxy, q: dict[str, str], pending: dict[str, Any]) -> tuple[str, str] | None:
    """The error for the client's redirect URI, or None; fills ``pending`` as it goes."""
    if q.get("response_type") != "code":
        return "unsupported_response_type", "response_type is code"
    if q.get("code_challenge_method") != "S256" or not _CHALLENGE.fullmatch(q.get("code_challenge", "")):
        return "invalid_request", "PKCE is required: code_challenge (43 characters) with code_challenge_method S256"
    pending["code_challenge"] = q["code_challenge"]
    asked = q.get("scope")
    scopes = list(dict.fromkeys(asked.split())) if asked else list(proxy.scopes)
    unknown = [s for s in scopes if s not in proxy.scopes and s != "offline_access"]
    if unknown:
        return "invalid_scope", "this server does not offer the scope " + " ".join(unknown)
    pending["scopes"] = [s for s in scopes if s != "offline_access"]
    resource = q.get("resource")
    try:
        if resource is not None and canonical_uri(resource) != proxy.resource:
            return "invalid_target", f"this authorization server issues tokens for {proxy.resource} only"
    except ValueError:
        return "invalid_target", "resource is not an absolute URI"
    pending["resource"] = proxy.resource
    return None


async def _upstream(proxy: OAuthProxy, send: Send, pending: dict[str, Any], extra: list[tuple[bytes, bytes]]) -> None:
    """Send the browser to the upstream provider with the proxy's own client, state and PKCE pair."""
    up = proxy.upstream
    state = secrets.token_urlsafe(24)
    verifier = secrets.token_urlsafe(48)
    binding = secrets.token_urlsafe(24)
    pending.update(upstream_verifier=verifier, cookie=proxy.cookie_name("wmp_st_" + state[:16]), browser=browser_hash(binding))
    pending.pop("csrf", None)
    await proxy.store.put("cb", (state,), pending, ttl=PENDING_TTL)
    extra = [*extra, cookie(pending["cookie"], binding, secure=proxy.secure, max_age=PENDING_TTL)]
    params = {
        "response_type": "code",
        "client_id": up.client_id,
        "redirect_uri": proxy.callback_uri,
        "state": state,
        "code_challenge": b64url(hashlib.sha256(verifier.encode()).digest()),
        "code_challenge_method": "S256",
    }
    if up.scopes:
        params["scope"] = " ".join(up.scopes)
    if up.resource is not None:
        params["resource"] = up.resource
    params.update({k: v for k, v in up.authorize_params.items() if k not in params})
    await redirect(send, with_params(up.authorization_endpoint, params), extra)


async def consent(proxy: OAuthProxy, request: Request, send: Send) -> None:
    form = request.form
    txn = form.get("txn", "")
    pending = await proxy.store.get("txn", txn) if txn else None
    if pending is None or not _bound(request, pending) or not hmac.compare_digest(form.get("csrf", ""), pending["csrf"]):
        return await error_page_answer(
            send, 400, "This approval is not valid", "It has expired, was used already, or was not started in this browser."
        )
    if not await proxy.store.delete("txn", txn):
        return await error_page_answer(send, 400, "This approval is not valid", "It was used already.")
    clear = [cookie(pending["cookie"], "", secure=proxy.secure, max_age=0)]
    if form.get("decision") != "approve":
        return await _to_client(proxy, send, pending, {"error": "access_denied", "error_description": "the user declined"}, clear)
    pending["consented"] = True
    await _upstream(proxy, send, pending, clear)


async def callback(proxy: OAuthProxy, request: Request, send: Send) -> None:
    q = request.query
    state = q.get("state", "")
    pending = await proxy.store.get("cb", state) if state else None
    if pending is None:
        return await error_page_answer(send, 400, "Unknown sign-in", "This sign-in has expired or was completed already.")
    if not _bound(request, pending):
        return await error_page_answer(
            send, 400, "Sign-in started elsewhere", "This sign-in was not started in this browser: it was refused."
        )
    if await proxy.store.take("cb", state) is None:
        return await error_page_answer(send, 400, "Unknown sign-in", "This sign-in was completed already.")
    if "iss" in q and q["iss"] != proxy.upstream.issuer:  # RFC 9207: the answer of another server
        return await error_page_answer(send, 400, "Unknown sign-in", "This answer comes from another server.")
    clear = [cookie(pending["cookie"], "", secure=proxy.secure, max_age=0)]
    if "code" not in q:
        return await _to_client(proxy, send, pending, {"error": "access_denied", "error_description": "the upstream sign-in did not complete"}, clear)
    try:
        user, upstream_tokens = await proxy.exchange_upstream(q["code"], pending["upstream_verifier"])
    except Exception as exc:  # any failure upstream ends this sign-in, with a generic error for the client
        proxy.log.warning("the upstream token exchange failed: %s", exc)
        return await _to_client(proxy, send, pending, {"error": "server_error", "error_description": "the upstream sign-in failed"}, clear)
    client_id = pending["client_id"]
    if pending["consented"]:
        await proxy.remember_consent(user, pending)
    elif not await proxy.has_consent(user, client_id, pending["scopes"]):
        return await _to_client(proxy, send, pending, {"error": "access_denied", "error_description": "no consent for this account"}, clear)
    allowed = (upstream_tokens.get("identity") or {}).get("scopes")
    if allowed is not None:  # the provider's roles or groups, mapped to scopes (`_identity.ClaimMap`)
        pending["scopes"] = [s for s in pending["scopes"] if s in allowed]
        if not pending["scopes"]:
            return await _to_client(proxy, send, pending, {"error": "access_denied", "error_description": "this account has none of the scopes asked"}, clear)
    grant_id = await proxy.new_grant(user, pending, upstream_tokens)
    code = secrets.token_urlsafe(32)
    record = {key: pending[key] for key in ("client_id", "redirect_uri", "code_challenge", "scopes", "resource")}
    record.update(user=user, grant_id=grant_id, issued_at=time.time())
    await proxy.store.put("code", (code,), record, ttl=CODE_TTL)
    session = await proxy.new_session(user)
    await _to_client(proxy, send, pending, {"code": code}, [*clear, session])
