"""A native HTTP/1.1 server for ASGI 3 apps: one `asyncio.Protocol` per connection, httptools to parse.

``serve_http(server, http_server="native")`` / ``wiremcp run X --http --server native``
runs `MCPApp` on it. It is written against the ASGI interface only, so it
hosts any ASGI 3 app that needs the ``http`` and ``lifespan`` scopes (no
WebSocket, no HTTP/2, no TLS: put a proxy in front for those). Why it exists:
uvicorn (uvloop + httptools) writes each response with two ``write()`` calls,
so two loopback sends, and keeps more state per request (a keep-alive timer,
a task set, per-request events); this server writes once and keeps one
deadline per connection. Measured with the echo tool (bench/README.md):
10-20 % less server CPU per small request than uvicorn with the same app,
and about 25 % more requests per second over 16 connections.

The rules it keeps, per connection:

=========================================  =============================================
situation                                  what happens
=========================================  =============================================
request line + headers > MAX_HEADER_BYTES  431, ``Connection: close``
  or more than MAX_HEADERS header lines
no complete head within ``header_timeout``  408, close (no byte at all yet: close silently)
  of its first byte (or of the connection)
idle keep-alive for ``keepalive_timeout``  close
declared Content-Length > ``max_body_size``  413 before the app runs, close
body grows past ``max_body_size``          413 if nothing was sent yet, else abort; close
unparseable request (httptools/llhttp)     400, close; responses to the requests before it
                                           are sent first (pipelining keeps order)
Upgrade request with a body                400, close (upgrades are not supported)
``Expect: 100-continue``                   ``100 Continue`` when the app first asks for the
                                           body; an app that answers first gets the
                                           connection closed after its response
HTTP/1.1 (or 1.0 + ``keep-alive``)         keep-alive; ``Connection: close`` from either
                                           side, or HTTP/1.0 without it, closes after the
                                           response
pipelined requests                         parsed as they come, answered one at a time in
                                           order; reading pauses while one waits
response without Content-Length            one body message: Content-Length is added;
                                           streamed: chunked (HTTP/1.1) or close-delimited
                                           (HTTP/1.0); HEAD, 1xx, 204, 304 carry no body
client closes the connection               the app's ``receive()`` returns
                                           ``http.disconnect``; later sends are dropped
the app raises / returns without a reply   500 if nothing was sent yet, else close
=========================================  =============================================

Flow control: reading pauses while a request body the app has not taken
reaches BODY_HIGH_WATER bytes, while a pipelined request waits its turn, and
while the transport's write buffer is over its high-water mark; the app's
``send()`` waits for the buffer to drain before writing more. A response is
written with one ``write()`` when its first body message arrives (ASGI: a
server must not send the head before the first body message), so a JSON reply
is one write and one ``send()`` syscall.

Closing: a close decided by the server (an error, ``Connection: close``,
HTTP/1.0) half-closes the socket once the response is flushed and then
discards what the client still sends, for LINGER_TIMEOUT seconds at most,
so that a client still uploading reads the response instead of a reset.

Timeouts cost nothing per request: each connection keeps a deadline, and one
timer per server checks them every ``tick`` (at most a second; it also
refreshes the cached ``Date`` header).

Shutdown (`HTTPServer.shutdown`, run on SIGINT/SIGTERM by `serve`): stop
accepting, call ``on_shutdown`` (``Server.close_subscriptions``, so that
``subscriptions/listen`` streams end with their final result), close idle
connections, let requests in flight finish for ``grace`` seconds (their
responses carry ``Connection: close``), then cancel what is left; a second
signal skips the wait. The ASGI ``lifespan`` startup and shutdown events are
sent around all that when the app takes them.
"""

from __future__ import annotations

import asyncio
import email.utils
import http
import logging
import re
import signal
import socket
import time
from collections import deque
from typing import Any, Awaitable, Callable, MutableMapping
from urllib.parse import unquote

import httptools

__all__ = [
    "HTTPServer",
    "serve",
    "bind_socket",
    "MAX_HEADER_BYTES",
    "MAX_HEADERS",
    "DEFAULT_MAX_BODY_SIZE",
    "DEFAULT_HEADER_TIMEOUT",
    "DEFAULT_KEEPALIVE_TIMEOUT",
    "BODY_HIGH_WATER",
    "LINGER_TIMEOUT",
]

log = logging.getLogger("wiremcp.transport")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]]

#: Bytes of request line plus headers. h11's (and so uvicorn's) default; a
#: browser's head is under 8 KiB, so this only stops abuse.
MAX_HEADER_BYTES = 64 * 1024
#: Header lines per request (Apache's LimitRequestFields default).
MAX_HEADERS = 100
#: Request body bytes the server accepts at all. A guard for apps that do not
#: limit bodies themselves; `MCPApp` refuses past its own, lower
#: ``max_body_size`` first (with a JSON-RPC error body), so `serve_http` sets
#: this above the app's limit.
DEFAULT_MAX_BODY_SIZE = 64 * 1024 * 1024
#: Seconds from a request's first byte (or the connection's opening) to the
#: end of its head: bounds how long a slow client (slowloris) holds a socket.
DEFAULT_HEADER_TIMEOUT = 10.0
#: Seconds an idle keep-alive connection stays open (uvicorn's default).
DEFAULT_KEEPALIVE_TIMEOUT = 5.0
#: Body bytes buffered for an app that is not reading before reading pauses.
#: Measured (bench/driver.py, echo, 1 MB bodies, 16 connections): 32-64 KiB
#: ~1,080 µs of server CPU per request, 128 KiB ~1,350, 256 KiB ~1,550: reading
#: ahead of the app only piles megabytes of body up in memory.
BODY_HIGH_WATER = 64 * 1024
#: Seconds a closing connection keeps discarding what its client still sends.
LINGER_TIMEOUT = 2.0
#: Bodies up to this size are joined with their head into one bytes object
#: for the write; larger ones go out with ``writelines`` (no copy on uvloop).
_JOIN_LIMIT = 64 * 1024

_HEADER_NAME_BAD = re.compile(rb"[\x00-\x20\x7f()<>@,;:\[\]={}\\\"/?]")
_HEADER_VALUE_BAD = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
_NO_BODY_STATUS = frozenset({204, 304})
#: Request headers the server itself reads (after lowercasing).
_REQUEST_SPECIAL = frozenset({b"content-length", b"expect", b"transfer-encoding", b"host"})
#: Response headers the server itself reads or replaces.
_RESPONSE_SPECIAL = frozenset({b"content-length", b"transfer-encoding", b"connection", b"date"})
#: Response header names already validated, to their lowercase form (bounded: apps use few names).
_NAMES: dict[bytes, bytes] = {}


def _checked_name(name: bytes) -> bytes:
    if not name or _HEADER_NAME_BAD.search(name):
        raise RuntimeError(f"invalid HTTP header name {name!r}")
    lname = name.lower()
    if len(_NAMES) < 1024:
        _NAMES[name] = lname
    return lname


def _status_line(status: int) -> bytes:
    try:
        phrase = http.HTTPStatus(status).phrase.encode()
    except ValueError:
        phrase = b""
    return b"HTTP/1.1 %d %s\r\n" % (status, phrase)


_STATUS_LINE = {status: _status_line(status) for status in range(100, 600)}
_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


def _error_response(status: int, message: str, date: bytes) -> bytes:
    body = message.encode("utf-8", "replace")
    return b"%scontent-type: text/plain; charset=utf-8\r\ncontent-length: %d\r\nconnection: close\r\n%s\r\n%s" % (
        _STATUS_LINE.get(status) or _status_line(status), len(body), date, body
    )


def _date_header() -> bytes:
    return b"date: " + email.utils.formatdate(usegmt=True).encode() + b"\r\n"


class _Refusal(Exception):
    """Raised inside a parser callback: answer ``status`` and close."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _address(info: Any) -> tuple[str, int] | None:
    if isinstance(info, tuple) and len(info) >= 2:
        return (str(info[0]), int(info[1]))
    return None


# -- one request / response ----------------------------------------------------


class _Cycle:
    """One request and its response: the ASGI ``receive`` and ``send`` of one app call."""

    __slots__ = (
        "conn",
        "scope",
        "head_only",
        "http10",
        "keep_alive",
        "expect_100",
        "refusal",
        "chunks",
        "buffered",
        "received",
        "message_complete",
        "final_delivered",
        "waiter",
        "disconnected",
        "started",
        "head_sent",
        "complete",
        "status",
        "headers",
        "chunked",
        "remaining",
        "close_delimited",
        "bodyless",
        "task",
    )

    def __init__(self, conn: _Connection, scope: Scope, keep_alive: bool, http10: bool) -> None:
        self.conn = conn
        self.scope = scope
        self.head_only = scope["method"] == "HEAD"
        self.http10 = http10
        self.keep_alive = keep_alive
        self.expect_100 = False
        self.refusal: tuple[int, str] | None = None
        self.chunks: list[bytes] = []
        self.buffered = 0  # bytes in `chunks`
        self.received = 0  # body bytes received in all
        self.message_complete = False
        self.final_delivered = False
        self.waiter: asyncio.Future[None] | None = None
        self.disconnected = False
        self.started = False  # http.response.start received
        self.head_sent = False
        self.complete = False
        self.status = 0
        self.headers: Any = ()
        self.chunked = False
        self.remaining = -1  # Content-Length still owed; -1: not length-delimited
        self.close_delimited = False
        self.bodyless = False  # HEAD, 1xx, 204, 304: whatever body the app sends is dropped
        self.task: asyncio.Task[None] | None = None

    def wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # -- ASGI receive ----------------------------------------------------------

    async def receive(self) -> Message:
        if self.expect_100:
            self.expect_100 = False
            if not self.message_complete and not self.head_sent and not self.disconnected:
                self.conn.transport.write(_CONTINUE)
        while True:
            if self.disconnected or self.complete:
                return {"type": "http.disconnect"}
            chunks = self.chunks
            if chunks or (self.message_complete and not self.final_delivered):
                body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
                self.chunks = []
                self.buffered = 0
                more = not self.message_complete
                if not more:
                    self.final_delivered = True
                conn = self.conn
                if not conn.reading:
                    conn.sync_reading()
                return {"type": "http.request", "body": body, "more_body": more}
            waiter = self.waiter = self.conn.loop.create_future()
            if not self.conn.reading:
                self.conn.sync_reading()
            try:
                await waiter
            finally:
                self.waiter = None

    # -- ASGI send ---------------------------------------------------------------

    async def send(self, message: Message) -> None:
        conn = self.conn
        if conn.write_paused and not self.disconnected:
            await conn.drain()
        kind = message["type"]
        if not self.started:
            if kind != "http.response.start":
                raise RuntimeError(f"expected an ASGI 'http.response.start' message, got {kind!r}")
            self.started = True
            self.expect_100 = False
            self.status = message["status"]
            self.headers = message.get("headers", ())
            return  # ASGI: the head goes out with the first body message
        if self.complete:
            raise RuntimeError(f"unexpected ASGI {kind!r} message after the response was complete")
        if kind != "http.response.body":
            raise RuntimeError(f"expected an ASGI 'http.response.body' message, got {kind!r}")
        if self.disconnected:
            return
        body = message.get("body", b"")
        more = message.get("more_body", False)
        transport = conn.transport
        if not self.head_sent:
            head = self._head(None if more else len(body))
            if not self.bodyless and not self.chunked:
                self._owe(len(body))  # before anything is written: an app error is still a 500
            self.head_sent = True
            if self.bodyless:
                transport.write(head)
            elif self.chunked:
                transport.write(head + self._chunk(body, more))
            else:
                if not body:
                    transport.write(head)
                elif len(body) <= _JOIN_LIMIT:
                    transport.write(head + body)
                else:
                    transport.writelines((head, body))
        elif self.bodyless:
            pass
        elif self.chunked:
            if body or not more:
                transport.write(self._chunk(body, more))
        elif body:
            self._owe(len(body))
            transport.write(body)
        if not more:
            if self.remaining > 0:
                conn.abort_response(self, "the response is shorter than its Content-Length")
                return
            self.complete = True
            self.wake()
            conn.response_done(self)

    def _owe(self, n: int) -> None:
        if self.remaining >= 0:
            if n > self.remaining:
                raise RuntimeError("the response body is longer than its Content-Length")
            self.remaining -= n

    @staticmethod
    def _chunk(body: bytes, more: bool) -> bytes:
        if not body:
            return b"" if more else b"0\r\n\r\n"
        if more:
            return b"%x\r\n%s\r\n" % (len(body), body)
        return b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)

    def _head(self, final_length: int | None) -> bytes:
        """The status line and headers; decides framing and keep-alive."""
        status = self.status
        conn = self.conn
        keep = self.keep_alive and self.message_complete and not conn.closing
        parts = [_STATUS_LINE.get(status) or _status_line(status)]
        length = -1
        has_date = False
        for name, value in self.headers:
            lname = _NAMES.get(name) or _checked_name(name)
            if _HEADER_VALUE_BAD.search(value):
                raise RuntimeError(f"invalid HTTP header value for {name!r}")
            if lname in _RESPONSE_SPECIAL:
                if lname == b"content-length":
                    if length >= 0 or not value.strip().isdigit():
                        raise RuntimeError(f"invalid or repeated content-length {value!r}")
                    length = int(value)
                elif lname == b"transfer-encoding":
                    continue  # framing is the server's business (ASGI)
                elif lname == b"connection":
                    if b"close" in [t.strip() for t in value.lower().split(b",")]:
                        keep = False
                    continue  # re-added below as it applies
                else:
                    has_date = True
            parts += (name, b": ", value, b"\r\n")
        if not has_date:
            parts.append(conn.server.date)
        bodyless = self.bodyless = self.head_only or status < 200 or status in _NO_BODY_STATUS
        if length >= 0:
            self.remaining = 0 if bodyless else length
        elif bodyless:
            if self.head_only and final_length is not None and final_length:
                parts.append(b"content-length: %d\r\n" % final_length)
            self.remaining = 0
        elif final_length is not None:
            parts.append(b"content-length: %d\r\n" % final_length)
            self.remaining = final_length
        elif not self.http10:
            parts.append(b"transfer-encoding: chunked\r\n")
            self.chunked = True
        else:
            self.close_delimited = True  # HTTP/1.0 streaming: the end is the close
            keep = False
        if not keep:
            parts.append(b"connection: close\r\n")
        elif self.http10:
            parts.append(b"connection: keep-alive\r\n")
        self.keep_alive = keep
        parts.append(b"\r\n")
        return b"".join(parts)


# -- one connection ------------------------------------------------------------


class _Connection(asyncio.Protocol):
    """One client connection: parses requests, runs one app call per request, in order."""

    __slots__ = (
        "server",
        "loop",
        "app",
        "transport",
        "parser",
        "client",
        "sockname",
        "deadline",
        "reading",
        "write_paused",
        "drain_waiters",
        "closing",
        "lingering",
        "lost",
        "no_more",
        "last_request",
        "broken",
        "active",
        "parsing",
        "queue",
        "in_head",
        "raw_head",
        "head_chunks",
        "chunk",
        "url",
        "headers",
        "wake_after",
        "max_headers",
    )

    def __init__(self, server: HTTPServer) -> None:
        self.server = server
        self.loop = server.loop
        self.app = server.app
        self.transport: asyncio.Transport = None  # type: ignore[assignment]
        self.parser = httptools.HttpRequestParser(self)
        self.client: tuple[str, int] | None = None
        self.sockname: tuple[str, int] | None = None
        self.deadline = 0.0  # loop time past which `expire` acts; 0: none
        self.reading = True
        self.write_paused = False
        self.drain_waiters: list[asyncio.Future[None]] = []
        self.closing = False  # the server is shutting down: close after the current response
        self.lingering = False
        self.lost = False
        self.no_more = False  # the parser is done with (an error, or shutting down): read no more requests
        self.last_request = False  # the last request parsed asked for the connection to close
        self.broken: tuple[int, str] | None = None  # a refusal to send once the queue is served
        self.active: _Cycle | None = None  # the request whose app runs / response is being sent
        self.parsing: _Cycle | None = None  # the request whose body is being received
        self.queue: deque[_Cycle] = deque()  # pipelined requests waiting for their turn
        self.in_head = False
        self.raw_head = 0  # bytes of a request head read in chunks after the one it began in
        self.head_chunks = 0  # chunks read since the request head began
        self.chunk = 0  # size of the chunk being parsed
        self.url = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.wake_after: _Cycle | None = None
        self.max_headers = server.max_headers

    # -- asyncio.Protocol ------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.client = _address(transport.get_extra_info("peername"))
        self.sockname = _address(transport.get_extra_info("sockname"))
        server = self.server
        server.connections.add(self)
        if server.closing:
            transport.close()
            return
        self.deadline = self.loop.time() + server.header_timeout

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.deadline = 0.0
        server = self.server
        server.connections.discard(self)
        active = self.active
        if active is not None and not active.complete:
            active.disconnected = True
            active.wake()
        parsing = self.parsing
        if parsing is not None and parsing is not active and not parsing.complete:
            parsing.disconnected = True
            parsing.wake()
        self.queue.clear()
        self._wake_drain()
        if server.closing and not server.connections:
            server.all_closed.set()

    def data_received(self, data: bytes) -> None:
        if self.lingering or self.lost:
            return
        self.chunk = len(data)
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._upgrade()
        except httptools.HttpParserCallbackError as exc:
            cause = exc.__context__
            if isinstance(cause, _Refusal):
                self._refuse(cause.status, cause.message)
            else:
                log.error("HTTP parser callback failed", exc_info=cause or exc)
                self._refuse(500, "Internal Server Error")
            return
        except httptools.HttpParserError as exc:
            if self.last_request and self.parsing is None:
                # data after a complete request that closes the connection: ignored
                self._stop_reading()
                return
            self._refuse(400, f"Bad Request: {exc}")
            return
        if self.in_head:
            # Still inside a request head after this whole chunk: every byte of it (past the
            # chunk where the request began) is head, which httptools buffers until a header
            # line is complete; count it here so that one endless line is bounded too.
            if self.head_chunks:
                self.raw_head += len(data)
                if self.raw_head > self.server.max_header_bytes:
                    self._refuse(431, "Request Header Fields Too Large")
                    return
            self.head_chunks += 1
        cycle = self.wake_after
        if cycle is not None:
            self.wake_after = None
            cycle.wake()
            if cycle.buffered >= BODY_HIGH_WATER and cycle.waiter is None:
                self.sync_reading()
        if self.queue and self.reading:
            self.sync_reading()

    def _upgrade(self) -> None:
        """After the head of an Upgrade request (one without a body: those are refused) llhttp
        stops: what follows would be another protocol. The request is served as plain HTTP
        and the connection closes after it."""
        cycle = self.parsing
        if cycle is not None:
            cycle.message_complete = True
            cycle.wake()
            self.parsing = None
        self._stop_reading()

    def eof_received(self) -> bool | None:
        return None  # close: a client that half-closes has left (as uvicorn)

    def pause_writing(self) -> None:
        self.write_paused = True
        self.sync_reading()

    def resume_writing(self) -> None:
        self.write_paused = False
        self._wake_drain()
        if self.active is None and self.queue:
            self._start(self.queue.popleft())
        self.sync_reading()

    # -- parser callbacks (httptools) -------------------------------------------------

    def on_message_begin(self) -> None:
        self.in_head = True
        self.raw_head = self.head_chunks = 0
        self.url = b""
        self.headers = []
        if self.active is None:
            self.deadline = self.loop.time() + self.server.header_timeout

    def on_url(self, url: bytes) -> None:
        self.url += url
        if len(self.url) > self.server.max_header_bytes:
            raise _Refusal(414, "URI Too Long")

    def on_header(self, name: bytes, value: bytes) -> None:
        # Sizes are checked once the head is complete (or, for a head spread over several
        # reads, in data_received as it grows); the count is checked here.
        headers = self.headers
        if len(headers) >= self.max_headers:
            raise _Refusal(431, "Request Header Fields Too Large: too many header lines")
        headers.append((name.lower(), value))

    def on_headers_complete(self) -> None:
        self.in_head = False
        parser = self.parser
        url = self.url
        headers = self.headers
        server = self.server
        if self.head_chunks or self.chunk > server.max_header_bytes:
            # The head did not come in one read no larger than the limit: measure it.
            size = len(url) + sum(len(n) + len(v) + 4 for n, v in headers)
            if size > server.max_header_bytes:
                raise _Refusal(431, "Request Header Fields Too Large")
        length = None
        hosts = 0
        expect = chunked = False
        for name, value in headers:
            if name in _REQUEST_SPECIAL:
                if name == b"content-length":
                    length = value
                elif name == b"host":
                    hosts += 1
                elif name == b"expect":
                    expect = value.lower() == b"100-continue"
                else:
                    chunked = True
        if url[:1] == b"/" and b"#" not in url:
            raw_path, _, query = url.partition(b"?")
        elif url == b"*":
            raw_path, query = url, b""
        else:
            try:
                parsed = httptools.parse_url(url)
            except httptools.HttpParserInvalidURLError:
                raise _Refusal(400, "Bad Request: invalid request target") from None
            raw_path, query = parsed.path or b"/", parsed.query or b""
        try:
            path = raw_path.decode("ascii")
        except UnicodeDecodeError:
            raise _Refusal(400, "Bad Request: non-ASCII request target") from None
        if "%" in path:
            path = unquote(path)
        version = parser.get_http_version()
        http10 = version == "1.0"
        if hosts > 1:  # RFC 9112, 3.2; a missing Host is left to the app (MCPApp: 403)
            raise _Refusal(400, "Bad Request: more than one Host header")
        scope = {
            "type": "http",
            "asgi": server.asgi,
            "http_version": "1.1" if version == "1.1" else version,
            "method": parser.get_method().decode("ascii"),
            "scheme": "http",
            "path": path,
            "raw_path": raw_path,
            "query_string": query,
            "root_path": server.root_path,
            "headers": headers,
            "client": self.client,
            "server": self.sockname,
        }
        if server.state:
            scope["state"] = server.state.copy()
        keep = parser.should_keep_alive() and not self.closing
        cycle = _Cycle(self, scope, keep, http10)
        if not keep:
            self.last_request = True
        if expect and not http10:
            cycle.expect_100 = True
        if length is not None:
            if not length.isdigit():
                raise _Refusal(400, "Bad Request: invalid Content-Length")  # llhttp checks too
            if int(length) > server.max_body_size:
                cycle.refusal = (413, f"Content Too Large: the limit is {server.max_body_size} bytes")
        if parser.should_upgrade():
            if (length is not None and length != b"0") or chunked:
                raise _Refusal(400, "Bad Request: protocol upgrades are not supported")
            cycle.keep_alive = False
            self.last_request = True
        self.parsing = cycle
        self.deadline = 0.0
        if self.active is None and not self.queue and not self.write_paused:
            self._start(cycle)
        else:
            self.queue.append(cycle)

    def on_body(self, body: bytes) -> None:
        cycle = self.parsing
        if cycle is None or cycle.complete or cycle.disconnected or cycle.refusal is not None:
            return  # answered already (or refused): the rest of the body is discarded
        size = cycle.received = cycle.received + len(body)
        if size > self.server.max_body_size:
            raise _Refusal(413, f"Content Too Large: the limit is {self.server.max_body_size} bytes")
        cycle.chunks.append(body)
        cycle.buffered += len(body)
        self.wake_after = cycle

    def on_message_complete(self) -> None:
        cycle = self.parsing
        if cycle is None:
            return
        cycle.message_complete = True
        cycle.wake()
        self.parsing = None

    # -- flow control ------------------------------------------------------------------

    def sync_reading(self) -> None:
        """Pause or resume reading from the socket as the state asks."""
        if self.lost:
            return
        if self.lingering:
            want = True
        elif self.no_more or self.queue or self.write_paused:
            want = False
        else:
            parsing = self.parsing
            want = parsing is None or parsing.buffered < BODY_HIGH_WATER or parsing.waiter is not None
        if want != self.reading and not self.transport.is_closing():
            self.reading = want
            if want:
                self.transport.resume_reading()
            else:
                self.transport.pause_reading()

    def _stop_reading(self) -> None:
        self.no_more = True
        if self.reading and not self.transport.is_closing():
            self.reading = False
            self.transport.pause_reading()

    async def drain(self) -> None:
        waiter = self.loop.create_future()
        self.drain_waiters.append(waiter)
        await waiter

    def _wake_drain(self) -> None:
        waiters, self.drain_waiters = self.drain_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    # -- requests and responses -------------------------------------------------------

    def _start(self, cycle: _Cycle) -> None:
        self.active = cycle
        self.deadline = 0.0
        if cycle.refusal is not None:
            status, message = cycle.refusal
            cycle.complete = True
            self._fail(status, message)
            return
        cycle.task = self.loop.create_task(self._run(cycle))

    async def _run(self, cycle: _Cycle) -> None:
        try:
            await self.app(cycle.scope, cycle.receive, cycle.send)
        except BaseException as exc:
            if not isinstance(exc, asyncio.CancelledError):
                log.error("exception in the ASGI application", exc_info=exc)
            if cycle.complete or self.lost:
                pass
            elif not cycle.head_sent and not cycle.disconnected:
                cycle.complete = True
                self._fail(500, "Internal Server Error")
            else:
                self.abort_response(cycle, None)
        else:
            if cycle.complete or self.lost or cycle.disconnected:
                return
            if not cycle.head_sent:
                log.error("the ASGI application returned without completing its response")
                cycle.complete = True
                self._fail(500, "Internal Server Error")
            else:
                self.abort_response(cycle, "the ASGI application returned without completing its response")

    def abort_response(self, cycle: _Cycle, why: str | None) -> None:
        """A response that cannot be completed: the client learns it from the close."""
        if why:
            log.error("%s; closing the connection", why)
        cycle.complete = True
        cycle.wake()
        self.active = None
        self.transport.close()

    def response_done(self, cycle: _Cycle) -> None:
        if self.active is not cycle:  # pragma: no cover - a response is only sent by the active cycle
            return
        self.active = None
        if not cycle.keep_alive or self.closing or cycle.close_delimited or self.lost:
            self._close()
            return
        queue = self.queue
        if queue:
            if not self.write_paused:  # else resume_writing starts it
                self._start(queue.popleft())
        elif self.broken is not None:
            status, message = self.broken
            self._fail(status, message)
            return
        elif self.in_head:
            self.deadline = self.loop.time() + self.server.header_timeout
        else:
            self.deadline = self.loop.time() + self.server.keepalive_timeout
        if not self.reading:
            self.sync_reading()

    def _refuse(self, status: int, message: str) -> None:
        """The request stream cannot be parsed further: answer ``status`` in turn, then close."""
        if status >= 500:
            log.error("refused a request: %s", message)
        else:
            log.info("refused a request from %s: %d %s", self.client, status, message)
        self.in_head = False
        failing = self.parsing
        self.parsing = None
        self._stop_reading()
        if failing is not None and not failing.message_complete:
            if failing is self.active:
                if failing.complete:  # answered already: just close
                    self._close()
                    return
                failing.disconnected = True
                failing.wake()
                if failing.head_sent:
                    self.abort_response(failing, None)
                    return
                failing.complete = True
                self._fail(status, message)
                return
            try:  # a queued request with a broken body: answer the ones before it, then refuse
                self.queue.remove(failing)
            except ValueError:
                pass
        if self.active is None and not self.queue:
            self._fail(status, message)
        else:
            self.broken = (status, message)  # sent by response_done once the queue is served

    def _fail(self, status: int, message: str) -> None:
        self.active = None
        if not self.transport.is_closing():
            self.transport.write(_error_response(status, message, self.server.date))
        self._close()

    def _close(self) -> None:
        """Close after what was written, lingering if the client may still be sending."""
        transport = self.transport
        if transport.is_closing() or self.lost:
            return
        self.queue.clear()
        self.deadline = 0.0
        if transport.can_write_eof():
            try:
                transport.write_eof()
            except (OSError, RuntimeError):  # pragma: no cover - the socket went away
                transport.close()
                return
            self.lingering = True
            self.deadline = self.loop.time() + LINGER_TIMEOUT
            self.sync_reading()
        else:  # pragma: no cover - every TCP transport can
            transport.close()

    def expire(self) -> None:
        """The connection's deadline passed."""
        self.deadline = 0.0
        if self.lost:
            return
        if self.lingering:
            self.transport.close()
        elif self.active is not None:
            return
        elif self.in_head:
            self._refuse(408, "Request Timeout: the request head did not arrive in time")
        else:
            self.transport.close()

    def shutdown(self) -> None:
        """The server is stopping: close now if idle, else after the response in progress."""
        self.closing = True
        if self.lost or self.lingering:
            return
        if self.active is None:
            self.transport.close()
            return
        # Keep reading (a disconnect still cancels the request); requests pipelined behind
        # this one are dropped when the connection closes after its response.
        active = self.active
        if not active.head_sent:
            active.keep_alive = False


# -- the server ----------------------------------------------------------------


class HTTPServer:
    """An HTTP/1.1 server for one ASGI app (see the module docs for its rules).

    >>> async def main(app):
    ...     server = HTTPServer(app)
    ...     port = await server.start("127.0.0.1", 0)
    ...     ...
    ...     await server.shutdown()
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_header_bytes: int = MAX_HEADER_BYTES,
        max_headers: int = MAX_HEADERS,
        max_body_size: int = DEFAULT_MAX_BODY_SIZE,
        header_timeout: float = DEFAULT_HEADER_TIMEOUT,
        keepalive_timeout: float = DEFAULT_KEEPALIVE_TIMEOUT,
        root_path: str = "",
        lifespan: bool = True,
        on_shutdown: Callable[[], Any] | None = None,
    ) -> None:
        if header_timeout <= 0 or keepalive_timeout <= 0:
            raise ValueError("header_timeout and keepalive_timeout must be positive")
        self.app = app
        self.max_header_bytes = max_header_bytes
        self.max_headers = max_headers
        self.max_body_size = max_body_size
        self.header_timeout = header_timeout
        self.keepalive_timeout = keepalive_timeout
        self.root_path = root_path
        self.lifespan = lifespan
        self.on_shutdown = on_shutdown
        self.asgi = {"version": "3.0", "spec_version": "2.3"}
        self.state: dict[str, Any] = {}
        self.connections: set[_Connection] = set()
        self.closing = False
        self.date = _date_header()
        self.tick = min(1.0, max(0.02, min(header_timeout, keepalive_timeout, LINGER_TIMEOUT) / 4))
        self.loop: asyncio.AbstractEventLoop = None  # type: ignore[assignment]
        self.all_closed: asyncio.Event = None  # type: ignore[assignment]
        self._listener: asyncio.AbstractServer | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._second = 0
        self._lifespan: _Lifespan | None = None
        self._force: asyncio.Event | None = None

    @property
    def port(self) -> int:
        assert self._listener is not None
        return self._listener.sockets[0].getsockname()[1]

    async def start(self, host: str = "127.0.0.1", port: int = 8000, *, sock: socket.socket | None = None,
                    backlog: int = 2048) -> int:
        """Run the lifespan startup, then listen; returns the port bound."""
        self.loop = asyncio.get_running_loop()
        self.all_closed = asyncio.Event()
        self._force = asyncio.Event()
        if self.lifespan:
            self._lifespan = _Lifespan(self.app, self.state)
            await self._lifespan.startup()
        if sock is None:
            sock = bind_socket(host, port)
        self._listener = await self.loop.create_server(lambda: _Connection(self), sock=sock, backlog=backlog)
        self._timer = self.loop.call_later(self.tick, self._sweep)
        return self.port

    def _sweep(self) -> None:
        now = self.loop.time()
        second = int(time.time())
        if second != self._second:
            self._second = second
            self.date = _date_header()
        expired = [c for c in self.connections if c.deadline and now >= c.deadline]
        for conn in expired:
            conn.expire()
        self._timer = self.loop.call_later(self.tick, self._sweep)

    def force(self) -> None:
        """Cut the grace period of a shutdown in progress short."""
        if self._force is not None:
            self._force.set()

    async def shutdown(self, grace: float = 5.0) -> None:
        """Stop accepting, let requests in flight finish for ``grace`` s, cancel the rest."""
        if self.closing:
            return
        self.closing = True
        if self._listener is not None:
            self._listener.close()
        if self.on_shutdown is not None:
            try:
                self.on_shutdown()
            except Exception:  # noqa: BLE001 - shutting down regardless
                log.exception("on_shutdown failed")
        for conn in list(self.connections):
            conn.shutdown()
        if self.connections:
            assert self._force is not None
            done = asyncio.ensure_future(self.all_closed.wait())
            forced = asyncio.ensure_future(self._force.wait())
            await asyncio.wait({done, forced}, timeout=grace, return_when=asyncio.FIRST_COMPLETED)
            done.cancel()
            forced.cancel()
        if self.connections:
            log.warning("%d connection(s) still busy after the grace period: cancelling them", len(self.connections))
            tasks = []
            for conn in list(self.connections):
                for cycle in (conn.active, *conn.queue):
                    if cycle is not None and cycle.task is not None and not cycle.task.done():
                        cycle.task.cancel()
                        tasks.append(cycle.task)
                conn.transport.abort()
            if tasks:
                await asyncio.wait(tasks, timeout=1.0)
        if self._timer is not None:
            self._timer.cancel()
        if self._lifespan is not None:
            await self._lifespan.shutdown()


class _Lifespan:
    """The ASGI lifespan protocol, run alongside the server; an app that refuses it is served without."""

    def __init__(self, app: ASGIApp, state: dict[str, Any]) -> None:
        self.app = app
        self.state = state
        self.inbox: asyncio.Queue[Message] = asyncio.Queue()
        self.outbox: asyncio.Queue[Message] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None
        self.supported = True

    async def _run(self) -> None:
        scope = {"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"}, "state": self.state}
        try:
            await self.app(scope, self.inbox.get, self.outbox.put)
        except BaseException as exc:  # noqa: BLE001
            if isinstance(exc, asyncio.CancelledError):
                raise
            log.debug("the ASGI app does not take lifespan events (%r); served without them", exc)
        finally:
            self.supported = False
            await self.outbox.put({"type": "lifespan.ended"})

    async def _event(self, kind: str) -> None:
        await self.inbox.put({"type": f"lifespan.{kind}"})
        reply = await self.outbox.get()
        if reply["type"] == f"lifespan.{kind}.failed":
            raise RuntimeError(f"ASGI lifespan {kind} failed: {reply.get('message', '')}")

    async def startup(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._run())
        await self._event("startup")

    async def shutdown(self) -> None:
        if not self.supported:
            return
        try:
            await asyncio.wait_for(self._event("shutdown"), timeout=5.0)
        except asyncio.TimeoutError:
            log.warning("the ASGI lifespan shutdown did not complete within 5 s")
        except RuntimeError as exc:
            log.error("%s", exc)
        if self.task is not None and not self.task.done():
            self.task.cancel()


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket for ``host:port`` (IPv6 when the host has a colon), SO_REUSEADDR set."""
    host = host.strip("[]")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop  # type: ignore[no-any-return]


def serve(
    app: ASGIApp,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    sock: socket.socket | None = None,
    grace: float = 5.0,
    on_listening: Callable[[int], None] | None = None,
    use_uvloop: bool = True,
    **options: Any,
) -> None:
    """Serve ``app`` until SIGINT or SIGTERM (then shut down gracefully; a second signal hurries it).

    ``options`` go to `HTTPServer` (limits, timeouts, ``on_shutdown``...).
    ``on_listening(port)`` is called once the socket accepts connections.
    uvloop is used when installed, unless ``use_uvloop`` is false.
    """
    factory = _loop_factory() if use_uvloop else None
    with asyncio.Runner(loop_factory=factory) as runner:
        runner.run(_serve(app, host, port, sock, grace, on_listening, options))


async def _serve(
    app: ASGIApp,
    host: str,
    port: int,
    sock: socket.socket | None,
    grace: float,
    on_listening: Callable[[int], None] | None,
    options: dict[str, Any],
) -> None:
    server = HTTPServer(app, **options)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    signals = 0

    def on_signal() -> None:
        nonlocal signals
        signals += 1
        if signals == 1:
            stop.set()
        else:
            server.force()

    installed = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, on_signal)
            installed.append(sig)
        except (NotImplementedError, RuntimeError, ValueError):  # pragma: no cover - not the main thread, Windows
            pass
    try:
        bound = await server.start(host, port, sock=sock)
        if on_listening is not None:
            on_listening(bound)
        await stop.wait()
        await server.shutdown(grace)
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)


def main(argv: list[str] | None = None) -> int:
    """``python -m wiremcp.transports.http._native module:app``: any ASGI app on this server."""
    import argparse
    import importlib
    import sys

    ap = argparse.ArgumentParser(prog="python -m wiremcp.transports.http._native", description=main.__doc__)
    ap.add_argument("app", help="module:attribute of an ASGI 3 app")
    ap.add_argument("--app-dir", default=".", help="directory put first on sys.path (default: .)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    ap.add_argument("--header-timeout", type=float, default=DEFAULT_HEADER_TIMEOUT)
    ap.add_argument("--keepalive-timeout", type=float, default=DEFAULT_KEEPALIVE_TIMEOUT)
    ap.add_argument("--max-body-size", type=int, default=DEFAULT_MAX_BODY_SIZE)
    ap.add_argument("--no-uvloop", action="store_true", help="the standard asyncio loop even if uvloop is installed")
    ap.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    args = ap.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=args.log_level, format="%(levelname)s %(name)s: %(message)s")
    sys.path.insert(0, args.app_dir)
    module_name, _, attr = args.app.partition(":")
    app = getattr(importlib.import_module(module_name), attr or "app")
    sock = bind_socket(args.host, args.port)
    host = f"[{args.host}]" if ":" in args.host else args.host

    def listening(port: int) -> None:
        print(f"native HTTP server: serving {args.app} at http://{host}:{port}", file=sys.stderr, flush=True)

    serve(
        app,
        sock=sock,
        on_listening=listening,
        use_uvloop=not args.no_uvloop,
        header_timeout=args.header_timeout,
        keepalive_timeout=args.keepalive_timeout,
        max_body_size=args.max_body_size,
    )
    return 0


if __name__ == "__main__":  # pragma: no cover - exercised through a subprocess
    raise SystemExit(main())
