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
  no error code to a status), except a refusal of the caller's share of a cap
  (``RateLimit``...) answered alone: 429 with ``Retry-After``, as in 2026-07-28
  (`_session_base.refusal_status`); a request id already in flight is -32600;
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
request's stream (`_Stream`, a stream of the sans-I/O engine
`_stream_engine`: numbering, replay, resumption, routing), which is carried
by at most one HTTP response at a time (`_Pump`, whose state is `_Carrying`:
new, streaming, released, lost, gone), written by the one carrier loop
(`_carrier.carry`, which keeps the wire rules above for both stores). This
is the memory adapter of the `_session_store.SessionStore` port; the Redis
adapter is `_shared_sessions`. What a session shares with a session kept in
Redis: its connection, answering ``initialize``, settling a request, the
event framing, is `_session_base.SessionBase`'s; the options and header
rules are `_session_rules`'s.

Memory: at most ``max_sessions`` sessions; each keeps the written events of
its streams for replay up to ``replay_buffer`` bytes (oldest dropped first),
and each of its streams holds at most ``replay_buffer`` bytes unsent while no
connection carries it. These limits bound the memory really used: a message
is kept in an exact-size copy (orjson's own buffer is at least ~4 KiB) and
counts its length plus `ENTRY_COST` bytes (tests/transports/test_hardening_http.py
measures the process's RSS).
"""

from __future__ import annotations

import asyncio
import contextvars
import enum
import functools
import logging
import secrets
import time
from typing import Any

from ...jsonrpc import ErrorResponse, InternalError, Notification, Request, Response
from ...server import Server
from ...server.transport import Call, Reply, ServerBusy, Write, reply_failed
from ._asgi import Receive, Send, empty_reply, json_reply
from ._carrier import DISCONNECT, Signal, Waiter, carry
from ._auth import principal
from ._session_base import SessionBase, refusal_status, unline
from ._session_rules import LAST_EVENT_ID_HEADER, SESSION_HEADER, SessionOptions, SessionRules
from ._stream_engine import SessionStreams, Stream, StreamState

__all__ = ["Sessions", "HTTPSession", "PRESSURE"]

log = logging.getLogger("wiremcp.transport")

#: The share of ``max_sessions`` past which the server is under pressure: idle sessions then
#: end after ``pressure_idle_timeout`` instead of ``idle_timeout``.
PRESSURE = 0.9
#: Under pressure, ``initialize`` looks for expired sessions at most this often (seconds).
_PRESSURE_SWEEP_EVERY = 0.25

#: The stream of the legacy request whose handler is running (set in its task).
_CURRENT: contextvars.ContextVar[_Stream | None] = contextvars.ContextVar("wiremcp_http_stream", default=None)


class _Carrying(enum.Enum):
    """Where one HTTP response carrying a stream (a `_Pump`) is."""

    NEW = "new"  #: nothing committed: a request's reply may still be one JSON body
    STREAMING = "streaming"  #: committed to SSE (the priming event is given out)
    RELEASED = "released"  #: the stream released it: its ``ending``, then the end of the response
    LOST = "lost"  #: ... because the session ended (404 when nothing was sent yet)
    GONE = "gone"  #: the client disconnected: nothing more is written


class _Pump(Waiter):
    """One HTTP response carrying a stream (a POST's reply, or a GET): the stream as `_carrier.carry` sees it."""

    __slots__ = ("receive", "stream", "session", "queued", "opens_primed", "state", "last_bytes")

    def __init__(self, receive: Receive, stream: _Stream, *, queued: bytes = b"", prime: bool = True) -> None:
        self.receive = receive
        self.stream = stream
        self.queued = queued  # events to write first (a replay), already framed
        self.opens_primed = prime  # open with a priming event (not when resuming)
        self.sleeper: asyncio.Task[Any] | None = None  # the response's task, while it waits in receive()
        self.woken = False  # `wake` interrupted that wait (a cancel the waiting side takes back)
        self.quiet = False  # a keep-alive interval passed in silence
        self.state = _Carrying.NEW
        self.last_bytes = b""  # the last bytes, once RELEASED

    # -- the `_carrier.Feed` ----------------------------------------------------------------

    async def open(self) -> None:
        return None

    def poll(self) -> Signal | None:
        state = self.state
        if state is _Carrying.GONE:
            return Signal.GONE
        if state is _Carrying.LOST:
            return Signal.LOST
        if state is _Carrying.RELEASED:
            return Signal.RELEASED
        stream = self.stream
        if self.queued or stream.ready:
            return Signal.READY
        if stream.state is not StreamState.OPEN:
            return Signal.ENDED
        return None

    async def wait(self, keepalive: float | None) -> Signal | None:
        """Wait in the request's own ``receive()`` (the disconnect: no second task watches for it) until `wake`."""
        me = asyncio.current_task()
        assert me is not None
        timer = asyncio.get_running_loop().call_later(keepalive, self.keepalive) if keepalive is not None else None
        self.sleeper = me
        self.woken = self.quiet = False
        try:
            message: Any = await self.receive()
        except asyncio.CancelledError:
            if not self.woken or me.uncancel() > 0:
                raise  # cancelled by someone else too (the ASGI server): not ours to take back
            message = None
        except Exception:  # noqa: BLE001 - the ASGI server could not read from the client: it is gone
            message = DISCONNECT
        finally:
            self.sleeper = None
            if timer is not None:
                timer.cancel()
        if message is not None and message.get("type") == "http.disconnect":
            self.state = _Carrying.GONE
            return None
        # Woken, or what the client sent after its body (a GET: an empty one first): look again.
        if self.quiet and (self.state is _Carrying.NEW or self.state is _Carrying.STREAMING):
            return Signal.QUIET
        return None

    def alone(self) -> bytes | None:
        stream = self.stream
        if not stream.answered_alone:
            return None
        stream.state = StreamState.CLOSED
        return stream.final

    def prime(self) -> bytes:
        self.state = _Carrying.STREAMING
        return self.stream.prime() if self.opens_primed else b""

    def take(self) -> tuple[bytes, bool]:
        stream = self.stream
        chunk = self.queued + stream.take()
        self.queued = b""
        return chunk, stream.state is StreamState.CLOSED

    def ending(self) -> bytes:
        return self.last_bytes

    async def close(self) -> None:
        stream = self.stream
        if stream.carrier is self:
            stream.carrier = None
        stream.session.touch()
        stream.forget_if_done()


class _Stream(Stream):
    """A stream of the engine (`_stream_engine.Stream`) with what runs it here: its request's `Call`, its `_Pump`.

    A stream is the ``write`` of its request's `Call` (and of the server's
    requests made by that request's handler): calling it adds a message.
    """

    __slots__ = ("session", "call", "status")

    carrier: _Pump | None

    def __init__(self, session: HTTPSession, streams: SessionStreams, sid: int, request_id: Any = None, method: str = "") -> None:
        super().__init__(streams, sid, request_id, method)
        self.session = session
        self.call: Call | None = None  # the request in flight whose stream this is
        self.status = 200  # of its reply as one JSON body (`refusal_status`)

    async def answer(self, send: Send, body: bytes) -> None:
        """Write the request's reply as the one JSON body of its POST (`_carrier.carry`'s ``answer``)."""
        await json_reply(send, self.status, body)

    def __call__(self, data: bytes) -> None:
        """Add one encoded message (a notification, a request to the client)."""
        if self.state is not StreamState.OPEN:
            log.debug("dropped a message for request %r: it is finished or cancelled", self.request_id)
            return
        options = self.session.sessions.options
        limit = options.max_stream_backlog if self.carrier is not None else options.replay_buffer
        if self.add(data, limit):
            self._overflow(limit)
        self.wake()

    push = __call__

    def end(self, final: bytes | None) -> None:
        """No more messages: ``final`` is the response (None: cancelled, nothing more is sent)."""
        if self.finish(final):
            self.wake()

    def cancel(self) -> None:
        """Cancelled: what is still unsent is dropped, and nothing more is sent."""
        self.pending = []
        self.pending_bytes = 0
        self.end(None)

    def _overflow(self, limit: int) -> None:
        call = self.call
        if call is not None and call.task is not None and not call.task.done():
            log.warning(
                "request %r (%s) stopped: %d bytes of messages for it were left unsent (limit %d)",
                self.request_id, self.method, self.pending_bytes, limit,
            )  # fmt: skip
            self.pending = []
            self.pending_bytes = 0
            stopped = InternalError(
                f"Internal error: the request was stopped: its client left more than {limit} bytes "
                "of messages unread"
            )
            self.end(unline(reply_failed(self.request_id, stopped)[0]))
            call.cancel()
            return
        # The standalone stream (session notifications): drop the oldest, keep the newest.
        dropped = self.trim(limit)
        log.warning(
            "session %s: dropped %d unsent messages of stream %d (limit %d bytes)",
            self.session.id[:8], dropped, self.sid, limit,
        )  # fmt: skip

    def wake(self) -> None:
        pump = self.carrier
        if pump is not None:
            pump.wake()

    def let_go(self, ending: bytes = b"", *, lost: bool = False) -> None:
        """End the response carrying the stream (if any) with ``ending``; the stream lives on."""
        pump = self.carrier
        if pump is None:
            return
        self.carrier = None
        if pump.state is not _Carrying.GONE:
            pump.last_bytes = ending
            pump.state = _Carrying.LOST if lost else _Carrying.RELEASED
        pump.wake()

    def close_connection(self, retry_ms: int) -> bool:
        """`Context.close_sse_stream`: what is ready, a ``retry`` field, the end of the response."""
        pump = self.carrier
        if pump is None or pump.state is _Carrying.GONE or self.state is StreamState.CLOSED:
            return False
        if not (self.named or self.streams.primes):
            return False  # no event id to resume from would reach the client (a 2025-06-18 session)
        tail = pump.queued
        pump.queued = b""
        if pump.state is _Carrying.NEW:
            tail = self.prime() + tail
        self.let_go(tail + self.take() + b"retry: %d\n\n" % retry_ms)
        log.debug("closed the connection of stream %d (request %r); the client may resume it", self.sid, self.request_id)
        return True


def _mine(stream: Stream) -> _Stream:
    """An engine stream of a session of this module (all of them are `_Stream`)."""
    assert isinstance(stream, _Stream)
    return stream


def _stream_of(call: Call) -> _Stream:
    """The stream a session's `Call` writes to (its ``write``)."""
    stream = call.write
    assert isinstance(stream, _Stream)
    return stream


class HTTPSession(SessionBase):
    """One legacy session: its `ServerConnection` (the `LegacySession`, calls, the server's requests) and its streams."""

    __slots__ = ("standalone", "streams", "client")

    sessions: Sessions

    def __init__(self, sessions: Sessions, id: str, client: str = "") -> None:
        self.client = client  # the address it was opened from (the per-client cap)
        self.streams = SessionStreams(sessions.options.replay_buffer)
        self.standalone = self.streams.standalone = _Stream(self, self.streams, 0)
        # session notifications go on the standalone stream
        super().__init__(sessions, id, principal(), self.standalone)

    @property
    def busy(self) -> bool:
        """Something in flight or a stream connected: not idle, whatever the clock says."""
        if self.conn.calls or self.standalone.carrier is not None:
            return True
        return any(s.carrier is not None for s in self.streams.resumable.values())

    def new_stream(self, request_id: Any, method: str) -> _Stream:
        return _Stream(self, self.streams, self.streams.next_sid(), request_id, method)

    # -- the transport side of the ServerConnection ------------------------------------

    def route(self) -> Write:
        """Where a request to the client goes now (`SessionStreams.route`): the asking request's stream, else the standalone stream.

        The request's ``notifications/cancelled`` follows it, or goes to the
        standalone stream once the request's stream is finished.
        """
        streams = self.streams
        chosen = streams.route(_CURRENT.get())
        if chosen is streams.standalone:
            return self.standalone

        def write(data: bytes) -> None:
            _mine(streams.deliver(chosen)).push(data)

        return write

    def close_stream(self, request_id: Any, retry_ms: int | None) -> bool:
        call = self.conn.calls.get(request_id)
        if call is None:
            return False
        return _stream_of(call).close_connection(self.sessions.options.retry_ms if retry_ms is None else retry_ms)

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
            stream.cancel()
            stream.let_go(lost=True)
        self.conn.calls.clear()
        self.conn.close("the session has ended")  # the server's requests fail; the LegacySession closes
        self.standalone.let_go(lost=True)
        for resumable in list(self.streams.resumable.values()):
            _mine(resumable).let_go(lost=True)
        self.streams.clear()


class Sessions:
    """The legacy sessions of one `MCPApp` (see the module docs)."""

    def __init__(self, server: Server, options: SessionOptions) -> None:
        self.options = options
        self.rules = SessionRules(server, self.options)
        self.server = server
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

    async def find(self, raw_id: bytes, request_id: Any = None) -> HTTPSession | None:
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
        return len(self.by_key) >= self.options.max_sessions * PRESSURE

    @property
    def _idle_limit(self) -> float:
        if self.under_pressure:
            return min(self.options.idle_timeout, self.options.pressure_idle_timeout)
        return self.options.idle_timeout

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

    async def initialize(self, req: Request, headers: dict[bytes, bytes], send: Send, client: str = "") -> None:
        """``initialize`` without a session: a new session, its id in ``Mcp-Session-Id``."""
        if await self.rules.modern_initialize(req, headers, send):
            return
        count = self.per_client.get(client, 0)
        if self.options.max_sessions_per_client is not None and count >= self.options.max_sessions_per_client:
            log.warning("refused initialize from %s: it holds %d legacy sessions, the limit", client or "?", count)
            busy = ServerBusy(
                f"Server busy: this client holds {count} sessions, the most one client may; end one (DELETE) "
                "or try again later"
            )
            await json_reply(send, 429, reply_failed(req.id, busy)[0])
            return
        if self.under_pressure and time.monotonic() - self._swept >= _PRESSURE_SWEEP_EVERY:
            self._sweep()  # idle sessions past the shorter timeout make room now, not at the next tick
        if len(self.by_key) >= self.options.max_sessions:
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
        session.streams.primes = session.primes
        self.by_key[session.key] = session
        self.per_client[client] = count + 1
        self._watch()
        log.info("session %s opened (protocol %s)", session.id[:8], session.version)
        await json_reply(send, 200, data, ((SESSION_HEADER, session.key),))

    async def request(
        self, session: HTTPSession, req: Request, headers: dict[bytes, bytes], receive: Receive, send: Send
    ) -> None:
        session.touch()
        if await self.rules.wrong_version(session, headers, send, req.id, with_id=True):
            return
        stream = session.new_stream(req.id, req.method)
        out = session.conn.request(req, stream)
        if type(out) is tuple:
            stream.status = refusal_status(out)
            stream.end(unline(out[0]))
        else:
            assert isinstance(out, Call)
            stream.call = out
            task = out.task = asyncio.get_running_loop().create_task(_run(stream, out))
            task.add_done_callback(functools.partial(_settled, stream, out))
        if stream.state is StreamState.CLOSING and not stream.pending:  # answered at once, nothing sent before: JSON
            stream.state = StreamState.CLOSED
            await json_reply(send, stream.status, stream.final or b"")
            return
        stream.carrier = _Pump(receive, stream)
        await carry(stream.carrier, send, json_ok=True, keepalive=self.options.keepalive_interval, answer=stream.answer)

    async def notification(self, session: HTTPSession, note: Notification, headers: dict[bytes, bytes], send: Send) -> None:
        session.touch()
        if await self.rules.wrong_version(session, headers, send):
            return
        cancelled = session.conn.notification(note)
        if cancelled is not None:  # nothing more is sent for it, not even what is already queued
            _stream_of(cancelled).cancel()
        await empty_reply(send, 202)

    async def response(self, session: HTTPSession, msg: Response | ErrorResponse, headers: dict[bytes, bytes], send: Send) -> None:
        session.touch()
        if await self.rules.wrong_version(session, headers, send):
            return
        if session.conn.response(msg):
            await empty_reply(send, 202)
            return
        await self.rules.unawaited(session, msg, send)

    # -- GET, DELETE ------------------------------------------------------------------------

    async def get(self, session: HTTPSession, headers: dict[bytes, bytes], receive: Receive, send: Send) -> None:
        """The standalone stream, or the stream ``Last-Event-ID`` names (resumption)."""
        session.touch()
        if await self.rules.refused_get(session, headers, send):
            return
        stream, queued, prime = session.standalone, b"", True
        last = headers.get(LAST_EVENT_ID_HEADER)
        if last is not None:
            found = session.streams.resume_point(last)
            if found is not None:
                stream, queued, prime = _mine(found[0]), found[1], False
                log.debug("session %s: stream %d resumed after %r", session.id[:8], stream.sid, last)
            else:
                log.debug("session %s: Last-Event-ID %r names no stream; the standalone stream opens", session.id[:8], last)
        stream.let_go()  # one connection per stream: the newer one wins
        stream.carrier = _Pump(receive, stream, queued=queued, prime=prime)
        await carry(stream.carrier, send, json_ok=False, keepalive=self.options.keepalive_interval)

    async def delete(self, session: HTTPSession, headers: dict[bytes, bytes], send: Send) -> None:
        if await self.rules.wrong_version(session, headers, send):
            return
        session.close("the client deleted it")
        await empty_reply(send, 204)


async def _run(stream: _Stream, call: Call) -> Reply | None:
    _CURRENT.set(stream)  # in this task's own context: the server's requests find their stream
    return await call.finish()


def _settled(stream: _Stream, call: Call, task: asyncio.Task[Reply | None]) -> None:
    reply = None if task.cancelled() else task.result()
    stream.status = refusal_status(reply)
    final = stream.session.settle(call, reply)
    # The stream and its call refer to each other (``stream.call``, ``call.write``), and the
    # task's context holds the stream (`_CURRENT`): a cycle through the task's result (the
    # reply, up to megabytes) that only the cyclic collector would free, long after the fact.
    stream.call = None
    stream.end(final)
    stream.forget_if_done()
