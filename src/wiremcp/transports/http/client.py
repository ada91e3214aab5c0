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
  SSE lines may end in CRLF, LF or CR; comment lines (keep-alives),
  ``event:`` and unknown fields are ignored; ``id:`` and ``retry:`` are used
  only to resume a legacy stream (one that ends before its response,
  closed or cut mid-body, is resumed with ``GET`` and ``Last-Event-ID``
  after the server's ``retry`` delay); 2026-07-28 streams do not resume;
* a non-2xx reply keeps the server's body: a JSON-RPC error in it is
  delivered as the reply (with the HTTP status on the `RemoteError`);
  without one the request fails with `HTTPError` (status and body), whose
  message names the likely cause: a 404 outside a session is "no MCP
  endpoint at URL", a 401 "requires authorization", a 403 "refused";
* a request whose connection could not be made (refused, connect timeout)
  fails with `NotSent`, which the client may send again; any other failure
  after the POST started is `ConnectionClosed`: the server may have acted;
* cancellation is closing the request's response stream (cancellation.mdx,
  "Transport-Specific Cancellation"): `abandon` cancels the POST's task,
  which closes its connection (it is not reused); nothing is sent;
* the era cache is keyed by the URL's origin (versioning.mdx);
* legacy (2025-11-25) servers: an ``Mcp-Session-Id`` the server assigns on a
  2xx response is sent back on every later POST, and ``DELETE`` ends the
  session on close; one that comes with a 4xx or 5xx is not kept (the
  official mcp 1.x server mints one on the 400 refusing the era probe: a
  failed probe leaves no session behind);
  after the handshake a GET stream is opened for the server's own requests
  (a 405 just means there is none); a server request arriving on any SSE
  stream is answered by its own POST;
* no ``$ref`` in any schema is ever fetched: the transport only sends to
  the endpoint it was given;
* a response body, or one SSE event, of more than `MAX_RESPONSE_SIZE`
  bytes (16 MiB, what a wiremcp server accepts) fails its request with
  `ConnectionClosed` as it arrives: a server cannot make the client hold
  an endless body or line;
* the deprecated HTTP+SSE transport (transports.mdx, "Backwards
  Compatibility"): while no POST has been answered yet, a request answered
  with a 4xx and no JSON-RPC body makes the transport ``GET`` the same URL
  expecting an event stream whose first event is ``endpoint``
  (`wiremcp.transports.sse.client.SSETransport`). When it comes, every
  later message goes through that transport; the ``initialize`` that got
  the 4xx is sent again over it, any other request (the era probe) fails
  with its 4xx as before, which the client reads as "legacy" and follows
  with ``initialize``. When no event stream comes, nothing changes.

Authorization hook (``auth=``, see `HTTPAuth`): an object with two
coroutines. ``await auth.headers(method, url)`` runs before every request
(POST, the legacy GET stream, DELETE) and its headers are added last (an
``Authorization`` bearer token, a DPoP proof for exactly this method and
URL). ``await auth.on_response(status, headers, url)`` runs on every
response before its body is read (401/403 with ``WWW-Authenticate``, a
``DPoP-Nonce`` on any status); returning True discards that response and
sends the same request again with fresh ``auth.headers``, at most twice (a
fresh token, then perhaps a DPoP nonce the server wants with it); the last
response is delivered whatever it is. A `ClientError` the hook raises (an
``AuthError``: the flow could not complete) fails that request. Without ``auth`` neither is awaited.

The HTTP itself is aiohttp's (the ``http`` extra): HTTP/1.1 keep-alive
pooling (``max_connections``), TLS, its C (llhttp) response parser. Chosen
over httpx for CPU and maintenance; the measurement and the other
candidates are in docs/decisions.md ("HTTP client: aiohttp") and
bench/client_bench.py. Two of its defaults are changed: the proxy is read
from ``HTTP_PROXY``/``HTTPS_PROXY``/``NO_PROXY`` once, when the transport
opens (aiohttp's ``trust_env`` would look it up, and ``~/.netrc``, in a
worker thread on every request), and there is no overall timeout (the
`Client`'s per-request timeout bounds each call). Redirects are not
followed; cookies the server sets are kept for the connection's life. A
caller's own ``aiohttp.ClientSession`` can be given as ``http_client`` (it
is not closed). The URL check, the cache key and the aiohttp session are
shared with the HTTP+SSE transport (`_endpoint.Endpoint`). aiohttp is
touched only by `HTTPTransport._connect`, `_exchange`, `_close_http` and
`_Reply`; the rest of the transport sees a `_Reply` (status, headers, body).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, AsyncIterator, Mapping, Protocol

import orjson

from ...client import ClientError, ConnectionClosed, HTTPError, NotSent, Receiver
from ...jsonrpc import DEFAULT_MAX_MESSAGE_SIZE
from ._endpoint import Endpoint, env_proxy
from ._resend import resend_after, resending

if TYPE_CHECKING:
    import aiohttp

    from ..sse.client import SSETransport

__all__ = ["HTTPTransport", "HTTPAuth", "DEFAULT_CONNECT_TIMEOUT", "DEFAULT_MAX_CONNECTIONS", "MAX_RESPONSE_SIZE"]

log = logging.getLogger("wiremcp.client")

#: Seconds to establish a TCP (and TLS) connection. Waiting for a reply is
#: bounded by the client's per-request timeout, not here.
DEFAULT_CONNECT_TIMEOUT = 10.0
#: Connections open at once to the endpoint; more requests in flight wait for one.
DEFAULT_MAX_CONNECTIONS = 100
_ACCEPT = "application/json, text/event-stream"
_BOM = b"\xef\xbb\xbf"


class HTTPAuth(Protocol):
    """What `HTTPTransport(auth=...)` calls around each request (see the module docstring)."""

    async def headers(self, method: str, url: str) -> dict[str, str]:
        """Headers to add to the request about to be sent (``method`` is POST, GET or DELETE)."""
        ...

    async def on_response(self, status: int, headers: Mapping[str, str], url: str) -> bool:
        """Look at a response's status and headers; True sends the request once more."""
        ...


class _Reply:
    """One HTTP response as the transport uses it: status, headers (case-insensitive), the body.

    The body is read whole (`read`) or as it comes (`chunks`); then exactly
    one of `release` (done with it: a fully read connection is reused) or
    `close` (abandoned: the connection is closed, never reused) is called.
    """

    __slots__ = ("status", "headers", "_resp")

    def __init__(self, resp: aiohttp.ClientResponse) -> None:
        self.status = resp.status
        self.headers: Mapping[str, str] = resp.headers
        self._resp = resp

    def content_type(self) -> str:
        return self.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()

    async def read(self) -> bytes:
        return await _read_body(self._resp)

    def chunks(self) -> AsyncIterator[bytes]:
        return self._resp.content.iter_any()

    def release(self) -> None:
        self._resp.release()  # aiohttp closes the connection if the body was not read to its end

    def close(self) -> None:
        self._resp.close()


class HTTPTransport(Endpoint):
    """A `ClientTransport` to a Streamable HTTP endpoint."""

    cancel_by_notification = False
    mirrors_headers = True

    def __init__(
        self,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        auth: HTTPAuth | None = None,
        http_client: aiohttp.ClientSession | None = None,
    ) -> None:
        super().__init__(
            url, "http", headers=headers, connect_timeout=connect_timeout, auth=auth, http_client=http_client
        )
        self.max_connections = max_connections
        self.session_id: str | None = None
        self._tasks: dict[Any, asyncio.Task[None]] = {}
        self._background: set[asyncio.Task[None]] = set()
        self._legacy: str | None = None  # the negotiated 2025-11-25-era version, once initialized
        self._answered = False  # a POST got a 2xx or a JSON-RPC reply: no fallback to HTTP+SSE after that
        self._fallback: asyncio.Task[SSETransport | None] | None = None
        #: The 2024-11-05 HTTP+SSE transport this one fell back to, if it did.
        self.sse: SSETransport | None = None

    # -- the HTTP library: only these three methods and `_Reply` touch it ---------

    async def _connect(self) -> None:
        if self._http is not None:
            return
        self._make_http("HTTP", self.max_connections)
        self._proxy = env_proxy(self.url)

    async def _exchange(self, method: str, headers: dict[str, str], body: bytes | None) -> _Reply:
        """Send one request; return once the response's head is in (its body follows in the `_Reply`)."""
        assert self._http is not None
        resp = await self._http.request(
            method, self.url, data=body, headers=headers, allow_redirects=False, proxy=self._proxy
        )
        return _Reply(resp)

    # -- ClientTransport -----------------------------------------------------

    async def open(self, receiver: Receiver) -> None:
        """Keep ``receiver`` for what the server sends and open the HTTP session (nothing is sent yet)."""
        self._receiver = receiver
        await self._connect()

    def send(
        self, data: bytes, *, id: Any = None, method: str | None = None, params: Any = None, headers: Any = None
    ) -> None:
        """POST ``data`` (a request's response stream is read in the background); ConnectionClosed once closed."""
        if self._closed:
            raise ConnectionClosed("the HTTP transport is closed")
        if self.sse is not None:
            return self.sse.send(data, id=id, method=method)
        task = asyncio.get_running_loop().create_task(self._post(data, id, method, headers))
        if id is not None:
            self._tasks[id] = task
        else:
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    def send_raw(self, data: bytes) -> None:
        """POST ``data`` as it is, without an id to follow (for tests of the server's errors)."""
        self.send(data)

    def abandon(self, id: Any) -> None:
        """Stop reading the response to ``id``: close its stream (over HTTP+SSE, send notifications/cancelled)."""
        task = self._tasks.pop(id, None)
        if task is not None:
            task.cancel()
        elif self.sse is not None:  # one shared stream: cancelling is a notification there
            self.sse.cancel(id)

    def legacy_session_started(self, version: str) -> asyncio.Future[None] | None:
        """2025-11-25: open the GET stream on which the server may send requests and notifications.

        Returns a future done once the stream is open (its response head is in), refused, or
        ``connect_timeout`` has passed: the client sends nothing more before, so a server that
        sends a request on the GET stream as soon as a tool call arrives finds the stream open
        (under load the GET could otherwise reach it after the call, and the request be lost).
        """
        self._legacy = version
        if self.sse is not None:
            return None
        loop = asyncio.get_running_loop()
        opened: asyncio.Future[None] = loop.create_future()
        task = loop.create_task(self._listen_legacy(version, opened))
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        task.add_done_callback(lambda _: _settle(opened))
        waited = loop.call_later(self.connect_timeout, _settle, opened)
        opened.add_done_callback(lambda _: waited.cancel())
        return opened

    async def aclose(self) -> None:
        """Cancel the requests and streams in flight, end a 2025-11-25 session (DELETE, best effort), close."""
        if self._closed:
            return
        self._closed = True
        tasks = [*self._tasks.values(), *self._background]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()
        if self._fallback is not None and not self._fallback.done():
            self._fallback.cancel()  # closing while the HTTP+SSE stream was being opened
            await asyncio.gather(self._fallback, return_exceptions=True)
        if self.sse is not None:
            await self.sse.aclose()
        if self._http is not None:
            if self.session_id is not None:
                try:  # 2025-11-25 transports: end the session (best effort, bounded: closing never hangs)
                    async with asyncio.timeout(_DELETE_TIMEOUT):
                        reply = await self._request("DELETE", self._request_headers(None), None)
                        reply.close()
                except TimeoutError:
                    log.warning("the server did not answer DELETE (end of session) within %.0f s", _DELETE_TIMEOUT)
                except Exception:  # noqa: BLE001 - best effort
                    pass
            await self._close_http()

    # -- requests ------------------------------------------------------------

    def _request_headers(self, extra: dict[str, str] | None) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": _ACCEPT}
        if self.headers:
            headers.update(self.headers)
        if extra:
            headers.update(extra)
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        return headers

    def _get_headers(self, extra: dict[str, str]) -> dict[str, str]:
        headers = self._request_headers(extra)
        headers["Accept"] = "text/event-stream"
        del headers["Content-Type"]
        return headers

    async def _request(self, method: str, headers: dict[str, str], body: bytes | None, rpc: str | None = None) -> _Reply:
        """`_exchange`, with the ``auth`` hook around it: at most ``_AUTH_RETRIES`` retries when it
        asks (a fresh token, then perhaps the DPoP nonce the server wants with it, RFC 9449 section 9).
        A connection lost before any response: sent again when `_resend` allows (``rpc``: the JSON-RPC method)."""
        auth = self.auth
        if auth is None:  # the common case: no wrapper coroutine, nor closure, unless the first try fails
            try:
                return await self._exchange(method, headers, body)
            except Exception as exc:  # noqa: BLE001 - resend_after raises it again unless it may be resent
                return await resend_after(exc, lambda: self._exchange(method, headers, body), method, rpc, self.url)

        async def authorized() -> _Reply:
            assert auth is not None
            return await self._exchange(method, {**headers, **await auth.headers(method, self.url)}, body)

        attempt = 0
        while True:
            reply = await resending(authorized, method, rpc, self.url)
            try:
                retry = await auth.on_response(reply.status, reply.headers, self.url)
            except BaseException:
                reply.close()
                raise
            if not retry or attempt == _AUTH_RETRIES:
                return reply
            attempt += 1
            try:
                await reply.read()  # drained: the connection stays reusable
            finally:
                reply.release()

    async def _post(self, data: bytes, id: Any, method: str | None, extra: dict[str, str] | None) -> None:
        receiver = self._receiver
        assert receiver is not None
        answered = replied = False
        had_session = self.session_id is not None  # a 404 in a session: the session is gone, not the endpoint
        try:
            reply = await self._request("POST", self._request_headers(extra), data, method)
            try:
                status = reply.status
                session = reply.headers.get("Mcp-Session-Id")
                if session and status < 400:  # a refused POST opens no session (official mcp 1.x mints one anyway)
                    self.session_id = session
                kind = reply.content_type()
                if kind == "text/event-stream" and status < 400:
                    cursor = _SSE(track=self._legacy is not None)
                    try:
                        async for chunk in reply.chunks():
                            for event in cursor.feed(chunk):
                                answered = True
                                receiver.message(event, id, None)
                    except Exception as exc:  # noqa: BLE001 - a legacy stream cut mid-body is resumed below
                        if id is None or self._legacy is None or cursor.last_id is None:
                            raise
                        log.info("the SSE stream for %s dropped (%r); resuming after event %s", method, exc, cursor.last_id)
                    else:
                        for event in cursor.end():
                            answered = True
                            receiver.message(event, id, None)
                    body = b""
                else:
                    body = await reply.read()
            except BaseException:
                reply.close()
                raise
            reply.release()
            if kind == "text/event-stream" and status < 400:
                if id is not None and self._legacy is not None and cursor.last_id is not None:
                    if not await self._resume(id, cursor):
                        receiver.request_failed(
                            id, ConnectionClosed(f"the SSE stream for {method} ended and could not be resumed")
                        )
                    return
            elif body and (kind == "application/json" or body[:1] == b"{"):
                try:
                    obj = orjson.loads(body)
                except orjson.JSONDecodeError:
                    obj = None
                if type(obj) is dict and ("result" in obj or "error" in obj or "method" in obj):
                    answered = True
                    receiver.message(body, id, status if status >= 400 else None)
                    replied = "method" not in obj and obj.get("id") == id  # its reply: nothing left to fail below
            if status < 400 or answered:
                self._answered = True
            elif id is not None and 400 <= status < 500 and await self._fall_back(data, id, method):
                return
            if id is not None and not answered:
                receiver.request_failed(id, _refusal(status, body, method, self.url, had_session))
            elif id is None and status >= 400:
                log.warning("the server refused a notification or response with HTTP %d: %r", status, body[:200])
            elif id is not None and not replied:
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
        except Exception as exc:  # noqa: BLE001 - aiohttp errors, and anything else, fail the request
            if id is not None:
                import aiohttp  # loaded by _connect

                # Only a failed connect is known to have sent nothing (the client may retry it).
                unsent = isinstance(exc, (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError))
                kind_ = NotSent if unsent else ConnectionClosed
                failure = kind_(f"HTTP POST to {self.url} failed: {exc!r}")
                failure.__cause__ = exc  # what the connection failed of, for a caller that explains it (cli/_client.py)
                receiver.request_failed(id, failure)
            else:
                log.warning("HTTP POST to %s failed: %r", self.url, exc)
        finally:
            if id is not None and self._tasks.get(id) is asyncio.current_task():
                del self._tasks[id]

    async def _fall_back(self, data: bytes, id: Any, method: str | None) -> bool:
        """A 4xx before any answer: try the 2024-11-05 HTTP+SSE transport on the same URL (see the docstring).

        True when the request was sent again over it (``initialize``).
        """
        if self._answered:
            return False
        if self._fallback is None:  # one attempt, shared by the requests that got a 4xx meanwhile
            self._fallback = asyncio.get_running_loop().create_task(self._open_sse())
        sse = await asyncio.shield(self._fallback)
        if sse is None:
            return False
        if method == "initialize":
            sse.send(data, id=id, method=method)
            return True
        return False

    async def _open_sse(self) -> SSETransport | None:
        from ..sse.client import SSETransport

        receiver = self._receiver
        assert receiver is not None
        sse = SSETransport(self.url, headers=self.headers, connect_timeout=self.connect_timeout, auth=self.auth, http_client=self._http)
        try:
            await sse.open(receiver)
        except (ClientError, TimeoutError) as exc:
            log.debug("no HTTP+SSE fallback at %s: %s", self.url, exc)
            return None
        log.info("%s speaks the 2024-11-05 HTTP+SSE transport; messages go to %s", self.url, sse.endpoint)
        self.sse = sse
        return sse

    async def _listen_legacy(self, version: str, opened: asyncio.Future[None]) -> None:
        receiver = self._receiver
        assert receiver is not None
        try:
            reply = await self._request("GET", self._get_headers({"MCP-Protocol-Version": version}), None)
            _settle(opened)
            try:
                if reply.status != 200 or reply.content_type() != "text/event-stream":
                    log.debug("no GET stream (HTTP %d); server requests come on POST streams only", reply.status)
                    return
                sse = _SSE(track=False)
                async for chunk in reply.chunks():
                    for event in sse.feed(chunk):
                        receiver.message(event, None, None)
            finally:
                reply.close()  # a stream that ended, or was never one: the connection is not reused
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the GET stream is optional
            log.debug("the GET stream ended: %r", exc)

    async def _resume(self, id: Any, cursor: _SSE) -> bool:
        """2025-11-25 resumability: GET with Last-Event-ID after the server's retry delay.

        Returns True once the reply to ``id`` came (or nothing is left to wait
        for). Used only with legacy servers; 2026-07-28 streams do not resume.
        """
        receiver = self._receiver
        assert receiver is not None
        for _ in range(_MAX_RESUMES):
            if id in cursor.replied:
                return True
            await asyncio.sleep((cursor.retry_ms if cursor.retry_ms is not None else 1000) / 1000)
            headers = self._get_headers({"MCP-Protocol-Version": self._legacy or "", "Last-Event-ID": cursor.last_id or ""})
            reply = await self._request("GET", headers, None)
            try:
                if reply.status != 200:
                    return False
                async for chunk in reply.chunks():
                    for event in cursor.feed(chunk):
                        receiver.message(event, id, None)
                for event in cursor.end():
                    receiver.message(event, id, None)
            finally:
                reply.close()
        return id in cursor.replied


#: Seconds `aclose` waits for the server to answer the DELETE that ends a legacy session.
_DELETE_TIMEOUT = 5.0
#: Times one request is sent again because the auth hook asked (401/403, a DPoP nonce).
_AUTH_RETRIES = 2
#: GET reconnections tried for one legacy request whose SSE stream ended early.
_MAX_RESUMES = 3
#: The largest response body, or SSE event, the client holds (what the server accepts:
#: `wiremcp.jsonrpc.DEFAULT_MAX_MESSAGE_SIZE`); a server sending more fails the request.
MAX_RESPONSE_SIZE = DEFAULT_MAX_MESSAGE_SIZE


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _too_big(url: str) -> ConnectionClosed:
    return ConnectionClosed(f"{url} sent a message of more than {MAX_RESPONSE_SIZE} bytes: refused")


async def _read_body(resp: aiohttp.ClientResponse) -> bytes:
    """The whole body, refused (`ConnectionClosed`) past `MAX_RESPONSE_SIZE` bytes."""
    length = resp.content_length
    if length is not None and length <= MAX_RESPONSE_SIZE:
        return await resp.read()  # aiohttp reads exactly Content-Length bytes
    parts: list[bytes] = []
    size = 0
    async for chunk in resp.content.iter_any():
        size += len(chunk)
        if size > MAX_RESPONSE_SIZE:
            raise _too_big(str(resp.url))
        parts.append(chunk)
    return b"".join(parts)


class _SSE:
    """An incremental text/event-stream parser: bytes in, each event's ``data`` out (as bytes).

    Also where the stream got to, for legacy resumption: the last event id,
    the server's retry delay and (with ``track``) the ids of the replies seen.
    """

    __slots__ = ("last_id", "retry_ms", "replied", "_track", "_partial", "_data", "_skip_lf", "_started", "_held")

    def __init__(self, *, track: bool) -> None:
        self.last_id: str | None = None
        self.retry_ms: int | None = None
        self.replied: set[Any] = set()
        self._track = track
        self._partial: list[bytes] = []  # the start of a line whose end has not come yet
        self._data: list[bytes] = []
        self._skip_lf = False  # the last chunk ended in CR: a LF first in the next one belongs to it
        self._started = False
        self._held = 0  # bytes of the event being read (its data and the unfinished line)

    def feed(self, chunk: bytes) -> list[bytes]:
        """The events completed by this chunk of the body; `ConnectionClosed` when the event being
        read grows past `MAX_RESPONSE_SIZE` (a server must not make the client hold without bound)."""
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        if b"\n" not in chunk and b"\r" not in chunk:
            if chunk:
                self._partial.append(chunk)  # a long line arriving piece by piece: join it once, at its end
                self._held += len(chunk)
                if self._held > MAX_RESPONSE_SIZE:
                    raise _too_big("the server")
            return []
        if self._partial:
            self._partial.append(chunk)
            buf = b"".join(self._partial)
            self._partial = []
        else:
            buf = chunk
        if not self._started:
            self._started = True
            if buf.startswith(_BOM):
                buf = buf[3:]
        if b"\r" in buf:
            self._skip_lf = buf.endswith(b"\r")
            buf = buf.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = buf.split(b"\n")
        last = lines.pop()
        if last:
            self._partial.append(last)
        events: list[bytes] = []
        for line in lines:
            if not line:
                if self._data:
                    event = self._dispatch()
                    if event:  # an event with empty data (the 2025-11-25 priming event) carries only its id
                        events.append(event)
            elif line[0] != 0x3A:  # a line starting with ":" is a comment (keep-alive)
                field, _, value = line.partition(b":")
                if value[:1] == b" ":
                    value = value[1:]
                if field == b"data":
                    self._data.append(value)
                elif field == b"id":
                    if b"\0" not in value:
                        self.last_id = value.decode("utf-8", "replace")
                elif field == b"retry" and value.isdigit():
                    self.retry_ms = int(value)
        self._held = len(last) + (sum(map(len, self._data)) if self._data else 0)
        if self._held > MAX_RESPONSE_SIZE and not events:  # events finished first are delivered; the next chunk fails
            raise _too_big("the server")
        return events

    def end(self) -> list[bytes]:
        """The stream ended: an event still being read is delivered too (it may hold the reply)."""
        if self._partial:
            self.feed(b"\n")
        event = self._dispatch() if self._data else b""
        return [event] if event else []

    def _dispatch(self) -> bytes:
        data = self._data
        event = data[0] if len(data) == 1 else b"\n".join(data)
        self._data = []
        if self._track and b'"method"' not in event:
            try:
                obj = orjson.loads(event)
            except orjson.JSONDecodeError:
                pass
            else:
                if type(obj) is dict and "id" in obj:
                    self.replied.add(obj["id"])
        return event


def _refusal(status: int, body: bytes, method: str | None, url: str, in_session: bool) -> HTTPError:
    """The `HTTPError` for a reply with no JSON-RPC message, its message naming the likely cause."""
    error = HTTPError(status, body, method)
    what = f"HTTP {status}" + (f" for {method}" if method else "")
    if status == 404 and not in_session:
        error.args = (f"no MCP endpoint at {url} ({what}); check the URL, its path in particular",)
    elif status == 401:
        error.args = (f"the server at {url} requires authorization ({what}); connect with an auth= hook (OAuth)",)
    elif status == 403:
        error.args = (f"the server at {url} refused the authorization ({what}): the token lacks a scope, or is not accepted",)
    return error
