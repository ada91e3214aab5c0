"""The deprecated HTTP+SSE transport of 2024-11-05, served beside the MCP endpoint: an opt-in.

2024-11-05 basic/transports.mdx, "HTTP with SSE": the client opens an event stream with ``GET``
on the SSE endpoint; the server's first event is ``endpoint``, whose data is the URI to which the
client then POSTs each of its messages; everything the server sends (responses, notifications,
its own requests) comes as a ``message`` event on that stream. 2026-07-28
streamable-http.mdx ("Backward Compatibility", HTTP+SSE) lets a server keep hosting the old
endpoints beside the new one for the hosts that still use them. It is deprecated: `LegacySSEApp`
is never on by default (``serve_http(..., legacy_sse=True)``, ``wiremcp run --http
--legacy-sse``).

Rules it keeps:

* ``GET {sse_path}`` (``/sse``) opens a session: a fresh unguessable id, a 200
  ``text/event-stream``, the ``endpoint`` event naming ``{messages_path}?session_id=ID``
  (under the ASGI ``root_path``), then one ``message`` event per message, and a comment line
  every ``keepalive_interval`` seconds. Other methods are 405 (``Allow: GET``).
* ``POST {messages_path}?session_id=ID`` hands the body, one JSON-RPC message, to the session and
  answers ``202 Accepted``; what it provokes comes on the stream. An unknown or missing id is
  404 (a session that ended); not JSON content is 415; a body over ``max_body_size`` is 413 and
  not read further; one not complete within ``read_timeout`` is 408. Other methods are 405.
* The same guards as the MCP endpoint: the ``Host`` and ``Origin`` allowlists (DNS rebinding),
  checked first; with ``auth`` (by default the server's), a valid access token on both paths,
  as `_auth.AuthGate` checks it at the endpoint (401/403 with ``WWW-Authenticate``); the token
  is the request's ``ctx.auth`` for what the POST starts (per-operation scopes are checked by
  the handler, and a refusal is a JSON-RPC error on the stream: there is no HTTP status left
  to give).
* A session is served by the stdio machinery (`wiremcp.transports.stdio.LineServer`): the
  legacy session of the handshake, one reply per request, cancellation, the server's own
  requests to the client and their answers, ``max_in_flight`` and the listen cap. A POST body
  is fed as one line (its CR and LF, whitespace outside JSON strings and invalid inside them,
  become spaces).
* Bounded: at most ``max_sessions`` streams at once (one more is 503 with ``Retry-After``);
  a session whose client does not read holds at most ``max_backlog`` unsent events, and one more
  ends the session (its stream closes; the client reconnects). The session ends when its stream
  does (client gone, or lifespan shutdown): end of input for its `LineServer`, whose requests in
  flight finish, then are dropped.
* Everything else (the MCP endpoint, metadata) goes to the wrapped app unchanged, the
  ``lifespan`` too (its shutdown also ends every stream here).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import deque
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from ...jsonrpc import DEFAULT_MAX_MESSAGE_SIZE
from ._asgi import KEEPALIVE_COMMENT, empty_reply, http_error, json_reply, sse_start
from ._security import HostGuard, is_json_content_type

if TYPE_CHECKING:
    from ...auth.server import ResourceServer
    from ...server import Server
    from ._asgi import Receive, Scope, Send
    from ._auth import AuthGate

__all__ = ["LegacySSEApp", "with_legacy_sse", "DEFAULT_MAX_SSE_SESSIONS", "DEFAULT_MAX_SSE_BACKLOG"]

log = logging.getLogger("wiremcp.http")

#: HTTP+SSE sessions (open event streams) at once.
DEFAULT_MAX_SSE_SESSIONS = 1000
#: Events a session holds for a client that does not read, before the session is ended.
DEFAULT_MAX_SSE_BACKLOG = 1000


class _Session:
    """One HTTP+SSE client: its event queue and the `LineServer` serving it."""

    __slots__ = ("id", "events", "wake", "overflow", "closed", "abandoned", "lines", "pump")

    def __init__(self, id: str) -> None:
        self.id = id
        self.events: deque[bytes] = deque()
        self.wake = asyncio.Event()
        self.overflow = False
        self.closed = False
        self.abandoned = False
        self.lines: Any = None
        self.pump: asyncio.Future[None] | None = None

    def end(self, *, abandon: bool = False) -> None:
        """No more events; ``abandon``: the client is gone or not reading, so stop writing at once
        (a write blocked on a full connection is cancelled), else send what is queued first."""
        self.closed = True
        self.wake.set()
        if abandon:
            self.abandoned = True
            if self.pump is not None:
                self.pump.cancel()


class LegacySSEApp:
    """``app`` (the MCP endpoint) plus the 2024-11-05 HTTP+SSE endpoints (see the module docs)."""

    def __init__(
        self,
        app: Any,
        server: Server,
        *,
        sse_path: str = "/sse",
        messages_path: str = "/messages",
        allowed_hosts: Any = None,
        allowed_origins: Any = None,
        auth: ResourceServer | None = None,
        max_body_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        read_timeout: float | None = 30.0,
        keepalive_interval: float | None = 15.0,
        max_sessions: int = DEFAULT_MAX_SSE_SESSIONS,
        max_backlog: int = DEFAULT_MAX_SSE_BACKLOG,
        **line_limits: Any,
    ) -> None:
        if not sse_path.startswith("/") or not messages_path.startswith("/") or sse_path == messages_path:
            raise ValueError("sse_path and messages_path must be two different paths starting with '/'")
        if not server.legacy:
            raise ValueError("the HTTP+SSE transport serves legacy clients: it needs Server(legacy=True)")
        self.app = app
        self.server = server
        self.sse_path = sse_path
        self.messages_path = messages_path
        self.max_body_size = max_body_size
        self.read_timeout = read_timeout
        self.keepalive_interval = keepalive_interval
        self.max_sessions = max_sessions
        self.max_backlog = max_backlog
        self._line_limits = {"max_message_size": max_body_size, **line_limits}
        self._guard = HostGuard(allowed_hosts, allowed_origins)
        self._sessions: dict[str, _Session] = {}
        if auth is None:
            auth = server.auth
        self._gates: dict[str, AuthGate] = {}
        if auth is not None:
            from ._auth import AuthGate

            self._gates = {sse_path: AuthGate(auth, sse_path), messages_path: AuthGate(auth, messages_path)}

    @property
    def session_count(self) -> int:
        """How many HTTP+SSE sessions (event streams) are open."""
        return len(self._sessions)

    def close_sessions(self) -> None:
        """End every stream (lifespan shutdown)."""
        for session in list(self._sessions.values()):
            session.end()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, self._watching(receive), send)
            return
        path = scope.get("path", "")
        root = scope.get("root_path") or ""
        if root and path.startswith(root):
            path = path[len(root) :] or "/"
        if scope["type"] != "http" or path not in (self.sse_path, self.messages_path):
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        problem = self._guard.request_problem(headers, scope)
        if problem is not None:
            await json_reply(send, 403, http_error(f"Forbidden: {problem}"))
            return
        gate = self._gates.get(path)
        if gate is not None:
            gated = await gate.gate(scope, path, send)
            if gated is None:
                return
            send = gated
        if path == self.sse_path:
            if scope["method"] != "GET":
                await json_reply(send, 405, http_error("Method Not Allowed: open the event stream with GET"), ((b"allow", b"GET"),))
                return
            await self._stream(root, receive, send)
            return
        if scope["method"] != "POST":
            await json_reply(send, 405, http_error("Method Not Allowed: send messages with POST"), ((b"allow", b"POST"),))
            return
        await self._message(scope, headers, receive, send)

    def _watching(self, receive: Receive) -> Receive:
        async def watched() -> Any:
            message = await receive()
            if message.get("type") == "lifespan.shutdown":
                self.close_sessions()
            return message

        return watched

    # -- GET: the event stream -------------------------------------------------

    async def _stream(self, root: str, receive: Receive, send: Send) -> None:
        if len(self._sessions) >= self.max_sessions:
            await json_reply(send, 503, http_error(f"Service Unavailable: {self.max_sessions} HTTP+SSE sessions are open"))
            return
        from ..stdio import LineServer

        session = _Session(secrets.token_hex(16))
        session.lines = LineServer(self.server, lambda data: self._push(session, data), **self._line_limits)
        self._sessions[session.id] = session
        gone = asyncio.ensure_future(_disconnected(receive))
        gone.add_done_callback(lambda _: session.end(abandon=True))
        try:
            await send(sse_start())
            endpoint = f"{root}{self.messages_path}?session_id={session.id}".encode()
            await send({"type": "http.response.body", "body": b"event: endpoint\ndata: " + endpoint + b"\n\n", "more_body": True})
            session.pump = asyncio.ensure_future(self._pump(session, send))
            await asyncio.wait({session.pump})  # ends drained, failed, or cancelled by `_Session.end`
            if not session.pump.cancelled() and session.pump.exception() is not None:
                log.debug("HTTP+SSE stream %s ended: %r", session.id, session.pump.exception())
        except Exception as exc:  # noqa: BLE001 - the client went away mid-write
            log.debug("HTTP+SSE stream %s ended: %r", session.id, exc)
        finally:
            del self._sessions[session.id]
            gone.cancel()
            if session.pump is not None:
                session.pump.cancel()
            session.lines.feed_eof()  # its requests in flight finish; their replies go nowhere
            log.debug("HTTP+SSE session %s ended%s", session.id, " (the client did not read)" if session.overflow else "")
        if session.abandoned:
            return
        try:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except Exception:  # noqa: BLE001 - the connection is gone: nothing is owed
            pass

    async def _pump(self, session: _Session, send: Send) -> None:
        while True:
            while session.events:
                data = session.events.popleft()
                await send({"type": "http.response.body", "body": b"event: message\ndata: " + data + b"\n\n", "more_body": True})
            if session.closed:
                return
            session.wake.clear()
            try:
                async with asyncio.timeout(self.keepalive_interval):
                    await session.wake.wait()
            except TimeoutError:
                await send({"type": "http.response.body", "body": KEEPALIVE_COMMENT, "more_body": True})

    def _push(self, session: _Session, data: bytes) -> None:
        """`LineServer`'s write: one newline-terminated message, queued for the stream."""
        if session.closed:
            return
        if len(session.events) >= self.max_backlog:
            session.overflow = True
            session.end(abandon=True)
            return
        session.events.append(data.rstrip(b"\n"))
        session.wake.set()

    # -- POST: one message -----------------------------------------------------

    async def _message(self, scope: Scope, headers: dict[bytes, bytes], receive: Receive, send: Send) -> None:
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        ids = query.get("session_id") or [""]
        session = self._sessions.get(ids[0])
        if session is None or session.closed:
            await json_reply(send, 404, http_error("Not Found: no HTTP+SSE session with that session_id; open one with GET " + self.sse_path))
            return
        if not is_json_content_type(headers.get(b"content-type")):
            await json_reply(send, 415, http_error("Unsupported Media Type: messages are application/json"))
            return
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body_size:
            await json_reply(send, 413, http_error(f"Payload Too Large: the limit is {self.max_body_size} bytes"))
            return
        try:
            async with asyncio.timeout(self.read_timeout):
                body = await self._read(receive)
        except TimeoutError:
            await json_reply(send, 408, http_error(f"Request Timeout: the body did not arrive within {self.read_timeout:g} s"))
            return
        if body is None:
            await json_reply(send, 413, http_error(f"Payload Too Large: the limit is {self.max_body_size} bytes"))
            return
        if body is _GONE:
            return
        await empty_reply(send, 202)
        session.lines.feed(body.replace(b"\r", b" ").replace(b"\n", b" ") + b"\n")

    async def _read(self, receive: Receive) -> bytes | None:
        """The whole body; None past ``max_body_size`` (not read further); `_GONE` if the client left."""
        parts: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return _GONE
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_size:
                return None
            parts.append(chunk)
            if not message.get("more_body"):
                return b"".join(parts)


_GONE = b"\x00gone"


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


#: `MCPApp` options that the HTTP+SSE endpoints apply the same way.
_SHARED_OPTIONS = ("allowed_origins", "auth", "max_body_size", "read_timeout", "keepalive_interval")


def with_legacy_sse(app: Any, server: Server, path: str, allowed_hosts: Any, options: dict[str, Any]) -> LegacySSEApp:
    """``app`` (an `MCPApp` at ``path``, built with ``options``) with the HTTP+SSE endpoints beside it,
    under the same Host/Origin allowlists, authorization and body limits."""
    if path in ("/sse", "/messages"):
        raise ValueError(f"the MCP endpoint {path!r} is one of the HTTP+SSE paths (/sse, /messages): choose another path")
    shared = {name: options[name] for name in _SHARED_OPTIONS if name in options}
    return LegacySSEApp(app, server, allowed_hosts=allowed_hosts, **shared)
