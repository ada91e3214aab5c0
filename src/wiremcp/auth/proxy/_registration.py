"""Dynamic client registration (RFC 7591) at the proxy: what a client may register, and the answer.

Rules it keeps:

* ``redirect_uris`` is required: absolute, no fragment, each ``https``, or
  ``http`` on a loopback host (RFC 8252 section 7.3), or a private-use
  scheme with a dot in it (RFC 8252 section 7.1); at most 10;
* ``token_endpoint_auth_method``: ``none`` (a public client, PKCE is what
  protects its codes), ``client_secret_basic`` or ``client_secret_post`` (a
  secret is then issued; only its SHA-256 is kept). Unset means
  ``client_secret_basic`` (RFC 7591 section 2);
* ``grant_types`` within ``authorization_code`` and ``refresh_token``
  (``authorization_code`` by default), ``response_types`` ``code`` only;
* ``client_name`` (at most 200 characters) is shown on the consent page
  marked as the client's own claim: registration is open, so a name proves
  nothing and the page names the redirect URI too;
* anything else the client sent is ignored, not echoed.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from typing import Any
from urllib.parse import urlsplit

from .._ssrf import is_loopback_host

__all__ = ["register", "RegistrationError", "secret_matches", "check_redirect_uri"]

AUTH_METHODS = ("none", "client_secret_basic", "client_secret_post")
GRANT_TYPES = ("authorization_code", "refresh_token")


class RegistrationError(ValueError):
    """``invalid_redirect_uri`` or ``invalid_client_metadata`` with a description (RFC 7591 section 3.2.2)."""

    def __init__(self, code: str, description: str) -> None:
        super().__init__(description)
        self.code = code


def check_redirect_uri(uri: Any) -> str:
    if not isinstance(uri, str) or len(uri) > 2000:
        raise RegistrationError("invalid_redirect_uri", "a redirect URI is a string of at most 2000 characters")
    parts = urlsplit(uri)
    if not parts.scheme or "#" in uri:
        raise RegistrationError("invalid_redirect_uri", "a redirect URI is absolute and has no fragment")
    if parts.scheme == "https" and parts.hostname:
        return uri
    if parts.scheme == "http" and parts.hostname and is_loopback_host(parts.hostname):
        return uri
    if parts.scheme not in ("http", "https", "javascript", "data", "file") and "." in parts.scheme:
        return uri
    raise RegistrationError(
        "invalid_redirect_uri", "a redirect URI is https, http on a loopback host, or a private-use scheme (RFC 8252)"
    )


def _strings(value: Any, name: str, default: list[str]) -> list[str]:
    if value is None:
        return default
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RegistrationError("invalid_client_metadata", f"{name} is a list of strings")
    return list(dict.fromkeys(value))


def register(metadata: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the client record to store, the registration response) for ``metadata``; RegistrationError."""
    uris = metadata.get("redirect_uris")
    if not isinstance(uris, list) or not uris or len(uris) > 10:
        raise RegistrationError("invalid_redirect_uri", "redirect_uris lists 1 to 10 redirect URIs")
    redirect_uris = [check_redirect_uri(u) for u in uris]
    method = metadata.get("token_endpoint_auth_method", "client_secret_basic")
    if method not in AUTH_METHODS:
        raise RegistrationError("invalid_client_metadata", f"token_endpoint_auth_method is one of {', '.join(AUTH_METHODS)}")
    grants = _strings(metadata.get("grant_types"), "grant_types", ["authorization_code"])
    if not set(grants) <= set(GRANT_TYPES) or "authorization_code" not in grants:
        raise RegistrationError("invalid_client_metadata", "grant_types: authorization_code, and refresh_token if wanted")
    if _strings(metadata.get("response_types"), "response_types", ["code"]) != ["code"]:
        raise RegistrationError("invalid_client_metadata", "response_types is [\"code\"]")
    name = metadata.get("client_name")
    if name is not None and (not isinstance(name, str) or len(name) > 200):
        raise RegistrationError("invalid_client_metadata", "client_name is a string of at most 200 characters")
    client_id = "mcp_" + secrets.token_urlsafe(18)
    now = int(time.time())
    record: dict[str, Any] = {
        "client_id": client_id,
        "redirect_uris": redirect_uris,
        "token_endpoint_auth_method": method,
        "grant_types": grants,
        "client_name": name,
        "issued_at": now,
    }
    response: dict[str, Any] = {
        "client_id": client_id,
        "client_id_issued_at": now,
        "redirect_uris": redirect_uris,
        "token_endpoint_auth_method": method,
        "grant_types": grants,
        "response_types": ["code"],
    }
    if name is not None:
        response["client_name"] = name
    if method != "none":
        secret = secrets.token_urlsafe(32)
        record["secret_sha256"] = hashlib.sha256(secret.encode()).hexdigest()
        response["client_secret"] = secret
        response["client_secret_expires_at"] = 0
    return record, response


def secret_matches(record: dict[str, Any], secret: str | None) -> bool:
    expected = record.get("secret_sha256")
    if not isinstance(expected, str) or secret is None:
        return False
    return hmac.compare_digest(hashlib.sha256(secret.encode()).hexdigest(), expected)
