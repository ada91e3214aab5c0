"""Legacy (2025-11-25) sessions on the Streamable HTTP endpoint.

A dual-era endpoint (2026-07-28 basic/versioning.mdx, "Backward
Compatibility with Initialization-Based Versions") serves a client that opens
with ``initialize`` as 2025-11-25 basic/transports.mdx, "Streamable HTTP",
describes. `MCPApp` routes here every message that belongs to a session; the
rules kept here:

Sessions (2025-11-25 transports.mdx, "Session Management")

* ``initialize`` without modern ``_meta`` opens a session; its reply carries
  ``Mcp-Session-Id``: ``secrets.token_urlsafe(32)``, 43 visible ASCII
  characters. Past ``max_sessions`` live sessions it gets 503. An
  ``MCP-Protocol-Version`` header naming a modern version on it is 400/-32020
  (the header and the body speak different eras);
* every later message of the session carries that id; an id this app does not
  know (never issued, deleted, expired) is 404, and the client starts over
  with ``initialize``;
* ``MCP-Protocol-Version``, when sent, must be the negotiated version, else
  400 with -32020 ("Protocol Version Header": an invalid version is 400);
* DELETE ends the session (204). A session with nothing in flight, no stream
  open and no message for ``idle_timeout`` seconds ends by itself. Ending
  cancels the requests in flight, fails the server's own requests still
  waiting for an answer, ends its streams (a POST not yet answered gets 404)
  and calls `LegacySession.close`.

Messages in a session ("Sending Messages to the Server")

* a request is served with the server's ordinary handlers (`LegacySession`);
  its JSON-RPC answer has status 200 whether result or error (2025-11-25 maps
  no error code to a status); a request id already in flight is -32600;
* a notification is 202: ``notifications/initialized`` marks the session
  initialized; ``notifications/cancelled`` cancels the request it names, and
  nothing more is sent for that request, not even its response;
* a response answers one of the server's requests to the client: 202, or 400
  when no request of the session with that id is waiting.

Replies and streams ("Sending Messages", "Listening", "Resumability and Redelivery")

* a request answered before it sends anything gets one ``application/json``
  body; otherwise its reply is an SSE stream: a priming event (an id and empty
  data; 2025-11-25 sessions only, older clients cannot parse it), the
  request's notifications and the server's requests to the client (sampling,
  elicitation, roots: `LegacySession.send_request` run by its handler), then
  its response, then the end of the stream;
* the server's requests go on the stream of the request whose handler makes
  them; on the standalone stream when made outside any request, or when that
  request's stream has no connection and the standalone stream has one;
* a GET with the session id opens the session's standalone stream: session
  notifications (list changes, resource updates) and requests made outside
  any request; one connection per stream, a newer GET replaces an older one;
* every event has an id ``{stream}-{n}``: the stream's number in the session
  (0 is the standalone stream) and the event's number in its stream, given as
  events are written, so ids are unique in the session and name their stream;
* a GET with ``Last-Event-ID`` resumes the stream that id names: its events
  after that id still in the session's replay buffer are sent again, then the
  stream goes on (a request's stream up to its response); an id this session
  did not give out opens the standalone stream instead;
* a client that disconnects has not cancelled its request ("Disconnection
  SHOULD NOT be interpreted as the client cancelling"): the request goes on,
  and what it sends waits for the client to resume, up to ``replay_buffer``
  bytes per stream; past that the request is stopped and its stream ends with
  a -32603 error. A connected client that does not read may leave
  ``max_stream_backlog`` bytes unsent, with the same outcome;
* `Context.close_sse_stream` ends a request's connection on purpose: the
  events so far, a ``retry`` field, the end of the response; the client
  resumes with ``Last-Event-ID`` (SEP-1699, the ``test_reconnection`` fixture);
* a stream silent for ``keepalive_interval`` gets a ``: keep-alive`` comment.

Memory: at most ``max_sessions`` sessions; each keeps the written events of
its streams for replay up to ``replay_buffer`` bytes (oldest dropped first),
and each of its streams holds at most ``replay_buffer`` bytes unsent while no
connection carries it.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import itertools
import logging
import secrets
import time
from collections import deque
from typing import Any, Awaitable

from ...jsonrpc import (
    InternalError,
    InvalidRequest,
    LocalProtocolError,
    Notification,
    PendingRequests,
    RemoteProtocolError,
    Request,
    encode_notification,
    encode_request,
)
from ...protocol import LEGACY_VERSIONS, methods
from ...protocol.errors import HEADER_MISMATCH, HeaderMismatch
from ...server import Server
from ...server._legacy import ClientRequestFailed, LegacySession
from ...server._reply import reply_failed, reply_ok, settle
from ._asgi import (
    KEEPALIVE,
    KEEPALIVE_COMMENT,
    STATUS_BY_CODE,
    Receive,
    Send,
    empty_reply,
    fire,
    http_error,
    json_reply,
    sse_start,
)
from ._security import _q_is_zero

__all__ = [
    "Sessions",
    "HTTPSession",
    "SESSION_HEADER",
    "LAST_EVENT_ID_HEADER",
    "DEFAULT_SESSION_IDLE_TIMEOUT",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_REPLAY_BUFFER",
    "DEFAULT_RETRY_MS",
    "LEGACY_HEADER_VALUES",
]

log = logging.getLogger("wiremcp.transport")

#: Seconds a session may sit unused (nothing in flight, no stream open) before it ends.
DEFAULT_SESSION_IDLE_TIMEOUT = 30 * 60.0
#: Live legacy sessions one app holds; ``initialize`` past it gets 503. Bounds memory
#: (with ``replay_buffer``) against clients that never DELETE their sessions.
DEFAULT_MAX_SESSIONS = 10_000
#: Bytes of written events one session keeps for replay after a reconnection.
DEFAULT_REPLAY_BUFFER = 256 * 1024
#: Milliseconds a client waits before reconnecting after the server closed a stream's
#: connection (the SSE ``retry`` field), when the handler names none.
DEFAULT_RETRY_MS = 1000

SESSION_HEADER = b"mcp-session-id"
LAST_EVENT_ID_HEADER = b"last-event-id"
_VERSION_HEADER = b"mcp-protocol-version"
#: The first revision whose clients accept an SSE event with empty data (the priming event).
_PRIMING_SINCE = "2025-11-25"
#: ``MCP-Protocol-Version`` values of the legacy era, as they arrive in headers.
LEGACY_HEADER_VALUES = frozenset(v.encode("ascii") for v in LEGACY_VERSIONS)

#: The stream of the legacy request whose handler is running (set in its task).
_CURRENT: contextvars.ContextVar[_Stream | None] = contextvars.ContextVar("wiremcp_http_stream", default=None)


def _discard(method: str, params: dict[str, Any]) -> None:
    return None


def _unline(data: bytes) -> bytes:
    """A reply line without its newline: SSE ``data`` must not contain one."""
    return data[:-1] if data[-1:] == b"\n" else data


def _event(sid: int, n: int, data: bytes) -> bytes:
    return b"id: %d-%d\ndata: %s\n\n" % (sid, n, data)


class _Pump:
    """One HTTP response carrying a stream: a POST's reply, or a GET."""

    __slots__ = ("receive", "queued", "prime", "waiter", "watch", "gone", "started", "head_sent", "ending", "lost")

    def __init__(self, receive: Receive, *, queued: bytes = b"", prime: bool = True) -> None:
        self.receive = receive
        self.queued = queued  # events to write first (a replay), already framed
        self.prime = prime  # open with a priming event (not when resuming)
        self.waiter: asyncio.Future[Any] | None = None
        self.watch: asyncio.Task[Any] | None = None
        self.gone = False  # the client disconnected
        self.started = False  # committed to SSE (the priming event is given out)
        self.head_sent = False
        self.ending: bytes | None = None  # set when the stream let go of this response: its last bytes
        self.lost = False  # ... because the session ended

    def wake(self, _: Any = None) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def received(self, watch: asyncio.Task[Any]) -> None:
        """What the client sent after its body (a GET: an empty one first): only a disconnect matters."""
        if watch.cancelled():
            return
        if watch.exception() is None and watch.result().get("type") != "http.disconnect":
            again = self.watch = asyncio.get_running_loop().create_task(self.receive())  # type: ignore[arg-type]
            again.add_done_callback(self.received)
            return
        self.gone = True
        self.wake()


class _Stream:
    """One SSE stream of a session: a request's reply stream (number >= 1) or the standalone stream (0)."""

    __slots__ = (
        "session",
        "sid",
        "request_id",
        "method",
        "task",
        "seq",
        "pending",
        "pending_bytes",
        "pump",
        "finished",
        "final",
        "final_sent",
        "named",
        "retained",
    )

    def __init__(self, session: HTTPSession, sid: int, request_id: Any = None, method: str = "") -> None:
        self.session = session
        self.sid = sid
        self.request_id = request_id
        self.method = method
        self.task: asyncio.Task[Any] | None = None
        self.seq = 0  # the number of the last event written
        self.pending: list[bytes] = []  # messages not written yet
        self.pending_bytes = 0
        self.pump: _Pump | None = None  # the response carrying the stream now, if any
        self.finished = False  # nothing more will be added
        self.final: bytes | None = None  # the response, once there is one
        self.final_sent = False
        self.named = False  # an event id of this stream was given out: it can be resumed
        self.retained = 0  # its events in the session's replay buffer

    # -- adding ----------------------------------------------------------------

    def emit(self, method: str, params: dict[str, Any]) -> None:
        """The request's notifications (progress, log messages)."""
        if self.finished:
            log.debug("dropped %s for request %r: it is finished or cancelled", method, self.request_id)
            return
        try:
            data = encode_notification(method, params)
        except LocalProtocolError as exc:
            log.error("cannot encode %s for request %r: %s", method, self.request_id, exc)
            return
        self.push(data)

    def push(self, data: bytes) -> None:
        if self.finished:
            log.debug("dropped a message for request %r: it is finished or cancelled", self.request_id)
            return
        self.pending.append(data)
        self.pending_bytes += len(data)
        sessions = self.session.sessions
        limit = sessions.max_stream_backlog if self.pump is not None else sessions.replay_buffer
        if self.pending_bytes > limit:
            self._overflow(limit)
        self.wake()

    def finish(self, final: bytes | None) -> None:
        """No more messages: ``final`` is the response (None: cancelled, nothing more is sent)."""
        if self.finished:
            return
        self.finished = True
        self.final = final
        self.wake()

    def _overflow(self, limit: int) -> None:
        task = self.task
        if task is not None and not task.done():
            log.warning(
                "request %r (%s) stopped: %d bytes of messages for it were left unsent (limit %d)",
                self.request_id, self.method, self.pending_bytes, limit,
            )
            self.pending = []
            self.pending_bytes = 0
            stopped = InternalError(
                f"Internal error: the request was stopped: its client left more than {limit} bytes "
                "of messages unread"
            )
            self.finish(_unline(reply_failed(self.request_id, stopped)[0]))
            task.cancel()
            return
        # The standalone stream (session notifications): drop the oldest, keep the newest.
        pending = self.pending
        dropped = 0
        while self.pending_bytes > limit and len(pending) - dropped > 1:
            self.pending_bytes -= len(pending[dropped])
            dropped += 1
        del pending[:dropped]
        log.warning(
            "session %s: dropped %d unsent messages of stream %d (limit %d bytes)",
            self.session.id[:8], dropped, self.sid, limit,
        )

    def wake(self) -> None:
        pump = self.pump
        if pump is not None:
            pump.wake()

    # -- writing ---------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """Whether something is waiting to be written."""
        return bool(self.pending) or (self.final is not None and not self.final_sent)

    def prime(self) -> bytes:
        """The priming event: an id to resume from, and empty data."""
        if not self.session.primes:
            return b""
        self.seq += 1
        self._name()
        return b"id: %d-%d\ndata: \n\n" % (self.sid, self.seq)

    def take(self) -> bytes:
        """Number, retain and frame what waits to be written (the response last)."""
        parts = []
        if self.pending:
            for data in self.pending:
                parts.append(self._frame(data))
            self.pending = []
            self.pending_bytes = 0
        if self.final is not None and not self.final_sent:
            self.final_sent = True
            parts.append(self._frame(self.final))
        return b"".join(parts)

    def _frame(self, data: bytes) -> bytes:
        self.seq += 1
        self._name()
        self.session.retain(self, self.seq, data)
        return _event(self.sid, self.seq, data)

    def _name(self) -> None:
        if not self.named:
            self.named = True
            self.session.streams[self.sid] = self

    def let_go(self, ending: bytes = b"", *, lost: bool = False) -> None:
        """End the response carrying the stream (if any) with ``ending``; the stream lives on."""
        pump = self.pump
        if pump is None:
            return
        self.pump = None
        pump.ending = ending
        pump.lost = lost
        pump.wake()

    def close_connection(self, retry_ms: int) -> bool:
        """`Context.close_sse_stream`: what is ready, a ``retry`` field, the end of the response."""
        pump = self.pump
        if pump is None or pump.gone or (self.finished and not self.ready):
            return False
        if not (self.named or self.session.primes):
            return False  # no event id to resume from would reach the client (a 2025-06-18 session)
        tail = pump.queued
        pump.queued = b""
        if not pump.started:
            pump.started = True
            tail = self.prime() + tail
        self.let_go(tail + self.take() + b"retry: %d\n\n" % retry_ms)
        log.debug("closed the connection of stream %d (request %r); the client may resume it", self.sid, self.request_id)
        return True

    def forget_if_done(self) -> None:
        """Drop a finished stream from the resumable ones once nothing of it is left to send again."""
        if self.sid and self.finished and not self.ready and self.retained == 0 and self.pump is None:
            self.session.streams.pop(self.sid, None)


class HTTPSession:
    """One legacy session: its `LegacySession`, its streams, the server's requests awaiting answers."""

    __slots__ = (
        "id",
        "key",
        "sessions",
        "legacy",
        "primes",
        "standalone",
        "streams",
        "calls",
        "outgoing",
        "replay",
        "replay_bytes",
        "last_seen",
        "closed",
        "_sids",
    )

    def __init__(self, sessions: Sessions, id: str) -> None:
        self.id = id
        self.key = id.encode("ascii")
        self.sessions = sessions
        self.legacy: LegacySession | None = None
        self.primes = False  # whether its streams open with a priming event
        self.standalone = _Stream(self, 0)
        self.streams: dict[int, _Stream] = {}  # resumable streams, by number
        self.calls: dict[Any, _Stream] = {}  # requests in flight, by JSON-RPC id
        self.outgoing: PendingRequests[asyncio.Future[Any]] = PendingRequests()
        self.replay: deque[tuple[_Stream, int, bytes]] = deque()
        self.replay_bytes = 0
        self.last_seen = time.monotonic()
        self.closed = False
        self._sids = itertools.count(1)

    @property
    def version(self) -> str | None:
        return self.legacy.version if self.legacy is not None else None

    @property
    def busy(self) -> bool:
        """Something in flight or a stream connected: not idle, whatever the clock says."""
        if self.calls or self.standalone.pump is not None:
            return True
        return any(s.pump is not None for s in self.streams.values())

    def touch(self) -> None:
        self.last_seen = time.monotonic()

    def new_stream(self, request_id: Any, method: str) -> _Stream:
        return _Stream(self, next(self._sids), request_id, method)

    # -- replay ------------------------------------------------------------------

    def retain(self, stream: _Stream, n: int, data: bytes) -> None:
        replay = self.replay
        replay.append((stream, n, data))
        self.replay_bytes += len(data)
        stream.retained += 1
        limit = self.sessions.replay_buffer
        while self.replay_bytes > limit and replay:
            old, _, old_data = replay.popleft()
            self.replay_bytes -= len(old_data)
            old.retained -= 1
            if old.retained == 0:
                old.forget_if_done()

    def resume_point(self, last_event_id: bytes) -> tuple[_Stream, bytes] | None:
        """The stream a ``Last-Event-ID`` names, and its events after it still retained."""
        sid, dash, n = last_event_id.strip().partition(b"-")
        if not dash or not sid.isdigit() or not n.isdigit():
            return None
        stream = self.standalone if sid == b"0" else self.streams.get(int(sid))
        if stream is None:
            return None
        after = int(n)
        again = b"".join(_event(stream.sid, m, d) for s, m, d in self.replay if s is stream and m > after)
        return stream, again

    # -- the transport side of LegacySession ----------------------------------------

    def notify(self, method: str, params: dict[str, Any]) -> None:
        """Session notifications (list changes, resource updates): the standalone stream."""
        self.standalone.emit(method, params)

    async def send_request(self, method: str, params: dict[str, Any]) -> Any:
        """A request to the client (sampling, elicitation, roots), awaited until it answers."""
        if self.closed:
            raise ConnectionError("the session has ended")
        standalone = self.standalone
        stream = _CURRENT.get()
        if stream is None or stream.session is not self or stream.finished or (stream.pump is None and standalone.pump is not None):
            stream = standalone
        id_ = self.outgoing.new_id()
        data = encode_request(id_, method, params)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.outgoing.add(id_, method, context=future)
        stream.push(data)
        try:
            return await future
        except asyncio.CancelledError:  # timed out, or the request was cancelled: tell the client
            if self.outgoing.abandon(id_) is not None and not self.closed:
                note = encode_notification(methods.CANCELLED, {"requestId": id_, "reason": "no longer needed"})
                (standalone if stream.finished else stream).push(note)
            raise

    def close_stream(self, request_id: Any, retry_ms: int | None) -> bool:
        stream = self.calls.get(request_id)
        if stream is None:
            return False
        return stream.close_connection(self.sessions.retry_ms if retry_ms is None else retry_ms)

    # -- what the client posts ---------------------------------------------------------

    def answer(self, msg: Any) -> bool:
        """The client's response to one of our requests; False if none with its id is waiting."""
        try:
            entry = self.outgoing.resolve(msg)
        except RemoteProtocolError as exc:
            log.warning("session %s: %s", self.id[:8], exc)
            return False
        if entry is None or entry.context.done():
            return True  # a late answer to a request we gave up on
        if hasattr(msg, "result"):
            entry.context.set_result(msg.result)
        else:
            entry.context.set_exception(ClientRequestFailed(msg.code, msg.message, msg.data))
        return True

    def cancel(self, params: Any) -> None:
        """``notifications/cancelled``: stop the request it names; nothing more is sent for it."""
        target = params.get("requestId") if type(params) is dict else None
        stream = self.calls.get(target) if type(target) in (str, int) else None
        if stream is None:
            # Unknown, finished or malformed: ignore (cancellation.mdx, Error Handling).
            log.debug("cancellation for %r ignored: no such request in flight", target)
            return
        log.info("request %r cancelled: %s", target, params.get("reason", "no reason given"))
        stream.pending = []
        stream.pending_bytes = 0
        stream.finish(None)
        task = stream.task
        if task is not None:
            task.get_loop().call_soon(task.cancel)

    # -- the end -------------------------------------------------------------------------

    def close(self, why: str) -> None:
        if self.closed:
            return
        self.closed = True
        log.info("session %s ended: %s", self.id[:8], why)
        self.sessions.forget(self)
        for stream in list(self.calls.values()):
            stream.pending = []
            stream.finish(None)
            if stream.task is not None:
                stream.task.cancel()
            stream.let_go(lost=True)
        self.calls.clear()
        for entry in self.outgoing.drain():
            if not entry.context.done():
                entry.context.set_exception(ConnectionError("the session has ended"))
        self.standalone.let_go(lost=True)
        for stream in list(self.streams.values()):
            stream.let_go(lost=True)
        self.streams.clear()
        self.replay.clear()
        self.replay_bytes = 0
        if self.legacy is not None:
            self.legacy.close()


class Sessions:
    """The legacy sessions of one `MCPApp` (see the module docs)."""

    def __init__(
        self,
        server: Server,
        *,
        idle_timeout: float = DEFAULT_SESSION_IDLE_TIMEOUT,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        replay_buffer: int = DEFAULT_REPLAY_BUFFER,
        keepalive_interval: float | None = None,
        max_stream_backlog: int = 16 * 1024 * 1024,
        retry_ms: int = DEFAULT_RETRY_MS,
    ) -> None:
        if idle_timeout <= 0:
            raise ValueError("session_idle_timeout must be positive")
        if max_sessions < 0:
            raise ValueError("max_sessions must not be negative")
        if replay_buffer < 0:
            raise ValueError("replay_buffer must not be negative")
        self.server = server
        self.idle_timeout = idle_timeout
        self.max_sessions = max_sessions
        self.replay_buffer = replay_buffer
        self.keepalive_interval = keepalive_interval
        self.max_stream_backlog = max_stream_backlog
        self.retry_ms = retry_ms
        self.by_key: dict[bytes, HTTPSession] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._unsubscribe: Any = None

    def __len__(self) -> int:
        return len(self.by_key)

    # -- the set of sessions ------------------------------------------------------------

    def lookup(self, raw_id: bytes) -> HTTPSession | None:
        return self.by_key.get(raw_id.strip(b" \t"))

    def forget(self, session: HTTPSession) -> None:
        self.by_key.pop(session.key, None)

    def close_all(self) -> None:
        """End every session (the app shuts down)."""
        for session in list(self.by_key.values()):
            session.close("the server is shutting down")
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def _watch(self) -> None:
        """Start the idle sweep (and the shutdown hook) with the first session."""
        loop = asyncio.get_running_loop()
        if self._timer is None or self._loop is not loop:  # (an app may outlive a loop, as in tests)
            self._loop = loop
            self._timer = loop.call_later(self._tick, self._sweep)
        if self._unsubscribe is None:
            self._unsubscribe = self.server.bus.subscribe(self._on_change)

    @property
    def _tick(self) -> float:
        # A session ends between 1 and 1.25 idle timeouts after its last message (at most a minute late).
        return min(self.idle_timeout / 4, 60.0)

    def _sweep(self) -> None:
        self._timer = None
        now = time.monotonic()
        limit = self.idle_timeout
        for session in list(self.by_key.values()):
            if now - session.last_seen >= limit and not session.busy:
                session.close(f"unused for {limit:g} s")
        if self.by_key and self._loop is not None:
            self._timer = self._loop.call_later(self._tick, self._sweep)

    def _on_change(self, event: Any) -> None:
        if event is None:  # Server.close_subscriptions(): the server is stopping; let GET streams go
            for session in list(self.by_key.values()):
                session.standalone.let_go()

    # -- POST -------------------------------------------------------------------------------

    def _version_problem(self, session: HTTPSession, headers: dict[bytes, bytes]) -> HeaderMismatch | None:
        raw = headers.get(_VERSION_HEADER)
        if raw is None:
            return None
        sent = raw.strip(b" \t").decode("latin-1")
        if sent == session.version:
            return None
        return HeaderMismatch(
            f"Header mismatch: MCP-Protocol-Version header value {sent!r} is not this session's "
            f"negotiated protocol version {session.version!r}"
        )

    async def _refuse_version(self, problem: HeaderMismatch, send: Send, id: Any = None, *, with_id: bool = False) -> None:
        if with_id:
            await json_reply(send, 400, reply_failed(id, problem)[0])
        else:
            await json_reply(send, 400, http_error(problem.message, HEADER_MISMATCH))

    async def initialize(self, req: Request, headers: dict[bytes, bytes], send: Send) -> None:
        """``initialize`` without a session: a new session, its id in ``Mcp-Session-Id``."""
        raw = headers.get(_VERSION_HEADER)
        if raw is not None:
            sent = raw.strip(b" \t").decode("latin-1")
            if sent in self.server.supported_versions:
                problem = HeaderMismatch(
                    f"Header mismatch: MCP-Protocol-Version header value {sent!r} is a modern version, but "
                    "initialize without params._meta opens a legacy (2025-11-25) session"
                )
                await self._refuse_version(problem, send, req.id, with_id=True)
                return
        if len(self.by_key) >= self.max_sessions:
            log.warning("refused initialize: %d legacy sessions are open, the limit", len(self.by_key))
            busy = InternalError(
                f"Server busy: {len(self.by_key)} sessions are open, the most this server keeps; try again later "
                "(MCP 2026-07-28 clients need no session)"
            )
            error = reply_failed(req.id, busy)[0]
            await json_reply(send, 503, error)
            return
        session = HTTPSession(self, secrets.token_urlsafe(32))
        legacy = None
        try:
            legacy = self.server.open_session(session.send_request, session.notify, session_id=session.id)
            result = legacy.handle(req, _discard)
        except BaseException as exc:  # noqa: BLE001 - every failure gets its reply
            if legacy is not None:
                legacy.close()
            data, code = reply_failed(req.id, exc)
            await json_reply(send, STATUS_BY_CODE.get(code, 400), data)
            return
        legacy.close_stream = session.close_stream
        session.legacy = legacy
        session.primes = (legacy.version or "") >= _PRIMING_SINCE
        self.by_key[session.key] = session
        self._watch()
        log.info("session %s opened (protocol %s)", session.id[:8], legacy.version)
        data, _ = reply_ok(req.id, result)
        await json_reply(send, 200, data, ((SESSION_HEADER, session.key),))

    async def request(
        self, session: HTTPSession, req: Request, headers: dict[bytes, bytes], receive: Receive, send: Send
    ) -> None:
        session.touch()
        problem = self._version_problem(session, headers)
        if problem is not None:
            await self._refuse_version(problem, send, req.id, with_id=True)
            return
        id_ = req.id
        if id_ in session.calls:
            exc = InvalidRequest(f"Invalid Request: request id {id_!r} is already in flight in this session", id=id_)
            await json_reply(send, 200, reply_failed(id_, exc)[0])
            return
        stream = session.new_stream(id_, req.method)
        assert session.legacy is not None
        try:
            out = session.legacy.handle(req, stream.emit)
        except BaseException as exc:  # noqa: BLE001 - every failure gets its reply
            stream.finish(_unline(reply_failed(id_, exc)[0]))
        else:
            if type(out) is dict:
                stream.finish(_unline(reply_ok(id_, out)[0]))
            else:
                session.calls[id_] = stream
                task = stream.task = asyncio.get_running_loop().create_task(_run(stream, out))  # type: ignore[arg-type]
                task.add_done_callback(functools.partial(_settled, stream))
        if stream.finished and not stream.pending:  # answered at once, nothing sent before: JSON
            stream.final_sent = True
            await json_reply(send, 200, stream.final or b"")
            return
        pump = stream.pump = _Pump(receive)
        await self._carry(session, stream, pump, send, json_ok=True)

    async def notification(self, session: HTTPSession, note: Notification, headers: dict[bytes, bytes], send: Send) -> None:
        session.touch()
        problem = self._version_problem(session, headers)
        if problem is not None:
            await self._refuse_version(problem, send)
            return
        method = note.method
        if method == methods.CANCELLED:
            session.cancel(note.params)
        elif method == "notifications/initialized":
            assert session.legacy is not None
            session.legacy.initialized = True
        else:
            log.debug("notification %s received in session %s", method, session.id[:8])
        await empty_reply(send, 202)

    async def response(self, session: HTTPSession, msg: Any, headers: dict[bytes, bytes], send: Send) -> None:
        session.touch()
        problem = self._version_problem(session, headers)
        if problem is not None:
            await self._refuse_version(problem, send)
            return
        if session.answer(msg):
            await empty_reply(send, 202)
            return
        await json_reply(
            send, 400, http_error(f"Bad Request: no request with id {msg.id!r} from the server is waiting for an answer")
        )

    # -- GET, DELETE ------------------------------------------------------------------------

    async def get(self, session: HTTPSession, headers: dict[bytes, bytes], receive: Receive, send: Send) -> None:
        """The standalone stream, or the stream ``Last-Event-ID`` names (resumption)."""
        session.touch()
        problem = self._version_problem(session, headers)
        if problem is not None:
            await self._refuse_version(problem, send)
            return
        if not _accepts_sse(headers.get(b"accept")):
            await json_reply(send, 406, http_error("Not Acceptable: a GET must accept text/event-stream"))
            return
        stream, queued, prime = session.standalone, b"", True
        last = headers.get(LAST_EVENT_ID_HEADER)
        if last is not None:
            found = session.resume_point(last)
            if found is not None:
                (stream, queued), prime = found, False
                log.debug("session %s: stream %d resumed after %r", session.id[:8], stream.sid, last)
            else:
                log.debug("session %s: Last-Event-ID %r names no stream; the standalone stream opens", session.id[:8], last)
        stream.let_go()  # one connection per stream: the newer one wins
        pump = stream.pump = _Pump(receive, queued=queued, prime=prime)
        await self._carry(session, stream, pump, send, json_ok=False)

    async def delete(self, session: HTTPSession, headers: dict[bytes, bytes], send: Send) -> None:
        problem = self._version_problem(session, headers)
        if problem is not None:
            await self._refuse_version(problem, send)
            return
        session.close("the client deleted it")
        await empty_reply(send, 204)

    # -- carrying a stream on one response ---------------------------------------------------------

    async def _carry(self, session: HTTPSession, stream: _Stream, pump: _Pump, send: Send, *, json_ok: bool) -> None:
        """Write a stream on one HTTP response until it ends, the client leaves, or the stream lets go."""
        loop = asyncio.get_running_loop()
        keepalive = self.keepalive_interval
        try:
            while True:
                if pump.gone:
                    return  # the client left; the stream waits for it to resume
                ending = pump.ending
                if ending is not None:
                    if pump.lost and not pump.head_sent:
                        await json_reply(send, 404, http_error("Not Found: the session has ended"))
                        return
                    await _write(send, pump, ending, more=False)
                    return
                if pump.queued or stream.ready or not (pump.started or json_ok):
                    if not pump.started:
                        if json_ok and not stream.pending and stream.final is not None:
                            stream.final_sent = True  # answered before anything else: one JSON body
                            await json_reply(send, 200, stream.final)
                            return
                        pump.started = True
                        chunk = (stream.prime() if pump.prime else b"") + pump.queued + stream.take()
                        chunk = chunk or KEEPALIVE_COMMENT  # something to send the head with
                    else:
                        chunk = pump.queued + stream.take()
                    pump.queued = b""
                    if stream.finished and not stream.ready:  # the response is in this chunk: the end
                        await _write(send, pump, chunk, more=False)
                        return
                    await _write(send, pump, chunk, more=True)
                    continue
                if stream.finished:
                    pump.started = True
                    await _write(send, pump, b"", more=False)
                    return
                if pump.watch is None:
                    watch = pump.watch = loop.create_task(pump.receive())  # type: ignore[arg-type]
                    watch.add_done_callback(pump.received)
                waiter = pump.waiter = loop.create_future()
                timer = loop.call_later(keepalive, fire, waiter) if keepalive is not None else None
                try:
                    woken_by = await waiter
                finally:
                    pump.waiter = None
                    if timer is not None:
                        timer.cancel()
                if woken_by is KEEPALIVE and not pump.gone and pump.ending is None:
                    chunk = KEEPALIVE_COMMENT
                    if not pump.started:
                        pump.started = True
                        chunk = (stream.prime() if pump.prime else b"") + chunk
                    await _write(send, pump, chunk, more=True)
        finally:
            if stream.pump is pump:
                stream.pump = None
            watching = pump.watch
            if watching is not None and not watching.done():
                watching.cancel()
            session.touch()
            stream.forget_if_done()


async def _write(send: Send, pump: _Pump, chunk: bytes, *, more: bool) -> None:
    if not pump.head_sent:
        pump.head_sent = True
        await send(sse_start())
    await send({"type": "http.response.body", "body": chunk, "more_body": more})


async def _run(stream: _Stream, pending: Awaitable[Any]) -> tuple[bytes, int | None]:
    _CURRENT.set(stream)  # in this task's own context: the server's requests find their stream
    return await settle(stream.request_id, pending)


def _settled(stream: _Stream, task: asyncio.Task[tuple[bytes, int | None]]) -> None:
    session = stream.session
    if session.calls.get(stream.request_id) is stream:
        del session.calls[stream.request_id]
    if task.cancelled():
        stream.finish(None)
    else:
        stream.finish(_unline(task.result()[0]))
    stream.forget_if_done()


def _accepts_sse(value: bytes | None) -> bool:
    """Whether an ``Accept`` header admits ``text/event-stream`` (a GET needs it)."""
    if value is None:
        return False
    for item in value.lower().split(b","):
        media, _, params = item.partition(b";")
        if media.strip() in (b"text/event-stream", b"text/*", b"*/*") and not _q_is_zero(params):
            return True
    return False
