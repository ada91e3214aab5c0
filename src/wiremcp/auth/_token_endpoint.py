"""The token endpoint: client authentication, one token request, and the token it returns.

Rules it keeps (OAuth 2.1 sections 2.4 and 3.2; RFC 9449):

* **client authentication**: the method registration returned, else what
  the server supports: ``private_key_jwt`` (with a key),
  ``client_secret_basic``, ``client_secret_post``, ``none``; with
  ``client_secret_basic`` the id and secret are form-encoded before Basic;
  ``private_key_jwt`` without a key is refused before anything is sent;
* **DPoP**: with a `DPoPKey` each attempt carries a fresh proof; a 400
  ``use_dpop_nonce`` with a ``DPoP-Nonce`` is answered by one more attempt
  with that nonce; every nonce is kept for the origin that gave it;
* **the answer**: anything but 200 is an `AuthError` with the server's
  ``error``; the token needs an ``access_token`` and a ``token_type`` of
  Bearer or DPoP, and a DPoP-bound token is refused to a request that sent
  no proof; ``expires_in`` becomes ``expires_at``; a refresh that returns
  no new refresh token keeps the old one; the scopes are the granted ones,
  else the requested ones; a DPoP-bound token is stored with its key;
* a token counts as expired `EXPIRY_SKEW` seconds before ``expires_at``.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from ._discovery import ServerMetadata
from ._dpop import DPoPKey
from ._errors import AuthError
from ._grants import CLIENT_ASSERTION_TYPE
from ._http import Fetcher, Response
from ._jose import PrivateKey, client_assertion

__all__ = ["EXPIRY_SKEW", "TokenClient", "NO_CLIENT", "authenticate", "basic_credentials", "expired", "token_request"]

#: Seconds before ``expires_in`` runs out at which a token counts as expired.
EXPIRY_SKEW = 30.0


@dataclass(frozen=True, slots=True)
class TokenClient:
    """Who asks the token endpoint: the client id, its secret or key, and how it authenticates (None: pick)."""

    client_id: str | None = None
    secret: str | None = None
    method: str | None = None
    key: PrivateKey | None = None
    algorithm: str | None = None


#: A token request without client authentication.
NO_CLIENT = TokenClient()


def expired(token: Mapping[str, Any]) -> bool:
    """Whether ``token`` has an ``expires_at`` that is (nearly) past."""
    expires_at = token.get("expires_at")
    return isinstance(expires_at, (int, float)) and time.time() >= expires_at - EXPIRY_SKEW


def basic_credentials(client_id: str, secret: str) -> str:
    """The ``Authorization`` value of HTTP Basic with a form-encoded id and secret (OAuth 2.1 section 2.4.1)."""
    raw = f"{quote(client_id, safe='')}:{quote(secret, safe='')}".encode()
    return "Basic " + base64.b64encode(raw).decode("ascii")


def authenticate(form: dict[str, str], headers: dict[str, str], metadata: ServerMetadata, client: TokenClient) -> None:
    """Client authentication at the token endpoint (OAuth 2.1 section 2.4), added to ``form`` and ``headers``."""
    client_id, secret, method, key = client.client_id, client.secret, client.method, client.key
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
        headers["Authorization"] = basic_credentials(client_id, secret)
    elif method == "client_secret_post" and secret:
        form["client_id"] = client_id
        form["client_secret"] = secret
    elif method == "private_key_jwt":
        if key is None:
            raise AuthError("token request", "private_key_jwt needs a private key (PreRegisteredClient.private_key)")
        form["client_id"] = client_id
        form["client_assertion_type"] = CLIENT_ASSERTION_TYPE
        form["client_assertion"] = client_assertion(key, client_id, metadata.issuer, algorithm=client.algorithm)
    else:
        form["client_id"] = client_id


async def token_request(
    fetch: Fetcher,
    metadata: ServerMetadata,
    form: dict[str, str],
    client: TokenClient,
    dpop: DPoPKey,
    use_dpop: bool,
    scopes: list[str] | None,
) -> dict[str, Any]:
    """POST ``form`` to the token endpoint; the token it returns, as stored (see the module docstring)."""
    step = "token request"
    endpoint = metadata.token_endpoint
    if endpoint is None:
        raise AuthError("authorization server metadata", f"{metadata.issuer!r} lists no token endpoint")
    resp: Response | None = None
    for _ in range(2):
        body = dict(form)
        headers: dict[str, str] = {}
        authenticate(body, headers, metadata, client)
        if use_dpop:
            headers["DPoP"] = dpop.proof("POST", endpoint)
        resp = await fetch.request("POST", endpoint, step, data=body, headers=headers)
        nonce = resp.headers.get("dpop-nonce")
        if nonce:
            dpop.note_nonce(endpoint, nonce)
        if resp.status == 400 and use_dpop and nonce and resp.oauth_error()[0] == "use_dpop_nonce":
            continue
        break
    assert resp is not None
    if resp.status != 200:
        error, text = resp.oauth_error()
        raise AuthError(step, f"{endpoint} refused ({form['grant_type']}): {text}", error=error)
    return _token(resp.json(step), endpoint, form, use_dpop, dpop, scopes)


def _token(
    doc: dict[str, Any], endpoint: str, form: dict[str, str], use_dpop: bool, dpop: DPoPKey, scopes: list[str] | None
) -> dict[str, Any]:
    step = "token request"
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
        token["dpop_key"] = dpop.pem()
    return token
