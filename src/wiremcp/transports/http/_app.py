"""The MCP endpoint as a raw ASGI application (streamable-http.mdx, 2026-07-28; dual-era).

`MCPApp(server)` serves one endpoint path and needs nothing beyond the
standard library and orjson, so it mounts into any ASGI application. What it
does with a request, in order (the first check that fails decides):

=====================================================  =======  =========
situation                                              status   JSON-RPC
=====================================================  =======  =========
with ``auth``: a protected resource metadata path      200      (the document; see `_auth`)
with ``auth``: no valid token at the endpoint          401/403  -32600, no id; see `_auth`
path is not the endpoint                               404      (plain text)
``Host`` or ``Origin`` not allowed (DNS rebinding)     403      -32600, no id
GET or DELETE with ``Mcp-Session-Id`` (legacy on)      see `_sessions`
method other than POST (GET and DELETE included)       405      -32600, no id; ``Allow: POST``
``Content-Type`` is not ``application/json``           415      -32600, no id
``Accept`` lacks ``application/json`` or SSE           406      -32600, no id
body longer than ``max_body_size``                     413      -32600, no id; not kept (`_linger`)
body not complete within ``read_timeout``              408      -32600, no id
not one JSON text                                      400      -32700, no id
a batch, or not a valid JSON-RPC message               400      -32600, the id if readable
legacy on, a request without modern ``_meta``:
  with ``Mcp-Session-Id``: its session                 see `_sessions` (404 if unknown)
  ``initialize``: opens a session                      see `_sessions`
  ``MCP-Protocol-Version`` absent or legacy            400      -32600, the id (no session)
  (otherwise it goes on as a modern request)
legacy on, a notification or response with
  ``Mcp-Session-Id``: its session                      see `_sessions` (404 if unknown)
a JSON-RPC response (clients MUST NOT send one)        400      -32600, no id
a notification                                         202      (empty body)
a request: mirrored headers disagree with the body     400      -32020, the id
a request: its token lacks the operation's ``scopes``  403      -32600, the id; see `_auth`
a request: `Server.handle` raises or returns an error  by code  the id
a request: a result                                    200      the id
=====================================================  =======  =========

The era is decided per request by the server's `request_era` (2026-07-28
basic/versioning.mdx, "Backward Compatibility with Initialization-Based
Versions"), the request being in a session when it carries
``Mcp-Session-Id``: a request whose ``params._meta`` carries
``io.modelcontextprotocol/protocolVersion`` is modern and served statelessly,
whatever session id it also carries; legacy (2025-11-25) clients open a
session with ``initialize`` and are served in it by `_sessions.Sessions`
(``Mcp-Session-Id``, the GET stream, resumable streams, DELETE), each session
around its own `ServerConnection`. A modern request is one `Call` whose
``write`` is the exchange (`_Exchange`); the states of the exchange are
`_Reply` (pending, streaming, done, gone). ``legacy`` follows ``server.legacy``; with it off the
endpoint is modern only: GET and DELETE are 405, ``initialize`` is refused
(its message names the supported versions) and no session id is issued.

The status of a JSON-RPC error is looked up by its code in one table,
`STATUS_BY_CODE` (streamable-http.mdx, "Protocol Version Header" and "Server
Validation"; basic/index.mdx, "_meta"): -32700, -32600, -32602, -32020,
-32021 and -32022 are 400; -32601 is 404; -32603 is 500 (the specification
names no status for it; the server failed); any other code is 200 (the
request was served; its answer is an error).

Replies to modern requests (streamable-http.mdx, "Sending Messages" and
"Receiving Messages"):

* a handler that returns a result without calling ``emit`` is answered with
  one ``application/json`` body;
* once a handler calls ``emit`` before its result is ready, the reply turns
  into ``text/event-stream``: one ``data:`` event per notification, then the
  response as the last event, then the stream closes; ``X-Accel-Buffering:
  no`` keeps proxies from holding events back;
* a handler silent for ``keepalive_interval`` seconds also turns the reply
  into a stream, and every further quiet interval sends a ``: keep-alive``
  comment line, so that neither proxies nor clients time out a long-lived
  ``subscriptions/listen`` or a slow tool. An error decided after that point
  travels in the stream with status 200;
* the client closing the connection cancels the handler (cancellation.mdx:
  closing the stream is the cancellation signal); nothing more is sent;
* notifications a client leaves unread pile up to ``max_stream_backlog``
  bytes at most; past that the request is stopped.

``emit`` must be called on the event loop's thread, as tools running on the
loop do through their `Context`.

Notifications posted without a session id are accepted and dropped
(2026-07-28 defines none for HTTP; ``notifications/cancelled`` is not
honoured, since closing the stream is how HTTP cancels). On a modern request
``Mcp-Session-Id`` and ``Last-Event-ID`` are ignored ("Backward
Compatibility").
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import functools
import logging
import types
from typing import TYPE_CHECKING, Any, AsyncIterator, Awaitable, Coroutine, Generator, Iterable

from ...jsonrpc import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_MESSAGE_SIZE,
    MCP,
    Decoder,
    InternalError,
    InvalidRequest,
    JSONRPCError,
    Notification,
    Request,
)
from ...protocol.errors import HeaderMismatch
from ...protocol import methods
from ...server import InsufficientScope, Server
from ...server.transport import (
    DEFAULT_MAX_SESSION_SUBSCRIPTIONS,
    DEFAULT_MAX_SUBSCRIPTION_URI,
    Call,
    Era,
    carries_protocol_meta,
    current_headers,
    reply_failed,
    request_era,
)
from ._asgi import (
    JSON_CONTENT_TYPE,
    KEEPALIVE,
    KEEPALIVE_COMMENT,
    STATUS_BY_CODE,
    Message,
    Receive,
    Scope,
    Send,
    empty_reply,
    fire,
    http_error,
    json_reply,
    plain_reply,
    sse_start,
)
from ._headers import HeaderRules
from ._linger import refuse
from ._client_key import client_key
from ._listen_caps import DEFAULT_MAX_LISTENS_PER_CLIENT, ListenCaps
from ._security import HostGuard, accepts_json_and_sse, is_json_content_type
from ._shutdown import Shutdown, run_lifespan
from ._session_rules import (
    DEFAULT_MAX_SESSIONS,
    DEFAULT_MAX_SESSIONS_PER_CLIENT,
    DEFAULT_PRESSURE_IDLE_TIMEOUT,
    DEFAULT_REPLAY_BUFFER,
    DEFAULT_SESSION_IDLE_TIMEOUT,
    ENTRY_COST,
    LEGACY_HEADER_VALUES,
    SESSION_HEADER,
)
from ._session_store import SessionStore, session_store

if TYPE_CHECKING:
    from contextvars import ContextVar
    from ...auth.server import ResourceServer

__all__ = [
    "MCPApp",
    "asgi_app",
    "STATUS_BY_CODE",
    "DEFAULT_MAX_STREAM_BACKLOG",
    "DEFAULT_READ_TIMEOUT",
    "DEFAULT_KEEPALIVE_INTERVAL",
    "DEFAULT_SESSION_IDLE_TIMEOUT",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_REPLAY_BUFFER",
    "DEFAULT_MAX_SESSIONS_PER_CLIENT",
    "DEFAULT_PRESSURE_IDLE_TIMEOUT",
    "DEFAULT_MAX_LISTENS_PER_CLIENT",
]

log = logging.getLogger("wiremcp.transport")

#: Seconds a client has to deliver the whole request body. Generous for a
#: 16 MiB body on a slow link; bounds how long a stalled upload holds memory.
DEFAULT_READ_TIMEOUT = 30.0
#: Seconds of silence before a ``: keep-alive`` comment (and before a silent
#: handler's reply turns into a stream). Below the 60 s idle timeouts that
#: common proxies (nginx ``proxy_read_timeout``) and clients apply.
DEFAULT_KEEPALIVE_INTERVAL = 15.0

#: Bytes of notifications one stream may hold unsent (its client not reading)
#: before the request is stopped: bounds memory per stream.
DEFAULT_MAX_STREAM_BACKLOG = 16 * 1024 * 1024

_VERSION_HEADER = b"mcp-protocol-version"
#: Methods a legacy session adds to the endpoint (with its Mcp-Session-Id).
_SESSION_METHODS = ("GET", "DELETE")


class _Reply(enum.Enum):
    """Where the HTTP response to a modern request is."""

    PENDING = "pending"  #: nothing sent: the reply may still be one JSON body
    STREAMING = "streaming"  #: the SSE head is sent: the rest goes as events
    DONE = "done"  #: the response is complete
    GONE = "gone"  #: the client disconnected or stopped reading: nothing more is sent


class _Exchange:
    """The HTTP side of one modern request: the events its `Call` wrote, and whether anyone still listens.

    The exchange is the call's ``write``: each notification becomes a
    ``data:`` event, held here until the response loop sends it.
    """

    __slots__ = ("call", "backlog", "events", "pending", "state", "waiter", "receive", "watch")

    def __init__(self, backlog: int) -> None:
        self.call: Call | None = None
        self.backlog = backlog  # the most bytes `events` may hold
        self.events: list[bytes] | None = None
        self.pending = 0  # bytes in `events`
        self.state = _Reply.PENDING
        self.waiter: asyncio.Future[Any] | None = None
        self.receive: Receive | None = None
        self.watch: asyncio.Task[Message] | None = None

    def __call__(self, data: bytes) -> None:
        if self.state is _Reply.GONE or self.state is _Reply.DONE:
            return
        event = b"data: " + data + b"\n\n"
        if self.events is None:
            self.events = [event]
        else:
            self.events.append(event)
        self.pending += len(event) + ENTRY_COST  # an exact-size bytes, its header and its slot
        call = self.call
        if self.pending > self.backlog and call is not None and call.task is not None:
            # The client does not read its stream (the write is blocked): stop, rather than
            # buffer without bound. The response ends without its final message.
            log.warning(
                "request %r (%s) stopped: its client left %d bytes of notifications unread",
                call.id, call.method, self.pending,
            )
            self.state = _Reply.GONE
            self.events = None
            call.cancel()
        self.wake()

    @property
    def gone(self) -> bool:
        """The client left or stopped reading (set by callbacks while the response loop awaits)."""
        return self.state is _Reply.GONE

    def wake(self, _: Any = None) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def received(self, watch: asyncio.Task[Message]) -> None:
        """What the client sent after its body: only a disconnect is expected."""
        if watch.cancelled():
            return
        exc = watch.exception()
        if exc is None and watch.result().get("type") != "http.disconnect":
            # Not a disconnect (an ASGI server may report trailing empty body chunks): keep watching.
            assert self.receive is not None
            again = self.watch = asyncio.get_running_loop().create_task(_next(self.receive))
            again.add_done_callback(self.received)
            return
        self.state = _Reply.GONE
        call = self.call
        if call is not None and call.task is not None and not call.task.done():
            log.info("request %r (%s) cancelled: the client closed the connection", call.id, call.method)
            call.cancel()
        self.wake()


async def _next(receive: Receive) -> Message:
    return await receive()


_COROUTINE = types.CoroutineType  # what an ``async def`` receive() returns: `__call__` runs its first step eagerly
_USUAL_ACCEPT = b"application/json, text/event-stream"


class _Eager:
    """A coroutine already run to its first suspension (``waiting``), awaited from there on.

    `__call__` starts the first ``receive()`` itself: when it returns without
    suspending (the body is in hand), no read deadline is needed. When it
    suspends, the future it waits on is handed to the task, and awaiting this
    object carries on the coroutine exactly as ``await`` would have
    (``yield from``'s rules: values sent and exceptions thrown in are passed to
    it, its return value is the result).
    """

    __slots__ = ("coro", "waiting")

    def __init__(self, coro: Coroutine[Any, Any, Message], waiting: Any) -> None:
        self.coro = coro
        self.waiting = waiting

    def __await__(self) -> Generator[Any, Any, Message]:
        coro = self.coro
        waiting = self.waiting
        while True:
            try:
                sent = yield waiting
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # noqa: BLE001 - thrown into the coroutine, as `yield from` does
                try:
                    waiting = coro.throw(exc)
                except StopIteration as stop:
                    return stop.value  # type: ignore[no-any-return]  # the coroutine's result is a Message
            else:
                try:
                    waiting = coro.send(sent)
                except StopIteration as stop:
                    return stop.value  # type: ignore[no-any-return]  # likewise


class _ReadDeadlines:
    """One timer for every body read in progress; it cancels the reads past their deadline.

    Cheaper than a timeout per request (``asyncio.timeout`` costs about 4 µs,
    a third of this app's own work on a small request): a read registers its
    task and deadline in a dict, and a single timer, running only while reads
    are pending, checks them every quarter of the timeout. A read therefore
    times out between 1 and 1.25 times ``read_timeout`` after it began.
    """

    __slots__ = ("timeout", "reading", "expired", "handle", "loop")

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.reading: dict[asyncio.Task[Any], float] = {}
        self.expired: set[asyncio.Task[Any]] = set()
        self.handle: asyncio.TimerHandle | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> asyncio.Task[Any]:
        # With the loop given, current_task skips get_running_loop() and its getpid() syscall.
        task = asyncio.current_task(self.loop) if self.loop is not None else None
        if task is None:
            task = asyncio.current_task()
        assert task is not None
        loop = task.get_loop()
        self.reading[task] = loop.time() + self.timeout
        if self.handle is None or self.loop is not loop:
            self.loop = loop
            self.handle = loop.call_later(self.timeout / 4, self._check)
        return task

    def _check(self) -> None:
        loop = self.loop
        assert loop is not None
        now = loop.time()
        for task, deadline in list(self.reading.items()):
            # A registered task is always suspended in `await receive()`: registration
            # ends, with no await in between, as soon as the read returns.
            if deadline <= now:
                del self.reading[task]
                self.expired.add(task)
                task.cancel()
        self.handle = loop.call_later(self.timeout / 4, self._check) if self.reading else None


_CLOSE = ((b"connection", b"close"),)


class _Refused(Exception):
    """An HTTP-level refusal: status, message, extra headers; ``more_body``: the client is still sending."""

    more_body = False

    def __init__(self, status: int, message: str, headers: tuple[tuple[bytes, bytes], ...] = ()) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers


class MCPApp:
    """The MCP endpoint of a `Server`, as an ASGI 3 application (see the module docs).

    >>> from wiremcp import Server
    >>> app = MCPApp(Server("demo"), path="/mcp")

    Run it with any ASGI server (``uvicorn module:app``) or mount it into
    another ASGI application; it answers ``lifespan`` events when run alone,
    and a host application runs `lifespan` as its own (see `_shutdown`).
    """

    __slots__ = (
        "server",
        "path",
        "legacy",
        "max_body_size",
        "read_timeout",
        "keepalive_interval",
        "max_stream_backlog",
        "_guard",
        "_rules",
        "_decoder",
        "_request_dict",
        "_fused_call",
        "_answer_fused_call",
        "_deadlines",
        "_sessions",
        "_auth",
        "max_listens_per_client",
        "_listen_caps",
        "_shutdown",
        "_peer",
    )

    def __init__(
        self,
        server: Server,
        *,
        path: str = "/mcp",
        allowed_hosts: Iterable[str] | None = None,
        allowed_origins: Iterable[str] | None = None,
        max_body_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        max_depth: int = DEFAULT_MAX_DEPTH,
        read_timeout: float | None = DEFAULT_READ_TIMEOUT,
        keepalive_interval: float | None = DEFAULT_KEEPALIVE_INTERVAL,
        max_stream_backlog: int = DEFAULT_MAX_STREAM_BACKLOG,
        legacy: bool | None = None,
        session_idle_timeout: float = DEFAULT_SESSION_IDLE_TIMEOUT,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        replay_buffer: int = DEFAULT_REPLAY_BUFFER,
        auth: ResourceServer | None = None,
        max_sessions_per_client: int | None = DEFAULT_MAX_SESSIONS_PER_CLIENT,
        pressure_idle_timeout: float = DEFAULT_PRESSURE_IDLE_TIMEOUT,
        max_session_subscriptions: int = DEFAULT_MAX_SESSION_SUBSCRIPTIONS,
        max_subscription_uri: int = DEFAULT_MAX_SUBSCRIPTION_URI,
        max_listens_per_client: int | None = DEFAULT_MAX_LISTENS_PER_CLIENT,
    ) -> None:
        if not path.startswith("/"):
            raise ValueError("path must start with '/'")
        if keepalive_interval is not None and keepalive_interval <= 0:
            raise ValueError("keepalive_interval must be positive (or None for no keep-alives)")
        if read_timeout is not None and read_timeout <= 0:
            raise ValueError("read_timeout must be positive (or None for no limit)")
        if legacy is None:
            legacy = server.legacy
        elif legacy and not server.legacy:
            raise ValueError("legacy=True needs a server that serves legacy sessions (Server(legacy=True))")
        self.server = server
        self.path = path
        #: Whether 2025-11-25 clients (initialize, Mcp-Session-Id) are served; see `_sessions`.
        self.legacy = legacy
        self.max_body_size = max_body_size
        self.read_timeout = read_timeout
        self.keepalive_interval = keepalive_interval
        self.max_stream_backlog = max_stream_backlog
        self.max_listens_per_client = max_listens_per_client
        self._listen_caps = ListenCaps(max_listens_per_client) if max_listens_per_client is not None else None
        self._guard = HostGuard(allowed_hosts, allowed_origins)
        self._rules = HeaderRules(server)
        self._decoder = Decoder(MCP, max_size=max_body_size, max_depth=max_depth)
        self._request_dict = self._decoder.request_dict
        self._fused_call = server.fused_call
        self._answer_fused_call = server.answer_fused_call
        self._deadlines = _ReadDeadlines(read_timeout) if read_timeout is not None else None
        # The client's address, set per request on the general path only, for telemetry's spans
        # (server/_telemetry.py) and middleware's callers (server/middleware/_keys.py); None without either.
        self._peer: ContextVar[Any] | None = None
        if server.telemetry or server.middlewares:
            from ...protocol.telemetry import client_peer

            self._peer = client_peer()
        self._sessions = (
            session_store(
                server,
                idle_timeout=session_idle_timeout,
                max_sessions=max_sessions,
                replay_buffer=replay_buffer,
                keepalive_interval=keepalive_interval,
                max_stream_backlog=max_stream_backlog,
                max_sessions_per_client=max_sessions_per_client,
                pressure_idle_timeout=pressure_idle_timeout,
                max_session_subscriptions=max_session_subscriptions,
                max_subscription_uri=max_subscription_uri,
            )
            if legacy
            else None
        )
        # OAuth (basic/authorization/): a wiremcp.auth.server.ResourceServer, by default the
        # server's own (`Server(auth=...)`); the rules and both hooks are in `_auth`.
        self._shutdown = Shutdown(server, self.close_sessions)
        if auth is None:
            auth = server.auth
        if auth is not None:
            from ._auth import AuthGate

            self._auth: AuthGate | None = AuthGate(auth, path)
        else:
            from ._auth import warn_if_unprotected

            self._auth = None
            warn_if_unprotected(server)

    @property
    def session_count(self) -> int:
        """How many legacy sessions are open."""
        return len(self._sessions) if self._sessions is not None else 0

    def close_sessions(self) -> None:
        """End every legacy session (done on lifespan shutdown)."""
        if self._sessions is not None:
            self._sessions.close_all()

    async def _not_http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await run_lifespan(self._shutdown, receive, send)
        else:  # websocket: not part of MCP
            await send({"type": "websocket.close", "code": 1000})

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Any = None) -> AsyncIterator[None]:
        """The server's lifespan and this app's shutdown, for a host application to run.

        ``Starlette(..., lifespan=mcp.lifespan)``, or ``async with
        mcp.lifespan(app):`` inside the host's own lifespan (``app`` is the
        host, unused). See `wiremcp.transports.http._shutdown`.
        """
        await self._shutdown.start()
        try:
            yield
        finally:
            await self._shutdown.finish()

    # -- HTTP ---------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # the HTTP request is served here, not in a coroutine of its own
            await self._not_http(scope, receive, send)
            return
        path = scope["path"]
        root = scope.get("root_path")
        if root and path.startswith(root):
            path = path[len(root) :] or "/"
        if self._auth is not None and await self._auth.gate(scope, path, send):  # hook 1 (see _auth)
            return
        if path != self.path:
            await plain_reply(send, 404, b"Not Found")
            return
        raw_headers = scope["headers"]
        headers: dict[bytes, bytes] = dict(raw_headers)  # one C call in the usual case: no repeated field
        if len(headers) != len(raw_headers):
            headers = {}
            for name, value in raw_headers:
                if name in headers:
                    headers[name] += b", " + value  # RFC 9110, section 5.3
                else:
                    headers[name] = value
        # ctx.headers (this request's own task, so nothing leaks). Behind the built-in resource server
        # the credentials are left out: the handler has the verified identity (ctx.auth) and never
        # a token it could pass through (security best practices, token passthrough). Without it,
        # they stay: the server's own middleware may be what checks them.
        current_headers.set(
            headers
            if self._auth is None
            or (b"authorization" not in headers and b"dpop" not in headers and b"cookie" not in headers)
            else {k: v for k, v in headers.items() if k not in _CREDENTIAL_HEADERS}
        )
        guard = self._guard  # Host, then Origin; a Host value allowed before, and no Origin, need no call
        host = headers.get(b"host")
        problem = None if host in guard.seen_hosts else guard.host_problem(host, scope.get("server"))
        if problem is None:
            origin = headers.get(b"origin")
            if origin is not None:
                problem = guard.origin_problem(origin)
        if problem is not None or scope["method"] != "POST":
            await self._not_a_post(scope["method"], problem, headers, receive, send)
            return
        # The HTTP-level checks (`_refusal`), their usual case compared inline; then the body.
        ctype = headers.get(b"content-type")
        accept = headers.get(b"accept")
        length = headers.get(b"content-length")
        if (
            (ctype == b"application/json" or is_json_content_type(ctype))
            and (accept == _USUAL_ACCEPT or accepts_json_and_sse(accept))
            and (length is None or not length.isdigit() or int(length) <= self.max_body_size)
        ):
            # The first receive() runs at once (`_eager`): uvicorn has a small body in hand, and then
            # no read deadline is registered; one that would wait is awaited in `_body`, under it.
            pending: Any = receive()
            first: Message | None = None
            if type(pending) is _COROUTINE:
                try:
                    waiting = pending.send(None)
                except StopIteration as stop:
                    first = stop.value
                    pending = None
                else:
                    pending = _Eager(pending, waiting)
            if (
                first is not None
                and first["type"] == "http.request"
                and not first.get("more_body")
                and len(body := first.get("body", b"")) <= self.max_body_size
            ):
                pass  # the whole body, in one message: the common case
            else:
                try:
                    read = await self._body(receive, pending, first)
                except _Refused as refused:
                    await refuse(send, receive, refused, http_error(refused.message))
                    return
                if read is None:
                    return  # the client went away
                body = read
        else:
            refusal = self._refusal(ctype, accept, length)
            await refuse(send, receive, refusal, http_error(refusal.message))
            return
        checked = False  # the header rules have passed (the fused path tried)
        # The fused path: a fused call decoded and checked, the header rules, the tool's reply;
        # anything it declines takes the general path below.
        call = self._fused_call(body, self._decoder) if self._auth is None else None
        if call is not None:
            checked = self._rules.check_call(headers, call[3], call[1], call[2])  # if not, `_request` checks
            reply = self._answer_fused_call(call) if checked else None
            if reply is not None:
                data, status = reply
                await send(
                    {
                        "type": "http.response.start",
                        "status": 200 if status is None else STATUS_BY_CODE.get(status, 200),
                        "headers": [JSON_CONTENT_TYPE, (b"content-length", b"%d" % len(data))],
                    }
                )
                await send({"type": "http.response.body", "body": data})
                return
        if self._peer is not None:  # telemetry or middleware: client.address, client.port (not on the fused path)
            self._peer.set(scope.get("client"))
        obj = self._request_dict(body)
        if obj is None:
            try:
                msg = self._decoder.decode(body)
            except JSONRPCError as exc:
                log.debug("refused a POST body: %s", exc.message)
                data, code = reply_failed(getattr(exc, "id", None), exc)
                await json_reply(send, STATUS_BY_CODE.get(code, 400), data)
                return
        else:  # a request of the four members only: checked, no `Request` made unless it is needed
            params = obj["params"]
            msg = Request(obj["id"], obj["method"], params)
        kind = type(msg)
        sessions = self._sessions
        session_id = headers.get(SESSION_HEADER) if sessions is not None else None
        if kind is Request:
            assert isinstance(msg, Request)
            # The era, per request (versioning.mdx, "Backward Compatibility ..."), decided by the server.
            if request_era(msg, session_id is not None, sessions is not None) is Era.LEGACY:
                assert sessions is not None
                await self._legacy_request(sessions, session_id, msg, headers, receive, send, client_key(scope))
            elif sessions is not None and session_id is None and self._lost_legacy_client(msg, headers):
                await self._no_session_id(msg, send)
            elif msg.method == methods.SUBSCRIPTIONS_LISTEN and self.max_listens_per_client is not None:
                await self._listen(msg, headers, receive, send, client_key(scope))
            else:
                await self._request(msg, headers, receive, send, checked)
            return
        if session_id is not None:
            assert sessions is not None
            session = await sessions.find(session_id)
            if session is None:
                await self._no_session(send)
            elif kind is Notification:
                await sessions.notification(session, msg, headers, send)  # type: ignore[arg-type]  # kind is Notification
            else:  # the answer to one of the server's requests
                await sessions.response(session, msg, headers, send)  # type: ignore[arg-type]  # Response or ErrorResponse
        elif kind is Notification:
            log.debug("notification %s accepted and dropped", msg.method)  # type: ignore[union-attr]  # a Notification
            await empty_reply(send, 202)
        else:  # Response or ErrorResponse
            not_allowed = InvalidRequest(
                "Invalid Request: a client must not send JSON-RPC responses to the MCP endpoint "
                "(streamable-http.mdx, Sending Messages)"
            )
            data, _ = reply_failed(None, not_allowed)
            await json_reply(send, 400, data)

    async def _not_a_post(
        self, method: str, problem: str | None, headers: dict[bytes, bytes], receive: Receive, send: Send
    ) -> None:
        """403 (Host/Origin), a legacy session's GET or DELETE, or 405."""
        if problem is not None:
            log.warning("refused a request: %s", problem)
            await json_reply(send, 403, http_error(f"Forbidden: {problem}"))
            return
        sessions = self._sessions
        session_id = headers.get(SESSION_HEADER)
        if sessions is not None and method in _SESSION_METHODS and session_id is not None:
            session = await sessions.find(session_id)
            if session is None:
                await self._no_session(send)
            elif method == "GET":
                await sessions.get(session, headers, receive, send)
            else:
                await sessions.delete(session, headers, send)
            return
        told = (
            f"Method Not Allowed: {method} needs the Mcp-Session-Id of a 2025-11-25 session; "
            "otherwise the MCP endpoint accepts POST only"
            if sessions is not None and method in _SESSION_METHODS
            else f"Method Not Allowed: the MCP endpoint accepts POST only, not {method}"
        )
        await json_reply(send, 405, http_error(told), ((b"allow", b"POST"),))

    async def _legacy_request(
        self,
        sessions: SessionStore,
        session_id: bytes | None,
        req: Request,
        headers: dict[bytes, bytes],
        receive: Receive,
        send: Send,
        client: str,
    ) -> None:
        """A legacy request: in its session, or ``initialize`` opening one."""
        if session_id is None:
            await sessions.initialize(req, headers, send, client)
            return
        session = await sessions.find(session_id)
        if session is None:
            await self._no_session(send)
        else:
            await sessions.request(session, req, headers, receive, send)

    async def _listen(self, req: Request, headers: dict[bytes, bytes], receive: Receive, send: Send, client: str) -> None:
        """A modern ``subscriptions/listen``: counted against its client's share of open listens (`_listen_caps`)."""
        assert self._listen_caps is not None
        await self._listen_caps.serve(client, req, send, lambda: self._request(req, headers, receive, send))

    @staticmethod
    def _lost_legacy_client(req: Request, headers: dict[bytes, bytes]) -> bool:
        """A request without modern ``_meta`` nor a session id, whose version header is absent or legacy."""
        if carries_protocol_meta(req.params):
            return False
        version = headers.get(_VERSION_HEADER)
        # A modern version header: not a legacy client; the modern checks say what the request lacks.
        return version is None or version.strip(b" \t") in LEGACY_HEADER_VALUES

    @staticmethod
    async def _no_session_id(req: Request, send: Send) -> None:
        # 2025-11-25 transports.mdx, Session Management 2: no session id (other than initialize) is 400.
        problem = InvalidRequest(
            "Bad Request: the Mcp-Session-Id header is missing: a 2025-11-25 client sends initialize "
            "first, then the Mcp-Session-Id it gets with every request; a 2026-07-28 request carries "
            "io.modelcontextprotocol/protocolVersion in params._meta",
            id=req.id,
        )
        await json_reply(send, 400, reply_failed(req.id, problem)[0])

    @staticmethod
    async def _no_session(send: Send) -> None:
        # 2025-11-25 transports.mdx, Session Management 3 and 4: the client starts over.
        await json_reply(
            send,
            404,
            http_error(
                "Not Found: no such session (it ended, expired or never existed); "
                "send initialize without Mcp-Session-Id to start a new one"
            ),
        )

    def _refusal(self, ctype: bytes | None, accept: bytes | None, length: bytes | None) -> _Refused:
        """Why a POST is refused at the HTTP level (``Content-Type``, ``Accept``, ``Content-Length``), in that order.

        Called once `__call__`'s inline test of the three has failed, so one of them is refused.
        """
        if not is_json_content_type(ctype):
            return _Refused(415, "Unsupported Media Type: the body must be Content-Type: application/json")
        if not accepts_json_and_sse(accept):
            return _Refused(
                406, "Not Acceptable: the Accept header must list both application/json and text/event-stream"
            )
        assert length is not None
        return self._too_large(int(length))

    async def _body(self, receive: Receive, pending: Awaitable[Message] | None, msg: Message | None) -> bytes | None:
        """The body of a POST, or ``None`` if the client left; under the read deadline.

        ``msg``: the first message, already received (and not a whole small
        body); else ``pending``, the first ``receive()``, still to be awaited.
        """
        limit = self.max_body_size
        deadlines = self._deadlines
        task = deadlines.start() if deadlines is not None else None
        try:
            if msg is None:
                assert pending is not None
                msg = await pending
            if msg["type"] != "http.request":
                return None
            body: bytes = msg.get("body", b"")
            if len(body) > limit:
                raise self._too_large(None, msg.get("more_body", False))
            if not msg.get("more_body"):
                return body
            return await self._read(receive, body)
        except asyncio.CancelledError:
            if deadlines is None or task not in deadlines.expired:
                raise
            assert task is not None
            task.uncancel()
            raise _Refused(
                408,
                f"Request Timeout: the body did not arrive within {deadlines.timeout:g} s",
                _CLOSE,
            ) from None
        finally:
            if deadlines is not None:
                assert task is not None
                deadlines.reading.pop(task, None)
                deadlines.expired.discard(task)

    async def _read(self, receive: Receive, first: bytes | None = None) -> bytes | None:
        """The body; ``first``: its first part, already received (and more is coming)."""
        limit = self.max_body_size
        if first is None:
            msg = await receive()
            if msg["type"] != "http.request":
                return None
            body: bytes = msg.get("body", b"")
            if len(body) > limit:
                raise self._too_large(None, msg.get("more_body", False))
            if not msg.get("more_body"):
                return body  # the whole body in one message: the common case
        else:
            body = first
        size = len(body)
        chunks = [body]
        while True:
            msg = await receive()
            if msg["type"] != "http.request":
                return None
            chunk = msg.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise self._too_large(None, msg.get("more_body", False))
            chunks.append(chunk)
            if not msg.get("more_body"):
                return b"".join(chunks)

    def _too_large(self, size: int | None, more_body: bool = True) -> _Refused:
        told = f"{size} bytes" if size is not None else "longer than that"
        log.warning("refused a request body: %s; the limit is %d", told, self.max_body_size)
        refused = _Refused(
            413, f"Content Too Large: the body is {told}; the limit is {self.max_body_size} bytes", _CLOSE
        )
        refused.more_body = more_body  # then `refuse` lingers: the client reads the 413 (_linger)
        return refused

    async def _request(
        self, req: Request, headers: dict[bytes, bytes], receive: Receive, send: Send, checked: bool = False
    ) -> None:
        """Answer a modern request; ``checked``: its header rules have passed already (the fused path)."""
        ex = _Exchange(self.max_stream_backlog)
        call = ex.call = Call(req.id, req.method, ex, line=False)
        try:
            if not checked:
                self._rules.check(headers, req)
        except HeaderMismatch as exc:
            if req.method == "initialize":
                # versioning.mdx, Backward Compatibility: name our versions to a legacy client.
                exc = HeaderMismatch(
                    f"{exc.message}; this endpoint serves MCP {', '.join(self.server.supported_versions)} "
                    "only, which has no initialize (every request carries its version in params._meta)"
                )
            await self._final(send, ex, *reply_failed(req.id, exc))
            return
        except BaseException as exc:  # noqa: BLE001 - every failure gets its reply
            await self._final(send, ex, *reply_failed(req.id, exc))
            return
        refused: list[InsufficientScope] = []
        if self._auth is None:
            reply = call.start(self.server.handle, req)
        else:  # hook 2 (see _auth): a token without the operation's scopes is a 403, not a JSON-RPC error
            reply = call.start(functools.partial(self._auth.scoped, self.server.handle, refused), req)
            if refused:
                await self._auth.forbidden(send, req.id, refused[0])
                return
        if reply is not None:
            await self._final(send, ex, *reply)
            return
        await self._stream(ex, call, receive, send, refused)

    @staticmethod
    async def _final(send: Send, ex: _Exchange, data: bytes, code: int | None) -> None:
        """Answer a request whose reply is ready: JSON, or SSE when it emitted first."""
        ex.state = _Reply.DONE
        if ex.events:
            await send(sse_start())
            await send({"type": "http.response.body", "body": b"".join(ex.events) + b"data: " + data + b"\n"})
            return
        # `json_reply`, inline: one coroutine less per request.
        await send(
            {
                "type": "http.response.start",
                "status": 200 if code is None else STATUS_BY_CODE.get(code, 200),
                "headers": [JSON_CONTENT_TYPE, (b"content-length", b"%d" % len(data))],
            }
        )
        await send({"type": "http.response.body", "body": data})

    async def _stream(self, ex: _Exchange, call: Call, receive: Receive, send: Send, refused: list[Any]) -> None:
        """Await an asynchronous handler, streaming what it emits (see the module docs)."""
        loop = asyncio.get_running_loop()
        task = call.task = loop.create_task(call.finish())
        task.add_done_callback(ex.wake)
        self._shutdown.track(task)
        ex.receive = receive
        watch = ex.watch = loop.create_task(_next(receive))
        watch.add_done_callback(ex.received)
        keepalive = self.keepalive_interval
        try:
            while True:
                if ex.gone:
                    return
                events = ex.events
                if events:
                    chunk = b"".join(events)
                    events.clear()
                    ex.pending = 0
                    if ex.state is _Reply.PENDING:
                        ex.state = _Reply.STREAMING
                        await send(sse_start())
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                    continue
                if task.done():
                    break
                waiter = ex.waiter = loop.create_future()
                timer = loop.call_later(keepalive, fire, waiter) if keepalive is not None else None
                try:
                    woken_by = await waiter
                finally:
                    ex.waiter = None
                    if timer is not None:
                        timer.cancel()
                if woken_by is KEEPALIVE and not ex.gone:
                    if ex.state is _Reply.PENDING:
                        ex.state = _Reply.STREAMING
                        await send(sse_start())
                    await send({"type": "http.response.body", "body": KEEPALIVE_COMMENT, "more_body": True})
            reply = None if task.cancelled() else task.result()
            if reply is None and not ex.gone and self._shutdown.draining:
                # Cancelled by the shutdown's drain while the client waits: it is owed a reply
                # (not a bare HTTP 500 from the ASGI server, with an error in the log).
                reply = reply_failed(call.id, InternalError(_SHUT_DOWN))
            if reply is None or ex.gone:
                return  # cancelled: nothing more is sent
            streaming = ex.state is _Reply.STREAMING
            ex.state = _Reply.DONE
            data, code = reply
            if refused and not streaming and self._auth is not None:  # refused after an await (a task's scopes)
                await self._auth.forbidden(send, call.id, refused[0])
            elif streaming:
                await send({"type": "http.response.body", "body": b"data: " + data + b"\n"})
            else:
                await json_reply(send, 200 if code is None else STATUS_BY_CODE.get(code, 200), data)
        finally:
            if ex.state is not _Reply.DONE:
                ex.state = _Reply.GONE  # emit drops from now on
            call.cancel()  # a no-op once replied; otherwise its notifications drop from now on
            if not task.done():
                task.cancel()  # the client left, or this app is being shut down
            watch = ex.watch
            if watch is not None and not watch.done():
                watch.cancel()


#: The error of a request the shutdown cancelled after ``Server.shutdown_grace``.
_SHUT_DOWN = "the server shut down before the request finished (cancelled after its shutdown grace period)"


def asgi_app(server: Server, **options: Any) -> MCPApp:
    """The MCP endpoint of ``server`` as an ASGI app; options as for `MCPApp`."""
    return MCPApp(server, **options)


#: Request headers a handler never sees through ``ctx.headers``.
_CREDENTIAL_HEADERS = frozenset({b"authorization", b"proxy-authorization", b"dpop", b"cookie"})
