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
  with ``initialize``; so is the id of a session opened with a token for
  another principal (issuer, subject, client id: `_auth.principal`), on an
  endpoint with auth: a session is bound to whoever opened it;
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
  elicitation, roots, sent by its handler through the session's
  `ServerConnection`), then its response, then the end of the stream;
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
  did not give out (malformed, unknown, numbers of more than 20 digits) opens
  the standalone stream instead;
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

The server decides what each message means: every session holds a
`ServerConnection` (its `LegacySession`, its requests in flight, the
server's requests awaiting answers); each request's `Call` writes to the
request's stream (`_Stream`: open, closing, closed), which is carried by at
most one HTTP response at a time (`_Pump`, whose state is `_Carrying`: new,
streaming, released, lost, gone). What a session shares with a session kept
in Redis (`_shared_sessions`): its connection, answering ``initialize``,
settling a request, the event framing, is `_session_base.SessionBase`'s.

Memory: at most ``max_sessions`` sessions; each keeps the written events of
its streams for replay up to ``replay_buffer`` bytes (oldest dropped first),
and each of its streams holds at most ``replay_buffer`` bytes unsent while no
connection carries it. These limits bound what is really held: a message
is kept in an exact-size copy (orjson's own buffer is at least ~4 KiB) and
counts its length plus `ENTRY_COST` bytes (tests/transports/test_hardening_http.py
measures the process's RSS).
"""

from __future__ import annotations

import asyncio
import contextvars
import enum
import functools
import itertools
import logging
import secrets
import time
from collections import deque
from typing import Any

from ...jsonrpc import ErrorResponse, InternalError, Notification, Request, Response
from ...protocol import LEGACY_VERSIONS
from ...protocol.errors import HEADER_MISMATCH, HeaderMismatch
from ...server import Server
from ...server.transport import (
    DEFAULT_MAX_SESSION_SUBSCRIPTIONS,
    DEFAULT_MAX_SUBSCRIPTION_URI,
    Call,
    Reply,
    ServerBusy,
    Write,
    reply_failed,
)
from ._asgi import (
    KEEPALIVE,
    KEEPALIVE_COMMENT,
    Receive,
    Send,
    empty_reply,
    fire,
    http_error,
    json_reply,
)
from ._auth import principal
from ._coalesce import redundant
from ._security import _q_is_zero
from ._session_base import SessionBase, event, event_id, priming, unline, write_sse

__all__ = [
    "Sessions",
    "session_store",
    "HTTPSession",
    "SESSION_HEADER",
    "LAST_EVENT_ID_HEADER",
    "DEFAULT_SESSION_IDLE_TIMEOUT",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_REPLAY_BUFFER",
    "DEFAULT_RETRY_MS",
    "DEFAULT_MAX_SESSIONS_PER_CLIENT",
    "DEFAULT_PRESSURE_IDLE_TIMEOUT",
    "PRESSURE",
    "LEGACY_HEADER_VALUES",
]

log = logging.getLogger("wiremcp.transport")

#: Seconds a session may sit unused (nothing in flight, no stream open) before it ends.
DEFAULT_SESSION_IDLE_TIMEOUT = 30 * 60.0
#: Live legacy sessions one app holds; ``initialize`` past it gets 503. Bounds memory
#: (with ``replay_buffer``) against clients that never DELETE their sessions.
DEFAULT_MAX_SESSIONS = 10_000
#: Live legacy sessions one client address may hold; one more gets 429. Keeps one client
#: from taking every session (``None``: no per-client cap, e.g. behind a proxy that hides addresses).
DEFAULT_MAX_SESSIONS_PER_CLIENT = 1000
#: The share of ``max_sessions`` past which the server is under pressure: idle sessions then
#: end after ``pressure_idle_timeout`` instead of ``idle_timeout``.
PRESSURE = 0.9
#: Seconds a session may sit unused while the server is under pressure.
DEFAULT_PRESSURE_IDLE_TIMEOUT = 60.0
#: Under pressure, ``initialize`` looks for expired sessions at most this often (seconds).
_PRESSURE_SWEEP_EVERY = 0.25
#: Bytes of written events one session keeps for replay after a reconnection.
DEFAULT_REPLAY_BUFFER = 256 * 1024
#: Milliseconds a client waits before reconnecting after the server closed a stream's
#: connection (the SSE ``retry`` field), when the handler names none.
DEFAULT_RETRY_MS = 1000

SESSION_HEADER = b"mcp-session-id"
LAST_EVENT_ID_HEADER = b"last-event-id"
_VERSION_HEADER = b"mcp-protocol-version"
#: ``MCP-Protocol-Version`` values of the legacy era, as they arrive in headers.
LEGACY_HEADER_VALUES = frozenset(v.encode("ascii") for v in LEGACY_VERSIONS)

#: The stream of the legacy request whose handler is running (set in its task).
_CURRENT: contextvars.ContextVar[_Stream | None] = contextvars.ContextVar("wiremcp_http_stream", default=None)


#: Messages shorter than this are copied into an exact-size ``bytes`` before they are kept:
#: orjson hands each encoded message back in a buffer of at least about 4 KiB, whatever
#: its length, so a kept 60-byte notification would otherwise hold 4 KiB. Longer ones
#: sit in buffers within a page or so of their length (measured: 10 KB in 14 KB, 70 KB in 78 KB).
_COPY_BELOW = 64 * 1024
#: What one kept message costs beyond its length: the ``bytes`` header (33), its list slot,
#: its replay entry (a 3-tuple and an int) and the allocator's rounding. Limits count this
#: too, so that a flood of tiny messages is bounded by what it really holds.
ENTRY_COST = 128


def _kept(data: bytes) -> bytes:
    """``data`` as it may be kept: a short message in an exact-size copy (see `_COPY_BELOW`)."""
    return bytes(memoryview(data)) if len(data) < _COPY_BELOW else data


class _Carrying(enum.Enum):
    """Where one HTTP response carrying a stream (a `_Pump`) is."""

    NEW = "new"  #: nothing committed: a request's reply may still be one JSON body
    STREAMING = "streaming"  #: committed to SSE (the priming event is given out)
    RELEASED = "released"  #: the stream let go of it: its ``ending``, then the end of the response
    LOST = "lost"  #: ... because the session ended (404 when nothing was sent yet)
    GONE = "gone"  #: the client disconnected: nothing more is written


class _Pump:
    """One HTTP response carrying a stream: a POST's reply, or a GET."""

    __slots__ = ("receive", "queued", "prime", "waiter", "watch", "state", "head_sent", "ending")

    def __init__(self, receive: Receive, *, queued: bytes = b"", prime: bool = True) -> None:
        self.receive = receive
        self.queued = queued  # events to write first (a replay), already framed
        self.prime = prime  # open with a priming event (not when resuming)
        self.waiter: asyncio.Future[Any] | None = None
        self.watch: asyncio.Task[Any] | None = None
        self.state = _Carrying.NEW
        self.head_sent = False  # the response's head is written (I/O record, not a state)
        self.ending = b""  # the last bytes, once RELEASED

    def wake(self, _: Any = None) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def received(self, watch: asyncio.Task[Any]) -> None:
        """What the client sent after its body (a GET: an empty one first): only a disconnect matters."""
        if watch.cancelled():
            return
        if watch.exception() is None and watch.result().get("type") != "http.disconnect":
            again = self.watch = asyncio.get_running_loop().create_task(_next(self.receive))
            again.add_done_callback(self.received)
            return
        self.state = _Carrying.GONE
        self.wake()


async def _next(receive: Receive) -> Any:
    return await receive()


class _StreamState(enum.Enum):
    """Where one SSE stream of a session is."""

    OPEN = "open"  #: messages may still be added
    CLOSING = "closing"  #: nothing more is added; what is pending (the response last) is still to be written
    CLOSED = "closed"  #: everything is written, or dropped


class _Stream:
    """One SSE stream of a session: a request's reply stream (number >= 1) or the standalone stream (0).

    A stream is the ``write`` of its request's `Call` (and of the server's
    requests made by that request's handler): calling it adds a message.
    """

    __slots__ = (
        "session",
        "sid",
        "request_id",
        "method",
        "call",
        "seq",
        "pending",
        "pending_bytes",
        "pump",
        "state",
        "final",
        "named",
        "retained",
    )

    def __init__(self, session: HTTPSession, sid: int, request_id: Any = None, method: str = "") -> None:
        self.session = session
        self.sid = sid
        self.request_id = request_id
        self.method = method
        self.call: Call | None = None  # the request in flight whose stream this is
        self.seq = 0  # the number of the last event written
        self.pending: list[bytes] = []  # messages not written yet
        self.pending_bytes = 0
        self.pump: _Pump | None = None  # the response carrying the stream now, if any
        self.state = _StreamState.OPEN
        self.final: bytes | None = None  # the response, once there is one
        self.named = False  # an event id of this stream was given out: it can be resumed
        self.retained = 0  # its events in the session's replay buffer

    # -- adding ----------------------------------------------------------------

    def __call__(self, data: bytes) -> None:
        """Add one encoded message (a notification, a request to the client)."""
        if self.state is not _StreamState.OPEN:
            log.debug("dropped a message for request %r: it is finished or cancelled", self.request_id)
            return
        if redundant(data, self.pending):  # a list change still unsent (_coalesce)
            return
        data = _kept(data)
        self.pending.append(data)
        self.pending_bytes += len(data) + ENTRY_COST
        sessions = self.session.sessions
        limit = sessions.max_stream_backlog if self.pump is not None else sessions.replay_buffer
        if self.pending_bytes > limit:
            self._overflow(limit)
        self.wake()

    push = __call__

    @property
    def finished(self) -> bool:
        """Nothing more will be added."""
        return self.state is not _StreamState.OPEN

    def finish(self, final: bytes | None) -> None:
        """No more messages: ``final`` is the response (None: cancelled, nothing more is sent)."""
        if self.state is not _StreamState.OPEN:
            return
        self.final = final
        self.state = _StreamState.CLOSING if (final is not None or self.pending) else _StreamState.CLOSED
        self.wake()

    def drop(self) -> None:
        """Cancelled: what is still unsent is dropped, and nothing more is sent."""
        self.pending = []
        self.pending_bytes = 0
        self.finish(None)

    def _overflow(self, limit: int) -> None:
        call = self.call
        if call is not None and call.task is not None and not call.task.done():
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
            self.finish(unline(reply_failed(self.request_id, stopped)[0]))
            call.cancel()
            return
        # The standalone stream (session notifications): drop the oldest, keep the newest.
        pending = self.pending
        dropped = 0
        while self.pending_bytes > limit and len(pending) - dropped > 1:
            self.pending_bytes -= len(pending[dropped]) + ENTRY_COST
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
        return bool(self.pending) or self.state is _StreamState.CLOSING

    def prime(self) -> bytes:
        """The priming event: an id to resume from, and empty data."""
        if not self.session.primes:
            return b""
        self.seq += 1
        self._name()
        return priming(self.sid, self.seq)

    def take(self) -> bytes:
        """Number, retain and frame what waits to be written (the response last)."""
        parts = []
        if self.pending:
            for data in self.pending:
                parts.append(self._frame(data))
            self.pending = []
            self.pending_bytes = 0
        if self.state is _StreamState.CLOSING:
            if self.final is not None:
                parts.append(self._frame(self.final))
            self.state = _StreamState.CLOSED
        return b"".join(parts)

    def _frame(self, data: bytes) -> bytes:
        self.seq += 1
        self._name()
        self.session.retain(self, self.seq, data)
        return event(self.sid, self.seq, data)

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
        if pump.state is not _Carrying.GONE:
            pump.ending = ending
            pump.state = _Carrying.LOST if lost else _Carrying.RELEASED
        pump.wake()

    def close_connection(self, retry_ms: int) -> bool:
        """`Context.close_sse_stream`: what is ready, a ``retry`` field, the end of the response."""
        pump = self.pump
        if pump is None or pump.state is _Carrying.GONE or self.state is _StreamState.CLOSED:
            return False
        if not (self.named or self.session.primes):
            return False  # no event id to resume from would reach the client (a 2025-06-18 session)
        tail = pump.queued
        pump.queued = b""
        if pump.state is _Carrying.NEW:
            tail = self.prime() + tail
        self.let_go(tail + self.take() + b"retry: %d\n\n" % retry_ms)
        log.debug("closed the connection of stream %d (request %r); the client may resume it", self.sid, self.request_id)
        return True

    def forget_if_done(self) -> None:
        """Drop a finished stream from the resumable ones once nothing of it is left to send again."""
        if self.sid and self.state is _StreamState.CLOSED and self.retained == 0 and self.pump is None:
            self.session.streams.pop(self.sid, None)


def _stream_of(call: Call) -> _Stream:
    """The stream a session's `Call` writes to (its ``write``)."""
    stream = call.write
    assert isinstance(stream, _Stream)
    return stream


class HTTPSession(SessionBase):
    """One legacy session: its `ServerConnection` (the `LegacySession`, calls, the server's requests) and its streams."""

    __slots__ = ("standalone", "streams", "replay", "replay_bytes", "client", "_sids")

    def __init__(self, sessions: Sessions, id: str, client: str = "") -> None:
        self.client = client  # the address it was opened from (the per-client cap)
        self.standalone = _Stream(self, 0)
        # session notifications go on the standalone stream
        super().__init__(sessions, id, principal(), self.standalone)
        self.streams: dict[int, _Stream] = {}  # resumable streams, by number
        self.replay: deque[tuple[_Stream, int, bytes]] = deque()
        self.replay_bytes = 0
        self._sids = itertools.count(1)

    @property
    def busy(self) -> bool:
        """Something in flight or a stream connected: not idle, whatever the clock says."""
        if self.conn.calls or self.standalone.pump is not None:
            return True
        return any(s.pump is not None for s in self.streams.values())

    def new_stream(self, request_id: Any, method: str) -> _Stream:
        return _Stream(self, next(self._sids), request_id, method)

    # -- replay ------------------------------------------------------------------

    def retain(self, stream: _Stream, n: int, data: bytes) -> None:
        replay = self.replay
        replay.append((stream, n, data))
        self.replay_bytes += len(data) + ENTRY_COST
        stream.retained += 1
        limit = self.sessions.replay_buffer
        while self.replay_bytes > limit and replay:
            old, _, old_data = replay.popleft()
            self.replay_bytes -= len(old_data) + ENTRY_COST
            old.retained -= 1
            if old.retained == 0:
                old.forget_if_done()

    def resume_point(self, last_event_id: bytes) -> tuple[_Stream, bytes] | None:
        """The stream a ``Last-Event-ID`` names, and its events after it still retained."""
        named = event_id(last_event_id)
        if named is None:
            return None  # not an id we gave out
        sid, n = named
        stream = self.standalone if sid == b"0" else self.streams.get(int(sid))
        if stream is None:
            return None
        after = int(n)
        again = b"".join(event(stream.sid, m, d) for s, m, d in self.replay if s is stream and m > after)
        return stream, again

    # -- the transport side of the ServerConnection ------------------------------------

    def route(self) -> Write:
        """Where a request to the client goes now: the asking request's stream, else the standalone stream.

        The standalone stream also takes it when the asking request's stream
        has no connection and the standalone stream has one; the request's
        ``notifications/cancelled`` follows it, or goes to the standalone
        stream once the request's stream is finished.
        """
        standalone = self.standalone
        stream = _CURRENT.get()
        if stream is None or stream.session is not self or stream.finished or (stream.pump is None and standalone.pump is not None):
            return standalone
        chosen = stream

        def write(data: bytes) -> None:
            (standalone if chosen.finished else chosen).push(data)

        return write

    def close_stream(self, request_id: Any, retry_ms: int | None) -> bool:
        call = self.conn.calls.get(request_id)
        if call is None:
            return False
        return _stream_of(call).close_connection(self.sessions.retry_ms if retry_ms is None else retry_ms)

    # -- the end -------------------------------------------------------------------------

    def close(self, why: str) -> None:
        if self.closed:
            return
        log.info("session %s ended: %s", self.id[:8], why)
        self.sessions.forget(self)
        for call in self.conn.cancel_calls():
            if call.task is not None:
                call.task.cancel()  # now, not on the next step: the app may be shutting down
            stream = _stream_of(call)
            stream.drop()
            stream.let_go(lost=True)
        self.conn.calls.clear()
        self.conn.close("the session has ended")  # the server's requests fail; the LegacySession closes
        self.standalone.let_go(lost=True)
        for stream in list(self.streams.values()):
            stream.let_go(lost=True)
        self.streams.clear()
        self.replay.clear()
        self.replay_bytes = 0


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
        max_sessions_per_client: int | None = DEFAULT_MAX_SESSIONS_PER_CLIENT,
        pressure_idle_timeout: float = DEFAULT_PRESSURE_IDLE_TIMEOUT,
        max_session_subscriptions: int = DEFAULT_MAX_SESSION_SUBSCRIPTIONS,
        max_subscription_uri: int = DEFAULT_MAX_SUBSCRIPTION_URI,
    ) -> None:
        if idle_timeout <= 0:
            raise ValueError("session_idle_timeout must be positive")
        if pressure_idle_timeout <= 0:
            raise ValueError("pressure_idle_timeout must be positive")
        if max_sessions_per_client is not None and max_sessions_per_client < 1:
            raise ValueError("max_sessions_per_client must be at least 1 (or None for no per-client cap)")
        if max_session_subscriptions < 0 or max_subscription_uri < 0:
            raise ValueError("max_session_subscriptions and max_subscription_uri must not be negative")
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
        self.max_sessions_per_client = max_sessions_per_client
        self.pressure_idle_timeout = pressure_idle_timeout
        self.max_session_subscriptions = max_session_subscriptions
        self.max_subscription_uri = max_subscription_uri
        self.by_key: dict[bytes, HTTPSession] = {}
        self.per_client: dict[str, int] = {}  # live sessions by client address
        self._swept = 0.0  # when the idle sweep last ran (monotonic)
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._unsubscribe: Any = None

    def __len__(self) -> int:
        return len(self.by_key)

    # -- the set of sessions ------------------------------------------------------------

    def lookup(self, raw_id: bytes) -> HTTPSession | None:
        """The session with this id, if it belongs to the principal of this request's token."""
        session = self.by_key.get(raw_id.strip(b" \t"))
        if session is not None and session.owner != principal():
            log.warning("session %s: refused a request whose token is for another principal", session.id[:8])
            return None
        return session

    async def find(self, raw_id: bytes) -> HTTPSession | None:
        """`lookup`, as the app calls it (a shared store, `_shared_sessions`, reads Redis here)."""
        return self.lookup(raw_id)

    def forget(self, session: HTTPSession) -> None:
        if self.by_key.pop(session.key, None) is not None:
            left = self.per_client.get(session.client, 1) - 1
            if left > 0:
                self.per_client[session.client] = left
            else:
                self.per_client.pop(session.client, None)

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
        elif self._timer.when() > loop.time() + self._tick:  # pressure began: sweep at the shorter pace
            self._timer.cancel()
            self._timer = loop.call_later(self._tick, self._sweep)
        if self._unsubscribe is None:
            self._unsubscribe = self.server.bus.subscribe(self._on_change)

    @property
    def under_pressure(self) -> bool:
        """Whether more than `PRESSURE` of ``max_sessions`` are live: idle sessions then end sooner."""
        return len(self.by_key) >= self.max_sessions * PRESSURE

    @property
    def _idle_limit(self) -> float:
        if self.under_pressure:
            return min(self.idle_timeout, self.pressure_idle_timeout)
        return self.idle_timeout

    @property
    def _tick(self) -> float:
        # A session ends between 1 and 1.25 idle timeouts after its last message (at most a minute late).
        return min(self._idle_limit / 4, 60.0)

    def _sweep(self) -> None:
        if self._timer is not None:  # (run early, by initialize under pressure)
            self._timer.cancel()
        self._timer = None
        now = self._swept = time.monotonic()
        limit = self._idle_limit
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

    def _version_problem(self, session: SessionBase, headers: dict[bytes, bytes]) -> HeaderMismatch | None:
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

    async def _wrong_version(
        self, session: SessionBase, headers: dict[bytes, bytes], send: Send, id: Any = None, *, with_id: bool = False
    ) -> bool:
        """Whether ``MCP-Protocol-Version`` is not the session's version; if so, the message is refused (400)."""
        problem = self._version_problem(session, headers)
        if problem is None:
            return False
        await self._refuse_version(problem, send, id, with_id=with_id)
        return True

    async def _modern_initialize(self, req: Request, headers: dict[bytes, bytes], send: Send) -> bool:
        """Whether ``initialize`` came with a modern ``MCP-Protocol-Version``; if so, it is refused (400)."""
        raw = headers.get(_VERSION_HEADER)
        if raw is None:
            return False
        sent = raw.strip(b" \t").decode("latin-1")
        if sent not in self.server.supported_versions:
            return False
        problem = HeaderMismatch(
            f"Header mismatch: MCP-Protocol-Version header value {sent!r} is a modern version, but "
            "initialize without params._meta opens a legacy (2025-11-25) session"
        )
        await self._refuse_version(problem, send, req.id, with_id=True)
        return True

    async def initialize(self, req: Request, headers: dict[bytes, bytes], send: Send, client: str = "") -> None:
        """``initialize`` without a session: a new session, its id in ``Mcp-Session-Id``."""
        if await self._modern_initialize(req, headers, send):
            return
        held = self.per_client.get(client, 0)
        if self.max_sessions_per_client is not None and held >= self.max_sessions_per_client:
            log.warning("refused initialize from %s: it holds %d legacy sessions, the limit", client or "?", held)
            busy = ServerBusy(
                f"Server busy: this client holds {held} sessions, the most one client may; end one (DELETE) "
                "or try again later"
            )
            await json_reply(send, 429, reply_failed(req.id, busy)[0])
            return
        if self.under_pressure and time.monotonic() - self._swept >= _PRESSURE_SWEEP_EVERY:
            self._sweep()  # idle sessions past the shorter timeout make room now, not at the next tick
        if len(self.by_key) >= self.max_sessions:
            log.warning("refused initialize: %d legacy sessions are open, the limit", len(self.by_key))
            busy = ServerBusy(
                f"Server busy: {len(self.by_key)} sessions are open, the most this server keeps; try again later "
                "(MCP 2026-07-28 clients need no session)"
            )
            await json_reply(send, 503, reply_failed(req.id, busy)[0])
            return
        session = HTTPSession(self, secrets.token_urlsafe(32), client)
        data, status = session.initialize(req)
        if status != 200:
            await json_reply(send, status, data)
            return
        self.by_key[session.key] = session
        self.per_client[client] = held + 1
        self._watch()
        log.info("session %s opened (protocol %s)", session.id[:8], session.version)
        await json_reply(send, 200, data, ((SESSION_HEADER, session.key),))

    async def request(
        self, session: HTTPSession, req: Request, headers: dict[bytes, bytes], receive: Receive, send: Send
    ) -> None:
        session.touch()
        if await self._wrong_version(session, headers, send, req.id, with_id=True):
            return
        stream = session.new_stream(req.id, req.method)
        out = session.conn.request(req, stream)
        if type(out) is tuple:
            stream.finish(unline(out[0]))
        else:
            assert isinstance(out, Call)
            stream.call = out
            task = out.task = asyncio.get_running_loop().create_task(_run(stream, out))
            task.add_done_callback(functools.partial(_settled, stream, out))
        if stream.state is _StreamState.CLOSING and not stream.pending:  # answered at once, nothing sent before: JSON
            stream.state = _StreamState.CLOSED
            await json_reply(send, 200, stream.final or b"")
            return
        pump = stream.pump = _Pump(receive)
        await self._carry(session, stream, pump, send, json_ok=True)

    async def notification(self, session: HTTPSession, note: Notification, headers: dict[bytes, bytes], send: Send) -> None:
        session.touch()
        if await self._wrong_version(session, headers, send):
            return
        cancelled = session.conn.notification(note)
        if cancelled is not None:  # nothing more is sent for it, not even what is already queued
            _stream_of(cancelled).drop()
        await empty_reply(send, 202)

    async def response(self, session: HTTPSession, msg: Response | ErrorResponse, headers: dict[bytes, bytes], send: Send) -> None:
        session.touch()
        if await self._wrong_version(session, headers, send):
            return
        if session.conn.response(msg):
            await empty_reply(send, 202)
            return
        await self._unawaited(session, msg, send)

    async def _unawaited(self, session: SessionBase, msg: Response | ErrorResponse, send: Send) -> None:
        """A response no request of the server waits for: 400."""
        log.warning("session %s: a response for id %r, which no request of the server waits for", session.id[:8], msg.id)
        await json_reply(
            send, 400, http_error(f"Bad Request: no request with id {msg.id!r} from the server is waiting for an answer")
        )

    # -- GET, DELETE ------------------------------------------------------------------------

    async def get(self, session: HTTPSession, headers: dict[bytes, bytes], receive: Receive, send: Send) -> None:
        """The standalone stream, or the stream ``Last-Event-ID`` names (resumption)."""
        session.touch()
        if await self._refused_get(session, headers, send):
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

    async def _refused_get(self, session: SessionBase, headers: dict[bytes, bytes], send: Send) -> bool:
        """Whether a GET is refused: a wrong ``MCP-Protocol-Version`` (400), or no SSE in ``Accept`` (406)."""
        if await self._wrong_version(session, headers, send):
            return True
        if not _accepts_sse(headers.get(b"accept")):
            await json_reply(send, 406, http_error("Not Acceptable: a GET must accept text/event-stream"))
            return True
        return False

    async def delete(self, session: HTTPSession, headers: dict[bytes, bytes], send: Send) -> None:
        if await self._wrong_version(session, headers, send):
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
                state = pump.state
                if state is _Carrying.GONE:
                    return  # the client left; the stream waits for it to resume
                if state is _Carrying.LOST and not pump.head_sent:
                    await json_reply(send, 404, http_error("Not Found: the session has ended"))
                    return
                if state is _Carrying.RELEASED or state is _Carrying.LOST:
                    await _write(send, pump, pump.ending, more=False)
                    return
                if pump.queued or stream.ready or (state is _Carrying.NEW and not json_ok):
                    if state is _Carrying.NEW:
                        if json_ok and not stream.pending and stream.state is _StreamState.CLOSING and stream.final is not None:
                            stream.state = _StreamState.CLOSED  # answered before anything else: one JSON body
                            await json_reply(send, 200, stream.final)
                            return
                        pump.state = _Carrying.STREAMING
                        chunk = (stream.prime() if pump.prime else b"") + pump.queued + stream.take()
                        chunk = chunk or KEEPALIVE_COMMENT  # something to send the head with
                    else:
                        chunk = pump.queued + stream.take()
                    pump.queued = b""
                    if stream.state is _StreamState.CLOSED:  # the response is in this chunk: the end
                        await _write(send, pump, chunk, more=False)
                        return
                    await _write(send, pump, chunk, more=True)
                    continue
                if stream.state is not _StreamState.OPEN:  # finished, nothing left to write
                    await _write(send, pump, b"", more=False)
                    return
                if pump.watch is None:
                    watch = pump.watch = loop.create_task(_next(pump.receive))
                    watch.add_done_callback(pump.received)
                waiter = pump.waiter = loop.create_future()
                timer = loop.call_later(keepalive, fire, waiter) if keepalive is not None else None
                try:
                    woken_by = await waiter
                finally:
                    pump.waiter = None
                    if timer is not None:
                        timer.cancel()
                if woken_by is KEEPALIVE and (pump.state is _Carrying.NEW or pump.state is _Carrying.STREAMING):
                    chunk = KEEPALIVE_COMMENT
                    if pump.state is _Carrying.NEW:
                        pump.state = _Carrying.STREAMING
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


def session_store(server: Server, **options: Any) -> Sessions:
    """The legacy sessions of an app: in this process, or shared by every worker when the server's backend is.

    A shared backend (``WIREMCP_REDIS_URL``; `wiremcp.backends`) gets
    `_shared_sessions.SharedSessions`, with the same methods and wire rules.
    """
    if server.backend.shared:
        from ._shared_sessions import SharedSessions

        return SharedSessions(server, **options)
    return Sessions(server, **options)


async def _write(send: Send, pump: _Pump, chunk: bytes, *, more: bool) -> None:
    head = not pump.head_sent
    pump.head_sent = True
    await write_sse(send, chunk, more=more, head=head)


async def _run(stream: _Stream, call: Call) -> Reply | None:
    _CURRENT.set(stream)  # in this task's own context: the server's requests find their stream
    return await call.finish()


def _settled(stream: _Stream, call: Call, task: asyncio.Task[Reply | None]) -> None:
    final = stream.session.settle(call, None if task.cancelled() else task.result())
    # The stream and its call refer to each other (``stream.call``, ``call.write``), and the
    # task's context holds the stream (`_CURRENT`): a cycle through the task's result (the
    # reply, up to megabytes) that only the cyclic collector would free, long after the fact.
    stream.call = None
    stream.finish(final)
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
