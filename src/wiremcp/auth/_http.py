"""The HTTP requests of the OAuth client: guarded, bounded, never following redirects blindly.

Rules it keeps:

* every URL passes the `URLGuard` before a request is made, and again at
  every redirect hop; at most ``max_redirects`` hops (then an error);
* a response body is read up to ``max_body`` bytes (1 MiB by default);
  a larger one is an error, not a truncated document;
* each request has a timeout (10 s by default; connect and read);
* a request whose connection was lost before any response is sent once
  more when the server cannot have acted on it (a reset: it never read the
  request) or when it is idempotent (a GET), never after a timeout or once
  a response has begun (`_may_resend`; RFC 9110 section 9.2.2);
* JSON documents must be JSON objects; the caller names the step, so a
  failure says which step it was;
* the httpx client is the caller's or our own (closed by `aclose`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

import orjson

from ._errors import AuthError
from ._ssrf import URLGuard

__all__ = ["Fetcher", "Response", "DEFAULT_TIMEOUT", "DEFAULT_MAX_BODY", "DEFAULT_MAX_REDIRECTS"]

DEFAULT_TIMEOUT = 10.0
DEFAULT_MAX_BODY = 1 << 20
DEFAULT_MAX_REDIRECTS = 5


@dataclass
class Response:
    status: int
    headers: Mapping[str, str]
    body: bytes
    url: str

    def json(self, what: str) -> dict[str, Any]:
        try:
            obj = orjson.loads(self.body)
        except orjson.JSONDecodeError:
            raise AuthError(what, f"{self.url} did not answer with JSON (HTTP {self.status})") from None
        if type(obj) is not dict:
            raise AuthError(what, f"{self.url} answered with JSON that is not an object")
        return obj

    def oauth_error(self) -> tuple[str | None, str]:
        """The ``error`` code and a short description from an OAuth error body, if any."""
        try:
            obj = orjson.loads(self.body)
        except orjson.JSONDecodeError:
            return None, f"HTTP {self.status}"
        if type(obj) is not dict:
            return None, f"HTTP {self.status}"
        error = obj.get("error") if isinstance(obj.get("error"), str) else None
        desc = obj.get("error_description")
        text = f"HTTP {self.status}" + (f", error {error!r}" if error else "")
        if isinstance(desc, str) and desc:
            text += f": {desc[:200]}"
        return error, text


def _may_resend(exc: Exception, method: str) -> bool:
    """A request that failed before any response may be sent once more (RFC 9110 section 9.2.2): one
    reset by the server (it closed the connection with the request unread, or before it came: it cannot
    have acted on it), whatever the method; one whose connection closed or broke otherwise only when
    its method is idempotent (a metadata GET, never a token or registration POST)."""
    import httpx

    if not isinstance(exc, (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError)):
        return False  # a timeout may come after the server acted; failing to connect is reported
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, (ConnectionResetError, BrokenPipeError)):
            return True
        cause = cause.__cause__ or cause.__context__
    return method in ("GET", "HEAD", "OPTIONS")


class Fetcher:
    def __init__(
        self,
        guard: URLGuard,
        *,
        http_client: Any = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_body: int = DEFAULT_MAX_BODY,
        max_redirects: int = DEFAULT_MAX_REDIRECTS,
    ) -> None:
        self.guard = guard
        self.timeout = timeout
        self.max_body = max_body
        self.max_redirects = max_redirects
        self._http = http_client
        self._own = http_client is None

    def _client(self) -> Any:
        if self._http is None:
            import httpx

            self._http = httpx.AsyncClient(timeout=httpx.Timeout(self.timeout), follow_redirects=False)
        return self._http

    async def request(
        self,
        method: str,
        url: str,
        what: str,
        *,
        headers: Mapping[str, str] | None = None,
        data: Mapping[str, str] | None = None,
        json: Any = None,
        follow_redirects: bool = True,
    ) -> Response:
        """One request; GET redirects are followed (each hop checked) when asked."""
        import httpx

        client = self._client()
        for _ in range(self.max_redirects + 1):
            await self.guard.check(url, what)
            content = None
            send_headers = {"Accept": "application/json", **(headers or {})}
            if json is not None:
                content = orjson.dumps(json)
                send_headers["Content-Type"] = "application/json"
            for resend in (False, True):
                answered = False
                try:
                    async with client.stream(
                        method, url, headers=send_headers, data=data, content=content, timeout=self.timeout
                    ) as resp:
                        answered = True
                        body = bytearray()
                        async for chunk in resp.aiter_bytes():
                            body += chunk
                            if len(body) > self.max_body:
                                raise AuthError(what, f"{url} sent more than {self.max_body} bytes: refused")
                        result = Response(resp.status_code, resp.headers, bytes(body), url)
                    break
                except httpx.HTTPError as exc:
                    if not resend and not answered and _may_resend(exc, method):
                        continue
                    raise AuthError(what, f"{method} {url} failed: {exc.__class__.__name__}: {exc}") from None
            if follow_redirects and method == "GET" and result.status in (301, 302, 303, 307, 308):
                location = result.headers.get("location")
                if not location:
                    return result
                url = urljoin(url, location)
                continue
            return result
        raise AuthError(what, f"more than {self.max_redirects} redirects starting at {url}")

    async def aclose(self) -> None:
        if self._own and self._http is not None:
            await self._http.aclose()
            self._http = None
