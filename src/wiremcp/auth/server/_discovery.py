"""The authorization server's metadata and signing keys, fetched and cached.

Metadata (authorization-server-discovery.mdx, "Authorization Server
Metadata Discovery"): for an issuer with a path the URLs tried are, in
order, RFC 8414 path insertion (``/.well-known/oauth-authorization-server/PATH``),
OpenID Connect path insertion and OpenID Connect path appending; without a
path, ``/.well-known/oauth-authorization-server`` then
``/.well-known/openid-configuration``. A document whose ``issuer`` differs
from the configured issuer, character for character, is not used (RFC 8414
section 3.3).

Keys (`JWKS`): fetched on first use and kept; they are fetched again when
older than ``max_age``, and when a token names a ``kid`` the set lacks (the
issuer rotated its keys) -- but at most once per ``min_refresh_interval``
seconds, however many unknown ``kid``s arrive, and one fetch at a time
(concurrent requests wait for the same fetch). A failed fetch counts: while
no key set could be read, requests are refused as ``unavailable`` without
asking again within the interval. Keys that are not signature
keys (``use`` other than ``sig``), symmetric keys (``kty: oct``) and
entries that carry private material are ignored.

Only ``https`` URLs are fetched, except on loopback hosts (``localhost``,
``127.0.0.0/8``, ``::1``), where a test or a local authorization server runs
(security-considerations.mdx, "Communication Security").
"""

from __future__ import annotations

import asyncio
import base64
import ipaddress
import time
from typing import TYPE_CHECKING, Any, Callable
from urllib.parse import quote_plus, urlsplit

from ._errors import AuthError

if TYPE_CHECKING:
    import httpx

__all__ = ["Fetcher", "JWKS", "discover", "metadata_urls", "check_fetchable", "canonical_uri"]

#: Seconds to wait for the authorization server.
DEFAULT_HTTP_TIMEOUT = 10.0
#: Keys older than this are fetched again on next use.
DEFAULT_JWKS_MAX_AGE = 3600.0
#: At most one fetch of the keys per this many seconds when an unknown kid arrives.
DEFAULT_JWKS_MIN_REFRESH = 1.0
#: Private-key members of a JWK (RFC 7518 section 6): never accepted in a public key set.
PRIVATE_MEMBERS = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})


def _is_loopback(host: str | None) -> bool:
    if host is None:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_fetchable(url: str, what: str) -> None:
    """ValueError unless ``url`` is ``https`` (or ``http`` on a loopback host)."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return
    if parts.scheme == "http" and _is_loopback(parts.hostname):
        return
    raise ValueError(f"{what} must be an https URL (http only on a loopback host): {url!r}")


def canonical_uri(uri: str) -> str:
    """``uri`` with its scheme and host in lower case (basic/authorization, "Canonical Server URI")."""
    parts = urlsplit(uri)
    if not parts.scheme or not parts.netloc:
        raise ValueError(f"not an absolute URI: {uri!r}")
    if parts.fragment or "#" in uri:
        raise ValueError(f"a resource URI has no fragment: {uri!r}")
    netloc = parts.netloc.lower()
    out = f"{parts.scheme.lower()}://{netloc}{parts.path}"
    if parts.query:
        out += "?" + parts.query
    return out


def metadata_urls(issuer: str) -> list[str]:
    """The discovery URLs for ``issuer``, in the order they are tried."""
    parts = urlsplit(issuer)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    if path:
        return [
            f"{origin}/.well-known/oauth-authorization-server{path}",
            f"{origin}/.well-known/openid-configuration{path}",
            f"{origin}{path}/.well-known/openid-configuration",
        ]
    return [f"{origin}/.well-known/oauth-authorization-server", f"{origin}/.well-known/openid-configuration"]


class Fetcher:
    """GET and POST JSON from the authorization server over one lazily made `httpx.AsyncClient`."""

    def __init__(self, client: httpx.AsyncClient | None = None, *, timeout: float = DEFAULT_HTTP_TIMEOUT) -> None:
        self._client = client
        self._given = client is not None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.timeout = timeout

    def client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or (not self._given and self._loop is not loop):
            # One client per event loop: a connection pool cannot outlive the loop it was made on.
            import httpx

            self._client = httpx.AsyncClient(timeout=self.timeout, follow_redirects=False)
            self._loop = loop
        return self._client

    async def get_json(self, url: str) -> tuple[int, Any]:
        """``(status, parsed JSON or None)``; raises `AuthError` ("unavailable") on network failure."""
        import httpx

        try:
            response = await self.client().get(url, headers={"accept": "application/json"})
        except httpx.HTTPError as exc:
            raise AuthError("unavailable", f"the authorization server cannot be reached ({type(exc).__name__})") from None
        try:
            return response.status_code, response.json()
        except ValueError:
            return response.status_code, None

    async def post_form(self, url: str, form: dict[str, str], auth: tuple[str, str] | None) -> tuple[int, Any]:
        import httpx

        headers = {"accept": "application/json"}
        if auth is not None:
            # RFC 6749 section 2.3.1: id and secret are form-urlencoded, then joined and base64-encoded.
            pair = f"{quote_plus(auth[0])}:{quote_plus(auth[1])}".encode()
            headers["authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
        try:
            response = await self.client().post(url, data=form, headers=headers)
        except httpx.HTTPError as exc:
            raise AuthError("unavailable", f"the authorization server cannot be reached ({type(exc).__name__})") from None
        try:
            return response.status_code, response.json()
        except ValueError:
            return response.status_code, None

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()


async def discover(fetcher: Fetcher, issuer: str) -> dict[str, Any]:
    """The issuer's metadata document (see the module docs); `AuthError` ("unavailable") if none fits."""
    for url in metadata_urls(issuer):
        status, doc = await fetcher.get_json(url)
        if status != 200 or type(doc) is not dict:
            continue
        if doc.get("issuer") != issuer:
            # RFC 8414 section 3.3: a document for another issuer is not used (mix-up).
            raise AuthError("unavailable", f"the metadata at {url} names another issuer; it is not used")
        return doc
    raise AuthError("unavailable", f"no authorization server metadata found for the issuer {issuer}")


async def metadata_endpoint(fetcher: Fetcher, issuer: str, field: str) -> str:
    """The URL the issuer's metadata names in ``field`` (``jwks_uri``, ``introspection_endpoint``...),
    checked fetchable; `AuthError` ("unavailable") when it is missing or not an https URL."""
    uri = (await discover(fetcher, issuer)).get(field)
    if not isinstance(uri, str):
        raise AuthError("unavailable", f"the issuer's metadata has no {field}")
    try:
        check_fetchable(uri, field)
    except ValueError:
        raise AuthError("unavailable", f"the issuer's {field} is not an https URL") from None
    return uri


class JWKS:
    """The issuer's public signature keys by ``kid``, refreshed on rotation (see the module docs)."""

    def __init__(
        self,
        locate: Callable[[], Any],
        fetcher: Fetcher,
        *,
        max_age: float = DEFAULT_JWKS_MAX_AGE,
        min_refresh_interval: float = DEFAULT_JWKS_MIN_REFRESH,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._locate = locate  # async () -> the jwks_uri
        self._fetcher = fetcher
        self.max_age = max_age
        self.min_refresh_interval = min_refresh_interval
        self._clock = clock
        self._keys: dict[str | None, dict[str, Any]] | None = None
        self._fetched_at = -float("inf")
        self._lock: asyncio.Lock | None = None
        #: How many times the set was fetched (observable for tests and metrics).
        self.fetches = 0

    async def key(self, kid: str | None) -> dict[str, Any]:
        """The JWK for ``kid`` (a token without ``kid``: the set's only key); `AuthError` if none."""
        keys = self._keys
        now = self._clock()
        if keys is None and now - self._fetched_at < self.min_refresh_interval:
            raise AuthError("unavailable", "the issuer's key set (jwks_uri) could not be read")
        if keys is None or now - self._fetched_at > self.max_age:
            keys = await self._refresh(force=True)
        found = self._pick(keys, kid)
        if found is None and now - self._fetched_at >= self.min_refresh_interval:
            keys = await self._refresh(force=False)
            found = self._pick(keys, kid)
        if found is None:
            raise AuthError("unknown_key", "the token is signed with a key the issuer does not publish")
        return found

    @staticmethod
    def _pick(keys: dict[str | None, dict[str, Any]], kid: str | None) -> dict[str, Any] | None:
        if kid is not None:
            return keys.get(kid)
        return next(iter(keys.values())) if len(keys) == 1 else None

    async def _refresh(self, *, force: bool) -> dict[str | None, dict[str, Any]]:
        if self._lock is None:
            self._lock = asyncio.Lock()
        before = self._fetched_at
        async with self._lock:
            if self._fetched_at != before:  # another request fetched (or failed to) meanwhile
                if self._keys is None:
                    raise AuthError("unavailable", "the issuer's key set (jwks_uri) could not be read")
                return self._keys
            if not force and self._clock() - self._fetched_at < self.min_refresh_interval:
                assert self._keys is not None
                return self._keys
            self._fetched_at = self._clock()  # failures count too: a down issuer is not hammered
            self.fetches += 1
            uri = await self._locate()
            status, doc = await self._fetcher.get_json(uri)
            if status != 200 or type(doc) is not dict or type(doc.get("keys")) is not list:
                if self._keys is None:
                    raise AuthError("unavailable", "the issuer's key set (jwks_uri) could not be read")
                return self._keys  # keep the keys we had
            keys: dict[str | None, dict[str, Any]] = {}
            for jwk in doc["keys"]:
                if type(jwk) is not dict or jwk.get("kty") in (None, "oct"):
                    continue
                if jwk.get("use", "sig") != "sig" or PRIVATE_MEMBERS & jwk.keys():
                    continue
                kid = jwk.get("kid")
                keys[kid if isinstance(kid, str) else None] = jwk
            self._keys = keys
            return keys
