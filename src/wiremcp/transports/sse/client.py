"""The client end of the deprecated HTTP+SSE transport (2024-11-05 basic/transports.mdx, "HTTP with SSE").

Rules it keeps:

* `open` sends ``GET`` to the server's URL with ``Accept: text/event-stream``
  and waits for the ``endpoint`` event, whose data is the URI every client
  message is POSTed to; a ``message`` before it is refused (the server
  "MUST send an endpoint event" first), events of other names are skipped. The URI is resolved against the
  stream's URL and must have the same origin (scheme, host and port):
  messages, and the credentials the ``auth`` hook adds to them, are never
  sent to another origin (the official SDK's client refuses it too). A
  reply that is not ``200 text/event-stream``, a stream that ends, or no
  ``endpoint`` event within ``endpoint_timeout`` seconds fails `open` with
  `HTTPError` or `ConnectionClosed`;
* every later ``message`` event (an event without a name is a message too,
  as the SSE standard reads it) is one JSON-RPC message from the server,
  handed to the client on a shared channel (``origin`` ``None``): replies,
  notifications and the server's own requests all come this way. Events of
  any other name (and a second ``endpoint``) are logged and skipped;
* each client message is its own ``POST`` to the endpoint (``Content-Type:
  application/json``); the server answers ``202 Accepted`` and the reply
  comes on the stream. A non-2xx answer fails the request with `HTTPError`
  (status and body), or with the JSON-RPC error in its body when it holds
  one; a refused notification or reply is logged. A POST whose connection
  could not be made fails with `NotSent`; any other failure after it
  started with `ConnectionClosed`;
* the stream is the connection: when it ends or breaks, the client is told
  (``receiver.closed``) and every request in flight fails with
  `ConnectionClosed`. Nothing resumes (2024-11-05 has no resumability);
* cancellation: the channel is shared, so the client sends
  ``notifications/cancelled`` itself (``cancel_by_notification``); when this
  transport stands in for a Streamable HTTP one (the fallback in
  `wiremcp.transports.http.client`), whose client cancels by closing a
  stream, `cancel` sends that notification for it;
* the transport carries the ``initialize`` era: build a ``Client`` on it
  with ``era="legacy"``. With ``era="auto"`` the ``server/discover`` probe
  travels like any message: a server that serves both eras on one stream
  (the official SDK 2.3 does) may answer it, and one that does not answer in
  time is legacy (``silence_means_legacy``, as over stdio);
* the era cache key is the URL's origin, marked as SSE;
* an event (or a POST's answer) of more than `MAX_RESPONSE_SIZE` bytes
  ends the stream (or fails the request) with `ConnectionClosed`: a server
  cannot make the client hold an endless line.

The ``auth`` hook is the one `wiremcp.transports.http.client.HTTPAuth`
describes: its headers are added to the ``GET`` and to each ``POST``, and a
response it asks to retry (a fresh token after a 401) is sent again, at
most twice. The HTTP itself is aiohttp's (the ``http`` extra), as for
Streamable HTTP; a caller's ``aiohttp.ClientSession`` may be given as
``http_client`` (not closed here). The constructor's checks (the URL), the
cache key and the aiohttp session are `HTTPTransport`'s, from the base both
share (`wiremcp.transports.http._endpoint.Endpoint`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

import orjson

from ...client import ClientError, ConnectionClosed, HTTPError, NotSent, Receiver
from ..http._endpoint import Endpoint, env_proxy
from ..http.client import DEFAULT_CONNECT_TIMEOUT, MAX_RESPONSE_SIZE, HTTPAuth, _read_body

if TYPE_CHECKING:
    import aiohttp

__all__ = ["SSETransport", "DEFAULT_ENDPOINT_TIMEOUT"]

log = logging.getLogger("wiremcp.client")

#: Seconds `open` waits for the ``endpoint`` event after the stream's head arrived.
DEFAULT_ENDPOINT_TIMEOUT = 10.0
#: Times one request is sent again because the auth hook asked (401/403, a DPoP nonce).
_AUTH_RETRIES = 2
#: Connections open at once to the server (aiohttp's default): the stream and the POSTs in flight.
_MAX_CONNECTIONS = 100
_BOM = b"\xef\xbb\xbf"


class SSETransport(Endpoint):
    """A `ClientTransport` to a 2024-11-05 HTTP+SSE server (see the module docstring)."""

    cancel_by_notification = True
    silence_means_legacy = True

    def __init__(
        self,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        endpoint_timeout: float = DEFAULT_ENDPOINT_TIMEOUT,
        auth: HTTPAuth | None = None,
        http_client: aiohttp.ClientSession | None = None,
    ) -> None:
        super().__init__(
            url, "sse", headers=headers, connect_timeout=connect_timeout, auth=auth, http_client=http_client
        )
        self.endpoint_timeout = endpoint_timeout
        #: The URL messages are POSTed to, from the ``endpoint`` event (``None`` until `open` returns).
        self.endpoint: str | None = None
        self._stream: asyncio.Task[None] | None = None
        self._posts: set[asyncio.Task[None]] = set()

    # -- ClientTransport -----------------------------------------------------

    async def open(self, receiver: Receiver) -> None:
        """GET the event stream and wait for its ``endpoint`` event."""
        self._receiver = receiver
        if self._http is None:
            self._make_http("SSE", _MAX_CONNECTIONS)
        self._proxy = env_proxy(self.url)
        endpoint: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._stream = asyncio.get_running_loop().create_task(self._read_stream(endpoint))
        try:
            async with asyncio.timeout(self.endpoint_timeout + self.connect_timeout):
                self.endpoint = await endpoint
        except BaseException:
            await self.aclose()
            raise

    def send(
        self, data: bytes, *, id: Any = None, method: str | None = None, params: Any = None, headers: Any = None
    ) -> None:
        """POST ``data`` to the endpoint the stream announced (replies come on it); ConnectionClosed once closed."""
        if self._closed or self._stream is None or self._stream.done():
            raise ConnectionClosed(f"the SSE stream from {self.url} is closed")
        task = asyncio.get_running_loop().create_task(self._post(data, id, method))
        self._posts.add(task)
        task.add_done_callback(self._posts.discard)

    def abandon(self, id: Any) -> None:
        """Nothing to close: replies share the one stream (the client sent ``notifications/cancelled``)."""

    def cancel(self, id: Any, reason: str = "cancelled by the client") -> None:
        """Send ``notifications/cancelled`` for ``id`` (for a client that cancels by closing a stream)."""
        if self._closed:
            return
        note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id, "reason": reason}}
        try:
            self.send(orjson.dumps(note))
        except ClientError:
            pass

    async def aclose(self) -> None:
        """Cancel the POSTs in flight and close the stream."""
        if self._closed:
            return
        self._closed = True
        tasks = [*self._posts, *([self._stream] if self._stream is not None else [])]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        await self._close_http()

    # -- HTTP ----------------------------------------------------------------

    async def _request(self, method: str, url: str, headers: dict[str, str], body: bytes | None) -> aiohttp.ClientResponse:
        """One request with the ``auth`` hook around it (at most ``_AUTH_RETRIES`` retries when it asks)."""
        assert self._http is not None
        base = {**self.headers, **headers}
        attempt = 0
        while True:
            sent = base if self.auth is None else {**base, **await self.auth.headers(method, url)}
            resp = await self._http.request(method, url, data=body, headers=sent, allow_redirects=False, proxy=self._proxy)
            if self.auth is None:
                return resp
            try:
                retry = await self.auth.on_response(resp.status, resp.headers, url)
            except BaseException:
                resp.close()
                raise
            if not retry or attempt == _AUTH_RETRIES:
                return resp
            attempt += 1
            await _read_body(resp)
            resp.release()

    async def _read_stream(self, endpoint: asyncio.Future[str]) -> None:
        receiver = self._receiver
        assert receiver is not None
        error: BaseException | None = None
        try:
            resp = await self._request("GET", self.url, {"Accept": "text/event-stream"}, None)
            try:
                kind = resp.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
                if resp.status != 200 or kind != "text/event-stream":
                    body = await _read_body(resp)
                    raise HTTPError(resp.status, body, "GET (the SSE stream)")
                events = _Events()
                async for chunk in resp.content.iter_any():
                    for name, data in events.feed(chunk):
                        if name == "message":
                            if not endpoint.done():
                                raise ConnectionClosed(f"the SSE stream from {self.url} began with a 'message' event, not 'endpoint'")
                            receiver.message(data, None, None)
                        elif name == "endpoint" and not endpoint.done():
                            endpoint.set_result(self._endpoint_url(data))
                        else:
                            log.debug("SSE event %r from %s skipped", name, self.url)
            finally:
                resp.close()
            error = ConnectionClosed(f"the server closed the SSE stream from {self.url}")
        except asyncio.CancelledError:
            if not endpoint.done():
                endpoint.cancel()
            raise
        except ClientError as exc:
            error = exc
        except Exception as exc:  # noqa: BLE001 - aiohttp errors: the connection is gone
            import aiohttp

            unsent = isinstance(exc, (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError))
            error = (NotSent if unsent else ConnectionClosed)(f"the SSE stream from {self.url} failed: {exc!r}")
        if not endpoint.done():
            endpoint.set_exception(error)
        elif not self._closed:
            receiver.closed(error)

    def _endpoint_url(self, data: bytes) -> str:
        url = urljoin(self.url, data.decode("utf-8", "replace").strip())
        mine, theirs = urlsplit(self.url), urlsplit(url)
        if (theirs.scheme, theirs.netloc.lower()) != (mine.scheme, mine.netloc.lower()):
            raise ConnectionClosed(f"the SSE endpoint event names {url!r}, not on the stream's origin {mine.scheme}://{mine.netloc}")
        return url

    async def _post(self, data: bytes, id: Any, method: str | None) -> None:
        receiver = self._receiver
        assert receiver is not None and self.endpoint is not None
        try:
            resp = await self._request("POST", self.endpoint, {"Content-Type": "application/json"}, data)
            try:
                status = resp.status
                body = await _read_body(resp)
            finally:
                resp.release()
            if status < 300:
                return
            obj: Any = None
            if body[:1] == b"{":
                try:
                    obj = orjson.loads(body)
                except orjson.JSONDecodeError:
                    pass
            if type(obj) is dict and ("result" in obj or "error" in obj):
                receiver.message(body, None, status)
            elif id is not None:
                receiver.request_failed(id, HTTPError(status, body, method))
            else:
                log.warning("the server refused a notification or response with HTTP %d: %r", status, body[:200])
        except asyncio.CancelledError:
            raise
        except ClientError as exc:  # from the auth hook
            if id is not None:
                receiver.request_failed(id, exc)
            else:
                log.warning("HTTP POST to %s failed: %s", self.endpoint, exc)
        except Exception as exc:  # noqa: BLE001 - aiohttp errors fail the request
            import aiohttp

            unsent = isinstance(exc, (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError))
            if id is not None:
                receiver.request_failed(id, (NotSent if unsent else ConnectionClosed)(f"HTTP POST to {self.endpoint} failed: {exc!r}"))
            else:
                log.warning("HTTP POST to %s failed: %r", self.endpoint, exc)


class _Events:
    """An incremental text/event-stream parser: bytes in, ``(event name, data)`` pairs out.

    Lines may end in CRLF, LF or CR; comments (``:`` lines) and fields other
    than ``event`` and ``data`` are skipped; an event without ``event:`` is
    a ``message`` (the SSE standard); an event with no data is not dispatched.
    """

    __slots__ = ("_buf", "_pieces", "_name", "_data", "_started", "_held")

    def __init__(self) -> None:
        self._buf = b""
        self._pieces: list[bytes] = []  # a long line arriving piece by piece: joined once, at its end
        self._name = b""
        self._data: list[bytes] = []
        self._started = False
        self._held = 0  # bytes of the event being read (its data and the unfinished line)

    def feed(self, chunk: bytes) -> list[tuple[str, bytes]]:
        """The events completed by this chunk; `ConnectionClosed` once the event being read
        grows past `MAX_RESPONSE_SIZE` (events finished before it are delivered first)."""
        if self._started and b"\n" not in chunk and b"\r" not in chunk and not self._buf.endswith(b"\r"):
            self._pieces.append(chunk)
            self._held += len(chunk)
            if self._held > MAX_RESPONSE_SIZE:
                raise ConnectionClosed(f"the server sent an SSE event of more than {MAX_RESPONSE_SIZE} bytes: refused")
            return []
        if self._pieces:
            self._buf = b"".join((self._buf, *self._pieces))
            self._pieces = []
        buf = self._buf + chunk
        if not self._started:
            if len(buf) < 3 and _BOM.startswith(buf):
                self._buf = buf  # perhaps the start of a byte order mark: wait for more
                return []
            self._started = True
            if buf.startswith(_BOM):
                buf = buf[3:]
        # A CR at the very end may be the first half of CRLF: keep it for the next chunk.
        cut = len(buf) - 1 if buf.endswith(b"\r") else len(buf)
        head, self._buf = buf[:cut], buf[cut:]
        head = head.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = head.split(b"\n")
        self._buf = lines.pop() + self._buf
        out: list[tuple[str, bytes]] = []
        for line in lines:
            if not line:
                if self._data:
                    out.append(((self._name or b"message").decode("utf-8", "replace"), b"\n".join(self._data)))
                self._name, self._data = b"", []
            elif line[0] != 0x3A:
                field, _, value = line.partition(b":")
                if value[:1] == b" ":
                    value = value[1:]
                if field == b"data":
                    self._data.append(value)
                elif field == b"event":
                    self._name = value
        self._held = len(self._buf) + (sum(map(len, self._data)) if self._data else 0)
        if self._held > MAX_RESPONSE_SIZE and not out:  # events finished first are delivered; the next chunk fails
            raise ConnectionClosed(f"the server sent an SSE event of more than {MAX_RESPONSE_SIZE} bytes: refused")
        return out
