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
around its own `ServerConnection`. Every POST body goes to the endpoint's
own `ServerConnection.receive` (the server's one entry point: decoded once,
the era decided once); a modern request is one `Call` whose ``write`` is
the exchange (`_exchange.Exchange`; its states, `ReplyState`: pending,
streaming, done, gone), and the body is read by `_body.BodyReader`. ``legacy`` follows ``server.legacy``; with it off the
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

import contextlib
import functools
import logging
from typing import TYPE_CHECKING, Any, AsyncIterator, Iterable, cast

from ...jsonrpc import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_MESSAGE_SIZE,
    MCP,
    Decoder,
    InvalidRequest,
    ErrorResponse,
    Notification,
    Request,
    Response,
)
from ...protocol.errors import HeaderMismatch
from ...protocol import methods
from ...server import InsufficientScope, Server
from ...server.transport import (
    DEFAULT_MAX_SESSION_SUBSCRIPTIONS,
    DEFAULT_MAX_SUBSCRIPTION_URI,
    Call,
    Era,
    Held,
    Notified,
    Reply,
    ServerConnection,
    carries_protocol_meta,
    current_headers,
    reply_failed,
)
from ._asgi import (
    JSON_CONTENT_TYPE,
    STATUS_BY_CODE,
    Message,
    Receive,
    Scope,
    Send,
    empty_reply,
    http_error,
    json_reply,
    text_reply,
)
from ._body import BodyReader
from ._carrier import carry
from ._exchange import Exchange, ModernFeed, final
from ._headers import HeaderRules
from ._client_key import client_key
from ._listen_caps import DEFAULT_MAX_LISTENS_PER_CLIENT, ListenCaps
from ._security import HostGuard
from ._shutdown import Shutdown, run_lifespan
from ._session_rules import (
    DEFAULT_MAX_SESSIONS,
    DEFAULT_MAX_SESSIONS_PER_CLIENT,
    DEFAULT_PRESSURE_IDLE_TIMEOUT,
    DEFAULT_REPLAY_BUFFER,
    DEFAULT_SESSION_IDLE_TIMEOUT,
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
        "_seen_hosts",
        "_rules",
        "_receive",
        "_serve",
        "_check_call",
        "_reader",
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
        self._seen_hosts = self._guard.seen_hosts
        self._rules = HeaderRules(server)
        # The server's side of this endpoint: every POST body goes to its `receive`; modern requests
        # start with `serve` (legacy ones in their session's own connection, `_sessions`).
        conn = ServerConnection(
            server, _no_write, line=False, legacy=legacy, decoder=Decoder(MCP, max_size=max_body_size, max_depth=max_depth)
        )
        self._receive = conn.receive
        self._serve = conn.serve
        self._reader = BodyReader(max_body_size, read_timeout)
        # The client's address, set per request on the general path only, for telemetry's spans
        # (server/_telemetry.py) and middleware's callers (server/middleware/_keys.py); None without either.
        # By design, and safe: these are its only readers, and both are final here (the connection
        # above built the pipeline, so a later add_middleware raises), so a server without them pays nothing.
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
        # The fused stage's vet: the header rules' verdict; none behind the resource server, whose
        # scope check is per request (the fused stage is then off: `receive` holds every request).
        self._check_call = self._rules.check_call if self._auth is None else None

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
        if self._auth is not None:  # hook 1 (see _auth)
            issuer = self._auth.rs.authorization_server_app
            if issuer is not None and issuer.handles(path):  # the OAuth proxy's own routes (wiremcp.auth.proxy)
                await issuer(scope, receive, send)
                return
            gated = await self._auth.gate(scope, path, send)
            if gated is None:
                return
            send = gated
        if path != self.path:
            await text_reply(send, 404, b"Not Found")
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
        # Host, then Origin (DNS rebinding): `_security`. The usual case (a Host allowed before, no
        # Origin) is tested here, without a call: the HTTP path's instruction count (bench/README.md).
        problem = (
            None
            if b"origin" not in headers and headers.get(b"host") in self._seen_hosts
            else self._guard.request_problem(headers, scope)
        )
        if problem is not None or scope["method"] != "POST":
            await self._not_a_post(scope["method"], problem, headers, receive, send)
            return
        # The HTTP-level checks and the body (`_body`): in hand at once in the usual case.
        started = self._reader.begin(headers, receive)
        if type(started) is bytes:
            body: bytes = started
        else:
            read = await self._reader.finish(started, receive, send)  # type: ignore[arg-type]  # a Started
            if read is None:
                return  # refused, or the client went away
            body = read
        # The server's one entry point: the fused stage (vetted by the header rules; off behind the
        # resource server, whose scope check is per request), else the body decoded once, the era decided.
        sessions = self._sessions
        session_id = headers.get(SESSION_HEADER) if sessions is not None else None
        auth = self._auth
        out = self._receive(  # (positional: hold, defer, in_session, vet, headers)
            body,
            auth is not None,
            False,
            session_id is not None,
            self._check_call,
            headers,
        )
        kind = type(out)
        if kind is tuple:  # a Reply: the fused call's, or the error of a body that does not decode
            reply: Reply = out  # type: ignore[assignment]  # kind is tuple: a Reply
            data, code = reply
            await send(
                {
                    "type": "http.response.start",
                    "status": 200 if code is None else STATUS_BY_CODE.get(code, 200),
                    "headers": [JSON_CONTENT_TYPE, (b"content-length", b"%d" % len(data))],
                }
            )
            await send({"type": "http.response.body", "body": data})
            return
        feed = await self._route(out, scope, session_id, headers, receive, send)  # type: ignore[arg-type]  # not a Reply
        if feed is not None:
            # A modern call still running: its stream is carried from here, with the request, its body
            # and its headers let go (an idle ``subscriptions/listen`` keeps its feed and call only).
            del out, body, started, headers, raw_headers
            await carry(feed, send, json_ok=True, keepalive=self.keepalive_interval, answer=feed.answer)

    async def _route(
        self,
        out: Held | Notified | Response | ErrorResponse | None,
        scope: Scope,
        session_id: bytes | None,
        headers: dict[bytes, bytes],
        receive: Receive,
        send: Send,
    ) -> ModernFeed | None:
        """Where a message the server did not answer at once goes: its session, the modern path, or a refusal.

        A modern call that is still running is returned as its feed, for `__call__` to carry.
        """
        sessions = self._sessions
        kind = type(out)
        if self._peer is not None:  # telemetry or middleware: client.address, client.port (not on the fused path)
            self._peer.set(scope.get("client"))
        if kind is Held:
            msg, era = cast(Held, out)
            if era is Era.LEGACY:
                assert sessions is not None
                await self._legacy_request(sessions, session_id, msg, headers, receive, send, client_key(scope))
            elif sessions is not None and session_id is None and self._lost_legacy_client(msg, headers):
                await self._no_session_id(msg, send)
            elif msg.method == methods.SUBSCRIPTIONS_LISTEN and self._listen_caps is not None:
                return await self._listen(self._listen_caps, msg, headers, receive, send, client_key(scope))
            else:
                return await self._request(msg, headers, receive, send)
            return None
        note = out.note if kind is Notified else None  # type: ignore[union-attr]  # kind is Notified
        if session_id is not None:
            assert sessions is not None
            session = await sessions.find(session_id)
            if session is None:
                await self._no_session(send)
            elif note is not None:
                await sessions.notification(session, note, headers, send)
            else:  # the answer to one of the server's requests
                await sessions.response(session, out, headers, send)  # type: ignore[arg-type]  # Response or ErrorResponse
        elif note is not None:
            log.debug("notification %s accepted and dropped", note.method)
            await empty_reply(send, 202)
        else:  # Response or ErrorResponse
            not_allowed = InvalidRequest(
                "Invalid Request: a client must not send JSON-RPC responses to the MCP endpoint "
                "(streamable-http.mdx, Sending Messages)"
            )
            data, _ = reply_failed(None, not_allowed)
            await json_reply(send, 400, data)
        return None

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
        session = await sessions.find(session_id, req.id)
        if session is None:
            await self._no_session(send)
        else:
            await sessions.request(session, req, headers, receive, send)

    async def _listen(
        self, caps: ListenCaps, req: Request, headers: dict[bytes, bytes], receive: Receive, send: Send, client: str
    ) -> ModernFeed | None:
        """A modern ``subscriptions/listen``: counted against its client's share of open listens (`_listen_caps`)."""
        if not await caps.take(client, req, send):
            return None
        try:
            feed = await self._request(req, headers, receive, send)
        except BaseException:
            caps.release(client)
            raise
        if feed is None:
            caps.release(client)
        else:
            feed.release = functools.partial(caps.release, client)  # when its stream ends, however it ends
        return feed

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

    async def _request(self, req: Request, headers: dict[bytes, bytes], receive: Receive, send: Send) -> ModernFeed | None:
        """Answer a modern request: the header rules (their one place), the scopes, then the server's pipeline.

        A call still running is returned as its feed (`__call__` carries its stream).
        """
        ex = Exchange(self.max_stream_backlog)
        try:
            self._rules.check(headers, req)
        except HeaderMismatch as exc:
            if req.method == "initialize":
                # versioning.mdx, Backward Compatibility: name our versions to a legacy client.
                exc = HeaderMismatch(
                    f"{exc.message}; this endpoint serves MCP {', '.join(self.server.supported_versions)} "
                    "only, which has no initialize (every request carries its version in params._meta)"
                )
            await final(send, ex, *reply_failed(req.id, exc))
            return None
        except BaseException as exc:  # noqa: BLE001 - every failure gets its reply
            await final(send, ex, *reply_failed(req.id, exc))
            return None
        refused: list[InsufficientScope] = []
        if self._auth is None:
            out = self._serve(req, ex)
        else:  # hook 2 (see _auth): a token without the operation's scopes is a 403, not a JSON-RPC error
            out = self._serve(req, ex, functools.partial(self._auth.scoped, self.server.handle, refused))
            if refused:
                await self._auth.forbidden(send, req.id, refused[0])
                return None
        if type(out) is tuple:
            await final(send, ex, *out)
            return None
        call = cast(Call, out)  # not a Reply: the running Call
        ex.call = call
        return ModernFeed(ex, call, receive, refused, self._shutdown, self._auth)


def asgi_app(server: Server, **options: Any) -> MCPApp:
    """The MCP endpoint of ``server`` as an ASGI app; options as for `MCPApp`."""
    return MCPApp(server, **options)


#: Request headers a handler never sees through ``ctx.headers``.
_CREDENTIAL_HEADERS = frozenset({b"authorization", b"proxy-authorization", b"dpop", b"cookie"})


def _no_write(data: bytes) -> None:
    """The endpoint connection's own ``write``: each modern request writes to its exchange, never here."""
    raise AssertionError("a modern HTTP request writes to its own exchange")
