"""The client end of Streamable HTTP (basic/transports/streamable-http.mdx).

Rules it keeps:

* every message is its own POST to the endpoint, with ``Content-Type:
  application/json``, ``Accept: application/json, text/event-stream`` and
  the metadata headers the `Client` computed (``MCP-Protocol-Version``,
  ``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``; see
  `wiremcp.client._headers`) plus the user's own ``headers``;
* a reply is either one JSON object or an SSE stream of messages ending with
  the response; both are handed to the client with the request's id as
  ``origin`` (so progress and log notifications on that stream belong to it).
  SSE comment lines (keep-alives), ``event:``, ``id:`` and ``retry:`` fields
  are ignored; resumption is not part of 2026-07-28;
* a non-2xx reply keeps the server's body: a JSON-RPC error in it is
  delivered as the reply (with the HTTP status on the `RemoteError`);
  without one the request fails with `HTTPError` (status and body);
* cancellation is closing the request's response stream (cancellation.mdx,
  "Transport-Specific Cancellation"): `abandon` cancels the POST's task,
  which closes the connection; nothing is sent;
* the era cache is keyed by the URL's origin (versioning.mdx);
* legacy (2025-11-25) servers: an ``Mcp-Session-Id`` the server assigns is
  sent back on every later POST, and ``DELETE`` ends the session on close;
  after the handshake a GET stream is opened for the server's own requests
  (a 405 just means there is none); a server request arriving on any SSE
  stream is answered by its own POST.
* no ``$ref`` in any schema is ever fetched: the transport only POSTs to the
  endpoint it was given.

Built on httpx (the ``http`` extra): HTTP/1.1 keep-alive pooling, TLS and
proxies come with it; its cost per call is measured in bench/client_bench.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, AsyncIterator, Hashable
from urllib.parse import urlsplit

import orjson

from ...client import ClientError, ConnectionClosed, HTTPError, Receiver

__all__ = ["HTTPTransport", "DEFAULT_CONNECT_TIMEOUT"]

log = logging.getLogger("wiremcp.client")

#: Seconds to establish a TCP (and TLS) connection. Waiting for a reply is
#: bounded by the client's per-request timeout, not here.
DEFAULT_CONNECT_TIMEOUT = 10.0
_ACCEPT = "application/json, text/event-stream"


class HTTPTransport:
    """A `ClientTransport` to a Streamable HTTP endpoint."""

    cancel_by_notification = False
    mirrors_headers = True

    def __init__(
        self,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        http_client: Any = None,
        auth: Any = None,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"not an http(s) URL: {url!r}")
        self.url = url
        self.headers = dict(headers or {})
        self.connect_timeout = connect_timeout
        self.cache_key: Hashable = ("http", parts.scheme, parts.netloc.lower())
        self.session_id: str | None = None
        self._http = http_client
        self._own_http = http_client is None
        self._receiver: Receiver | None = None
        self._tasks: dict[Any, asyncio.Task[None]] = {}
        self._background: set[asyncio.Task[None]] = set()
        self._closed = False
        self._legacy: str | None = None  # the negotiated 2025-11-25-era version, once initialized
        #: ``await auth.headers(method, url)`` before each request; ``await auth.on_response(status,
        #: headers, url)`` on 401/403 (True: send again once) and to pick up ``DPoP-Nonce``.
        self.auth = auth

    async def open(self, receiver: Receiver) -> None:
        self._receiver = receiver
        if self._http is None:
            try:
                import httpx
            except ImportError:
                raise ImportError("the HTTP client transport needs httpx: pip install 'wiremcp[http]'") from None
            self._http = httpx.AsyncClient(
                timeout=httpx.Timeout(None, connect=self.connect_timeout),
                limits=httpx.Limits(max_connections=100, max_keepalive_connections=20),
            )

    def send(
        self, data: bytes, *, id: Any = None, method: str | None = None, params: Any = None, headers: Any = None
    ) -> None:
        if self._closed:
            raise ConnectionClosed("the HTTP transport is closed")
        task = asyncio.get_running_loop().create_task(self._post(data, id, method, headers))
        if id is not None:
            self._tasks[id] = task
        else:
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    def send_raw(self, data: bytes) -> None:
        self.send(data)

    def abandon(self, id: Any) -> None:
        task = self._tasks.pop(id, None)
        if task is not None:
            task.cancel()

    def legacy_session_started(self, version: str) -> None:
        """2025-11-25: open the GET stream on which the server may send requests and notifications."""
        self._legacy = version
        task = asyncio.get_running_loop().create_task(self._listen_legacy(version))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _listen_legacy(self, version: str) -> None:
        receiver = self._receiver
        assert receiver is not None and self._http is not None
        headers = self._request_headers({"MCP-Protocol-Version": version})
        headers["Accept"] = "text/event-stream"
        del headers["Content-Type"]
        try:
            async with self._stream("GET", headers) as resp:
                kind = resp.headers.get("content-type", "").split(";", 1)[0].strip().lower()
                if resp.status_code != 200 or kind != "text/event-stream":
                    log.debug("no GET stream (HTTP %d); server requests come on POST streams only", resp.status_code)
                    return
                async for event in _sse_events(resp):
                    receiver.message(event, None, None)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the GET stream is optional
            log.debug("the GET stream ended: %r", exc)

    @contextlib.asynccontextmanager
    async def _stream(self, method: str, headers: dict[str, str], **kwargs: Any) -> AsyncIterator[Any]:
        """``http.stream`` with the auth hook: its headers on each try, a retry when it asks (at most
        two: a fresh token, then perhaps a DPoP nonce the server wants with it, RFC 9449 section 9)."""
        assert self._http is not None
        for attempt in range(_AUTH_RETRIES + 1):
            sent = headers if self.auth is None else {**headers, **await self.auth.headers(method, self.url)}
            async with self._http.stream(method, self.url, headers=sent, **kwargs) as resp:
                status = resp.status_code
                if self.auth is not None and (status in (401, 403) or "dpop-nonce" in resp.headers):
                    retry = await self.auth.on_response(status, resp.headers, self.url)
                    if retry and attempt < _AUTH_RETRIES and status in (401, 403):
                        continue
                yield resp
                return

    def _request_headers(self, extra: dict[str, str] | None) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": _ACCEPT}
        if self.headers:
            headers.update(self.headers)
        if extra:
            headers.update(extra)
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        return headers

    async def _post(self, data: bytes, id: Any, method: str | None, extra: dict[str, str] | None) -> None:
        receiver = self._receiver
        assert receiver is not None and self._http is not None
        answered = False
        try:
            async with self._stream("POST", self._request_headers(extra), content=data) as resp:
                status = resp.status_code
                session = resp.headers.get("mcp-session-id")
                if session:
                    self.session_id = session
                kind = resp.headers.get("content-type", "").split(";", 1)[0].strip().lower()
                error_status = status if status >= 400 else None
                if kind == "text/event-stream" and status < 400:
                    cursor = _Cursor()
                    async for event in _sse_events(resp, cursor):
                        answered = True
                        receiver.message(event, id, None)
                    body = b""
                    if id is not None and self._legacy is not None and cursor.last_id is not None:
                        if not await self._resume(id, cursor):
                            receiver.request_failed(
                                id, ConnectionClosed(f"the SSE stream for {method} ended and could not be resumed")
                            )
                        return
                else:
                    body = await resp.aread()
                    if body and (kind == "application/json" or body[:1] == b"{"):
                        try:
                            obj = orjson.loads(body)
                        except orjson.JSONDecodeError:
                            obj = None
                        if type(obj) is dict and ("result" in obj or "error" in obj or "method" in obj):
                            answered = True
                            receiver.message(body, id, error_status)
                if id is not None and not answered:
                    receiver.request_failed(id, HTTPError(status, body, method))
                elif id is None and status >= 400:
                    log.warning("the server refused a notification or response with HTTP %d: %r", status, body[:200])
                elif id is not None:
                    # The stream ended; if the reply never came this fails the request (a no-op otherwise).
                    receiver.request_failed(
                        id, ConnectionClosed(f"the server closed the response stream for {method} without replying")
                    )
        except asyncio.CancelledError:
            raise
        except ClientError as exc:  # from the auth hook (an AuthError): the request fails with it
            if id is not None:
                receiver.request_failed(id, exc)
            else:
                log.warning("HTTP POST to %s failed: %s", self.url, exc)
        except Exception as exc:  # noqa: BLE001 - httpx errors, and anything else, fail the request
            if id is not None:
                receiver.request_failed(id, ConnectionClosed(f"HTTP POST to {self.url} failed: {exc!r}"))
            else:
                log.warning("HTTP POST to %s failed: %r", self.url, exc)
        finally:
            if id is not None and self._tasks.get(id) is asyncio.current_task():
                del self._tasks[id]

    async def _resume(self, id: Any, cursor: _Cursor) -> bool:
        """2025-11-25 resumability: GET with Last-Event-ID after the server's retry delay.

        Returns True once the reply to ``id`` came (or nothing is left to wait
        for). Used only with legacy servers; 2026-07-28 streams do not resume.
        """
        receiver = self._receiver
        assert receiver is not None and self._http is not None
        for _ in range(_MAX_RESUMES):
            if cursor.answered(id):
                return True
            await asyncio.sleep((cursor.retry_ms if cursor.retry_ms is not None else 1000) / 1000)
            headers = self._request_headers({"MCP-Protocol-Version": self._legacy or "", "Last-Event-ID": cursor.last_id or ""})
            headers["Accept"] = "text/event-stream"
            del headers["Content-Type"]
            async with self._stream("GET", headers) as resp:
                if resp.status_code != 200:
                    return False
                async for event in _sse_events(resp, cursor):
                    receiver.message(event, id, None)
        return cursor.answered(id)

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        tasks = [*self._tasks.values(), *self._background]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()
        if self._http is not None:
            if self.session_id is not None:
                try:  # 2025-11-25 transports: end the session
                    async with self._stream("DELETE", self._request_headers(None)):
                        pass
                except Exception:  # noqa: BLE001 - best effort
                    pass
            if self._own_http:
                await self._http.aclose()


#: Times one request is sent again because the auth hook asked (401/403 answered).
_AUTH_RETRIES = 2
#: GET reconnections tried for one legacy request whose SSE stream ended early.
_MAX_RESUMES = 3


class _Cursor:
    """Where an SSE stream got to: the last event id, the server's retry delay, reply ids seen."""

    __slots__ = ("last_id", "retry_ms", "replied")

    def __init__(self) -> None:
        self.last_id: str | None = None
        self.retry_ms: int | None = None
        self.replied: set[Any] = set()

    def answered(self, id: Any) -> bool:
        return id in self.replied


async def _sse_events(resp: Any, cursor: _Cursor | None = None) -> Any:
    """The ``data`` of each SSE event (text/event-stream framing), as bytes."""
    data: list[str] = []
    async for line in resp.aiter_lines():
        if not line:
            if data:
                event = "\n".join(data).encode("utf-8")
                data = []
                if cursor is not None and b'"method"' not in event:
                    try:
                        obj = orjson.loads(event)
                        if type(obj) is dict and "id" in obj:
                            cursor.replied.add(obj["id"])
                    except orjson.JSONDecodeError:
                        pass
                yield event
            continue
        if line[0] == ":":
            continue  # a comment: keep-alive
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "data":
            data.append(value)
        elif cursor is not None:
            if field == "id":
                cursor.last_id = value
            elif field == "retry" and value.isdigit():
                cursor.retry_ms = int(value)
    if data:
        yield "\n".join(data).encode("utf-8")
