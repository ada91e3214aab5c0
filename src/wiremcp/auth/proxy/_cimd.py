"""Client ID metadata documents (client-registration.mdx): an ``https`` URL as the client id.

Rules it keeps (security_best_practices.mdx, SSRF; client-registration.mdx, trust policies):

* the client id is an ``https`` URL with a path, no query, fragment or
  credentials, at most 2000 characters; with ``client_metadata_hosts`` set,
  its host must be one of them;
* the document is fetched through the auth package's SSRF guard (every
  address checked after resolution and on each redirect, private networks
  refused, loopback only when the proxy itself is on loopback), at most
  64 KiB, within 10 seconds;
* it is a JSON object whose ``client_id`` is exactly the URL; its
  ``redirect_uris`` follow the registration rules (`_registration`); the
  client is public (``token_endpoint_auth_method`` ``none`` or absent) and
  may ask for ``authorization_code`` and ``refresh_token``;
* a document read is kept for five minutes (sealed in the store like every
  record); one that fails is not kept, and the client is unknown;
* the consent page shows the document's host as the client's identity: it is
  the one thing about such a client that is vouched for (by DNS and TLS).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .._errors import AuthError
from ._registration import GRANT_TYPES, RegistrationError, check_redirect_uri

if TYPE_CHECKING:
    from ._proxy import OAuthProxy

__all__ = ["is_document_url", "document_client"]

CACHE_TTL = 300
MAX_DOCUMENT = 65536


def is_document_url(client_id: str) -> bool:
    parts = urlsplit(client_id)
    return (
        parts.scheme == "https" and bool(parts.hostname) and parts.path not in ("", "/") and not parts.query
        and "#" not in client_id and "@" not in parts.netloc and len(client_id) <= 2000
    )


async def document_client(proxy: OAuthProxy, url: str) -> dict[str, Any] | None:
    """The client ``url`` names, from its metadata document (cached); None when it cannot be used."""
    if not is_document_url(url):
        return None
    host = (urlsplit(url).hostname or "").lower()
    if proxy.client_metadata_hosts is not None and host not in proxy.client_metadata_hosts:
        proxy.log.info("a client metadata document on %s refused: not an allowed host", host)
        return None
    cached = await proxy.store.get("cimd", url)
    if cached is not None:
        return cached
    try:
        response = await proxy.fetcher().request("GET", url, "client metadata document")
        if response.status != 200:
            raise AuthError("client metadata document", f"{url} answered {response.status}")
        record = _client_of(url, host, response.json("client metadata document"))
    except (AuthError, RegistrationError) as exc:
        proxy.log.warning("the client metadata document %s cannot be used: %s", url, exc)
        return None
    await proxy.store.put("cimd", (url,), record, ttl=CACHE_TTL)
    return record


def _client_of(url: str, host: str, doc: dict[str, Any]) -> dict[str, Any]:
    if doc.get("client_id") != url:
        raise RegistrationError("invalid_client_metadata", "the document's client_id is not its URL")
    uris = doc.get("redirect_uris")
    if not isinstance(uris, list) or not uris or len(uris) > 10:
        raise RegistrationError("invalid_redirect_uri", "redirect_uris lists 1 to 10 redirect URIs")
    if doc.get("token_endpoint_auth_method", "none") != "none":
        raise RegistrationError("invalid_client_metadata", "only public clients (token_endpoint_auth_method none)")
    grants = doc.get("grant_types", ["authorization_code"])
    if not isinstance(grants, list) or "authorization_code" not in grants or not set(grants) <= set(GRANT_TYPES):
        raise RegistrationError("invalid_client_metadata", "grant_types: authorization_code, and refresh_token if wanted")
    name = doc.get("client_name")
    return {
        "client_id": url,
        "redirect_uris": [check_redirect_uri(u) for u in uris],
        "token_endpoint_auth_method": "none",
        "grant_types": list(dict.fromkeys(grants)),
        "client_name": name if isinstance(name, str) and len(name) <= 200 else None,
        "host": host,
    }
