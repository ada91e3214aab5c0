"""What the two HTTP client transports share: the endpoint they were given and the aiohttp session that reaches it.

`HTTPTransport` (Streamable HTTP, ``client.py``) and `SSETransport` (the
2024-11-05 HTTP+SSE transport it falls back to, ``transports/sse/client.py``)
are both an `Endpoint`; each keeps only its own wire. Rules kept here:

* the URL must be ``http`` or ``https`` with a host, else ValueError at
  construction; the era cache key is its origin (scheme, host and port, the
  host lowercased) marked with the transport's kind (``"http"``, ``"sse"``);
* ``headers`` are copied (the caller's dict may change later);
  ``connect_timeout`` bounds making a TCP (and TLS) connection, and nothing
  else; ``auth`` is the `HTTPAuth` hook, kept as given;
* a caller's ``http_client`` (an ``aiohttp.ClientSession``) is used and
  never closed here; otherwise the transport makes its own when it opens
  (`Endpoint._make_http`: no overall timeout, ``trust_env=False``) and
  closes it with the transport (`Endpoint._close_http`);
* the proxy comes from ``HTTP_PROXY``/``HTTPS_PROXY``/``NO_PROXY``, looked up
  once (`env_proxy`), not by aiohttp on every request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Hashable
from urllib.parse import urlsplit

from ...client import Receiver

if TYPE_CHECKING:
    import aiohttp

    from .client import HTTPAuth

__all__ = ["Endpoint", "env_proxy"]


class Endpoint:
    """The URL, headers, timeouts, auth hook and aiohttp session of one HTTP client transport."""

    def __init__(
        self,
        url: str,
        kind: str,
        *,
        headers: dict[str, str] | None,
        connect_timeout: float,
        auth: HTTPAuth | None,
        http_client: aiohttp.ClientSession | None,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"not an http(s) URL: {url!r}")
        self.url = url
        self.headers = dict(headers or {})
        self.connect_timeout = connect_timeout
        self.auth = auth
        self.cache_key: Hashable = (kind, parts.scheme, parts.netloc.lower())
        self._http: aiohttp.ClientSession | None = http_client
        self._own_http = http_client is None
        self._proxy: str | None = None
        self._receiver: Receiver | None = None
        self._closed = False

    def _make_http(self, name: str, limit: int) -> aiohttp.ClientSession:
        """This transport's own aiohttp session, at most ``limit`` connections; ImportError without the ``http`` extra."""
        try:
            import aiohttp
        except ImportError:
            raise ImportError(f"the {name} client transport needs aiohttp: pip install 'wiremcp[http]'") from None
        self._http = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=limit),
            # No overall deadline: the Client's per-request timeout bounds the wait.
            timeout=aiohttp.ClientTimeout(total=None, connect=self.connect_timeout),
            # trust_env=True would look up the proxy and ~/.netrc in a worker thread on every
            # request (two thread hops, ~400 µs of CPU): the proxy is looked up once instead.
            trust_env=False,
        )
        return self._http

    async def _close_http(self) -> None:
        """Close the aiohttp session if it is this transport's own."""
        if self._http is not None and self._own_http:
            await self._http.close()


def env_proxy(url: str) -> str | None:
    """The proxy for ``url`` from ``HTTP_PROXY``/``HTTPS_PROXY``/``NO_PROXY`` (as curl reads them), or None."""
    import urllib.request

    parts = urlsplit(url)
    proxy = urllib.request.getproxies().get(parts.scheme)
    if proxy is None or urllib.request.proxy_bypass(parts.netloc):
        return None
    return proxy
