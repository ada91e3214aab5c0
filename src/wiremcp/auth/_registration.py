"""The client's identity at an authorization server (client-registration.mdx).

Rules it keeps:

* in this order: pre-registered credentials bound to the issuer (or to no
  issuer), else a client ID metadata document URL when the server
  advertises ``client_id_metadata_document_supported``, else dynamic client
  registration (RFC 7591) when it has a ``registration_endpoint``; else an
  `AuthError` that says which of them is missing;
* an identity records the issuer it belongs to; one for another issuer is
  never presented (the caller registers again);
* dynamic registration asks for ``authorization_code`` and
  ``refresh_token``, authenticates with ``none`` when the server allows
  public clients, else ``client_secret_basic`` or ``client_secret_post``;
  ``application_type`` is ``native`` for a loopback redirect URI (or none),
  ``web`` otherwise; the answer needs a ``client_id`` (201 or 200);
* a metadata-document client authenticates with ``private_key_jwt`` when
  it has a key, else ``none``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from ._discovery import ServerMetadata
from ._errors import AuthError
from ._grants import PreRegisteredClient
from ._http import Fetcher
from ._jose import PrivateKey, load_private_key
from ._ssrf import is_loopback_host

__all__ = ["identify", "private_key", "register"]


def private_key(pre: PreRegisteredClient | None) -> PrivateKey | None:
    """The pre-registered client's private key (loaded from PEM when given as text), if any."""
    if pre is None or pre.private_key is None:
        return None
    return load_private_key(pre.private_key) if isinstance(pre.private_key, str) else pre.private_key


async def identify(
    fetch: Fetcher,
    metadata: ServerMetadata,
    redirect_uri: str | None,
    *,
    preregistered: PreRegisteredClient | None,
    client_metadata_url: str | None,
    client_name: str,
) -> dict[str, Any]:
    """The client identity to use with ``metadata``'s issuer (see the module docstring for the order)."""
    pre = preregistered
    if pre is not None and (pre.issuer is None or pre.issuer == metadata.issuer):
        return {
            "issuer": metadata.issuer,
            "client_id": pre.client_id,
            "client_secret": pre.client_secret,
            "token_endpoint_auth_method": pre.token_endpoint_auth_method,
            "kind": "pre-registered",
        }
    if client_metadata_url is not None and metadata.cimd_supported:
        return {
            "issuer": metadata.issuer,
            "client_id": client_metadata_url,
            "token_endpoint_auth_method": "private_key_jwt" if private_key(pre) is not None else "none",
            "kind": "metadata-document",
        }
    if metadata.registration_endpoint is not None:
        return await register(fetch, metadata, redirect_uri, client_name)
    mismatch = f" (the pre-registered client belongs to {pre.issuer!r})" if pre is not None else ""
    raise AuthError(
        "client registration",
        f"no client credentials for {metadata.issuer!r}{mismatch}, and it supports neither "
        "client ID metadata documents nor dynamic client registration",
    )


async def register(fetch: Fetcher, metadata: ServerMetadata, redirect_uri: str | None, client_name: str) -> dict[str, Any]:
    """Dynamic client registration (RFC 7591) at ``metadata``'s ``registration_endpoint``."""
    step = "dynamic client registration"
    endpoint = metadata.registration_endpoint
    assert endpoint is not None
    supported = metadata.get_list("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
    method = "none" if "none" in supported else next(
        (m for m in ("client_secret_basic", "client_secret_post") if m in supported), "client_secret_basic"
    )
    body: dict[str, Any] = {
        "client_name": client_name,
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
    resp = await fetch.request("POST", endpoint, step, json=body)
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
