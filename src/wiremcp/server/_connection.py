"""The server side of one connection, without I/O: what every transport needs from the server.

A transport hands each message's bytes to `ServerConnection.receive` (one
connection per stdio stream, one for an HTTP endpoint's modern requests, one
per legacy HTTP session, which takes decoded messages); the connection
decodes them once (`_intake`: the fused stage first, then the general
decoder), decides and answers, and hands back what to write. It keeps these
rules:

* **One entry point, one named outcome** (`receive`): a `Reply` to write
  (a fused call's, a synchronous handler's, or the error reply of a message
  that does not decode), a running `Call` to finish, a `PostedCall` (a
  fused threaded tool call, where the transport passed ``over``: it
  writes its own reply from the loop and hands itself to ``over``), a `Held` request the
  transport starts itself (``hold``: no free slot; a method in ``held``,
  which the transport caps; or every request, when the transport keeps the
  sessions: HTTP), a `Notified` for a notification acted on, the stray
  `Response` that answers nothing we sent, or None (a response matched, a
  malformed notification dropped). With ``defer`` (stdio before the event
  loop) only what is answered at once with nothing left running is
  answered, on a server whose pipeline is the engine's own (no middleware,
  no observers, not a forwarder): a fused call, a modern
  ``server/discover`` or ``tools/list`` (their handlers return the result
  itself: a host's first requests), the legacy handshake (``initialize``,
  which opens the session, and in the session ``ping`` and ``tools/list``),
  and a ``tools/call`` of a tool the fused stage could run (an inline
  synchronous function: it returns the result itself) that the fused stage
  declined or that comes before the fused stage is loaded (or, in a legacy
  session, that no fused stage takes: it has no ``_meta``). These go to
  `request`, as on the event loop: the same reply, byte for byte;
  ``notifications/initialized`` goes to `notification` (`Notified`).
  Anything else is `DEFERRED`, untouched. The connection, its legacy
  session with it, then serves the rest on the event loop (`rebind` points
  its ``write`` at the event loop's pipe). The fused stage (msgspec) is
  loaded by `warm`, which the stdio front calls once it has written the
  reply to a modern call answered without it: a host's first call does not
  wait for that import, later ones take the fused stage.

* **The era of each request** is decided in one place, `request_era`
  (2026-07-28 basic/versioning.mdx, "Backward Compatibility with
  Initialization-Based Versions"): a request whose ``params._meta`` carries
  ``io.modelcontextprotocol/protocolVersion`` is modern and served
  statelessly with `Server.handle`, whatever came before; a request without
  it is legacy (2025-11-25) when its connection holds a `LegacySession` or
  when it is ``initialize`` (which opens one); anything else is modern, and
  the modern checks say what it lacks. A connection whose ``legacy`` is off
  never opens a session.
* **Every request gets exactly one reply, or none once cancelled.**
  `request` answers at once (a `Reply`: the line and its error code) when the
  handler is synchronous or fails, or returns the running `Call` whose
  `Call.finish` the transport awaits in a task. A request id already in
  flight on the connection is refused with -32600. Exceptions become wire
  errors in `_reply` only.
* **Notifications from the peer**: ``notifications/cancelled`` cancels the
  request it names (unknown, finished or malformed targets are ignored,
  cancellation.mdx, Error Handling) and returns its `Call`, so that the
  transport drops what it still holds for it;
  ``notifications/initialized`` marks the legacy session initialized; others
  are logged. With observers (e.g. telemetry), each is acted on between
  their notification hooks (``server/_pipeline.py``).
* **Responses from the peer** answer the server's own requests
  (`OutgoingRequests`); `response` returns False for one that answers nothing
  we sent, and the transport refuses or logs it.
* **Requests to the peer** (elicitation, sampling, roots in a legacy session)
  go through `OutgoingRequests.request`, to where the transport's ``route``
  says (by default the connection's ``write``); session notifications (list
  changes, resource updates) go to ``write``.
* `close` ends the connection: the server's requests still waiting fail,
  the legacy session closes. Requests in flight belong to the transport,
  which finishes or cancels them (`cancel_calls`).

``write`` takes one encoded message: a newline-terminated line when ``line``
is true (stdio), a bare JSON text otherwise (HTTP frames it as an SSE event).
"""

from __future__ import annotations

import enum
import logging
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from ..jsonrpc import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_MESSAGE_SIZE,
    MCP,
    Decoder,
    ErrorResponse,
    InvalidNotification,
    InvalidRequest,
    JSONRPCError,
    LocalProtocolError,
    Notification,
    Request,
    Response,
    encode_notification,
)
from ..protocol import methods
from ..protocol.meta import PROTOCOL_VERSION
from ._call import Call, CallState, PostedCall, Write
from ._intake import FastPath, decode_message
from ._pipeline import observe_notification
from ._reply import Reply, reply_failed

if TYPE_CHECKING:
    from ._call import Handle
    from ._fused_call import FusedCall
    from ._legacy import LegacySession
    from ._outgoing import OutgoingRequests
    from ._server import Server

# Loaded on first use (bench/README.md, "Cold start": the modern path never needs them): the legacy
# session (`_legacy`, by `Server.open_session` when a 2025-11-25 client says initialize) and the
# server's requests to the peer (`_outgoing`, by `ServerConnection.outgoing`: a legacy session's
# elicitation, sampling or roots request, or a response from the peer).

__all__ = [
    "ServerConnection",
    "ConnectionState",
    "Era",
    "request_era",
    "carries_protocol_meta",
    "Held",
    "Notified",
    "DEFERRED",
]

log = logging.getLogger("wiremcp.server")

_RUNNING = CallState.RUNNING
_CANCELLED = CallState.CANCELLED


class Era(enum.Enum):
    """Which revision's rules serve a request."""

    MODERN = "2026-07-28"  #: stateless: every request carries its version in ``_meta``
    LEGACY = "2025-11-25"  #: in a session opened by ``initialize``


_LEGACY_ERA = Era.LEGACY
_MODERN_ERA = Era.MODERN


def carries_protocol_meta(params: Any) -> bool:
    """Whether request params carry the modern per-request protocol version in ``_meta``."""
    if type(params) is not dict:
        return False
    meta = params.get("_meta")
    return type(meta) is dict and PROTOCOL_VERSION in meta


def request_era(request: Request, in_session: bool, legacy: bool) -> Era:
    """The era of ``request`` on a connection that is (``in_session``) or is not bound to a legacy session.

    ``legacy``: whether the transport serves 2025-11-25 clients at all. The
    cheap tests come first: a connection without a session only looks at
    ``_meta`` for ``initialize``.
    """
    if (in_session or request.method == "initialize") and legacy and not carries_protocol_meta(request.params):
        return _LEGACY_ERA
    return _MODERN_ERA


class Held(NamedTuple):
    """A request `receive` decoded but did not start: the transport admits it, then starts it.

    ``era``: decided by `receive` when the transport keeps the sessions
    (HTTP: `ServerConnection.serve` starts a modern one); None on a
    connection that holds its own session, where `request` decides it when
    the request starts.
    """

    request: Request
    era: Era | None


class Notified(NamedTuple):
    """A notification `receive` acted on, and the `Call` it cancelled (or None)."""

    note: Notification
    cancelled: Call | None


class _Deferred(enum.Enum):
    DEFERRED = "deferred"


#: `receive(..., defer=True)`: the message is not answered at once; nothing was done with it.
DEFERRED = _Deferred.DEFERRED

#: The methods `receive` answers with ``defer`` besides a fused call: the engine's handlers of
#: these return the result dict itself (`_handlers_tools`), never an awaitable, and touch no state.
_AT_ONCE = frozenset((methods.DISCOVER, methods.TOOLS_LIST))
#: The same in a legacy session (`LegacySession` answers ``initialize`` and ``ping`` itself, at once).
_AT_ONCE_LEGACY = frozenset(("initialize", "ping", methods.TOOLS_LIST))
_TOOLS_CALL = methods.TOOLS_CALL
_INITIALIZED = "notifications/initialized"

class ConnectionState(enum.Enum):
    """Whether a `ServerConnection` still serves."""

    OPEN = "open"  #: messages are served
    CLOSED = "closed"  #: the peer is gone: the server's requests failed, the session closed


class ServerConnection:
    """One connection's server side: its legacy session, its requests in flight, its requests to the peer."""

    __slots__ = (
        "server",
        "write",
        "line",
        "legacy",
        "session_id",
        "session",
        "calls",
        "_outgoing",
        "_first_request_id",
        "state",
        "route",
        "close_stream",
        "held",
        "decoder",
        "fast",
        "_handle",
        "_observers",
        "_unfused",
        "_over",
        "_posted",
    )

    def __init__(
        self,
        server: Server,
        write: Write,
        *,
        line: bool = True,
        legacy: bool | None = None,
        session_id: str | None = None,
        route: Callable[[], Write] | None = None,
        close_stream: Callable[[Any, int | None], bool] | None = None,
        first_request_id: int = 1,
        decoder: Decoder | None = None,
        held: frozenset[str] = frozenset(),
        over: Callable[[Call], Any] | None = None,
    ) -> None:
        self.server = server
        pipeline = server.freeze()  # serving starts: the middleware and observers are fixed now (_pipeline)
        self._handle = pipeline.handle  # bound once: the modern path looks up nothing per request
        self._observers = pipeline.observers
        self.write = write  # messages not tied to a request: session notifications, by default requests to the peer
        self.line = line
        self.legacy: bool = server.legacy if legacy is None else legacy
        self.session_id = session_id
        self.session: LegacySession | None = None  # once a legacy client said initialize
        self.calls: dict[Any, Call] = {}  # asynchronous requests in flight, by id
        self._outgoing: OutgoingRequests | None = None  # made by `outgoing` when first needed
        self._first_request_id = first_request_id
        self.state = ConnectionState.OPEN
        self.route = route  # where a request to the peer goes now (HTTP: the asking request's stream)
        self.close_stream = close_stream  # `LegacySession.close_sse_stream`'s hook (HTTP resumable streams)
        #: The limits `receive` decodes under (the transport's).
        self.decoder = decoder if decoder is not None else Decoder(MCP, max_size=DEFAULT_MAX_MESSAGE_SIZE, max_depth=DEFAULT_MAX_DEPTH)
        #: Methods `receive` hands back `Held` rather than starting (the transport caps them itself).
        self.held = held
        #: The fused stage (`_intake`); None when no message can be a fused call on this server.
        fast = FastPath(server, self.decoder)
        self.fast: FastPath | None = fast if fast.enabled else None
        #: A call was answered with ``defer`` before the fused stage was loaded (`warm` loads it).
        self._unfused = False
        #: The transport's end of a call no task awaits (stdio's `LineServer`: its id and slot freed).
        #: With it, the fused stage runs a threaded tool's call as a `PostedCall` (`_begin`); without
        #: it (HTTP) such a call goes to the general stage.
        self._over = over
        self._posted = self._begin if over is not None else None

    @property
    def outgoing(self) -> OutgoingRequests:
        """The server's requests to the peer and their answers; made (and `_outgoing` loaded) on first use."""
        outgoing = self._outgoing
        if outgoing is None:
            from ._outgoing import OutgoingRequests

            outgoing = self._outgoing = OutgoingRequests(line=self.line, first_id=self._first_request_id)
        return outgoing

    # -- bytes in: the one entry point ---------------------------------------------

    def receive(
        self,
        data: bytes,
        hold: bool = False,
        defer: bool = False,
        in_session: bool | None = None,
        vet: Callable[[Any, FusedCall], bool] | None = None,
        headers: Any = None,
    ) -> Reply | Call | Held | Notified | Response | ErrorResponse | _Deferred | None:
        """Serve one message's bytes: the outcome the transport acts on (see the module docs).

        ``hold``: the transport has no free slot: a request comes back
        `Held`, and no fused call is answered (it would overtake the held
        ones). ``defer``: only what is answered at once is answered (see
        the module docs); anything else is `DEFERRED`. ``in_session``:
        the transport keeps the sessions (HTTP) and says whether the request
        names one; every request then comes back `Held`, with its era, and
        a message that does not decode (a malformed notification included)
        comes back as its error reply, from which HTTP takes the status.
        ``vet``: the transport's own test of a fused call before it runs,
        called as ``vet(headers, call)`` (HTTP: the header rules' verdict,
        `HeaderRules.check_call`, on the request's ``headers``); False
        leaves it to the general stage, where the transport's checks give the
        exact error.
        """
        fast = self.fast
        if fast is not None and not hold and not (defer and not fast.loaded):
            reply = fast.serve(data, self.calls, vet, headers, None if defer else self._posted)
            if reply is not None:
                return reply
        if defer:
            return self._at_once(data) if fast is not None and not hold else DEFERRED
        try:
            msg = decode_message(self.decoder, data)
        except JSONRPCError as exc:
            if in_session is not None:  # HTTP answers every POST: the error gives the response its status
                log.debug("refused a message: %s", exc.message)
            elif isinstance(exc, InvalidNotification):  # JSON-RPC 2.0 §4.1: never answered, whatever is wrong with it
                log.warning("ignored a malformed notification (%s): %s", exc.method or "no method", exc.message)
                return None
            else:
                log.warning("bad message: %s", exc.message)
            return reply_failed(getattr(exc, "id", None), exc)
        t = type(msg)
        if t is Request:
            if in_session is not None:
                return Held(msg, request_era(msg, in_session, self.legacy))  # type: ignore[arg-type]  # t is Request
            if hold or msg.method in self.held:  # type: ignore[union-attr]  # t is Request
                return Held(msg, None)  # type: ignore[arg-type]  # t is Request
            return self.request(msg)  # type: ignore[arg-type]  # t is Request
        if t is Notification:
            if in_session is not None:
                return Notified(msg, None)  # type: ignore[arg-type]  # the transport routes it
            return Notified(msg, self.notification(msg))  # type: ignore[arg-type]  # t is Notification
        if in_session is not None or not self.response(msg):  # type: ignore[arg-type]  # Response or ErrorResponse
            return msg  # type: ignore[return-value]  # a response that answers nothing we sent (or HTTP's to route)
        return None

    def _begin(self, id_: Any, data: bytes, fused: Any) -> PostedCall:
        """A fused call run in the worker pool (`FastPath.serve`), in flight: its `PostedCall`, its id taken."""
        call = PostedCall(id_, self.write, self.line, self._over, data, fused)  # type: ignore[arg-type]  # set with `_posted`
        self.calls[id_] = call
        return call

    def _at_once(self, data: bytes) -> Reply | Notified | _Deferred:
        """``receive`` with ``defer``, past the fused stage: the outcome of a message acted on at once, or `DEFERRED`.

        A request of `_AT_ONCE` (modern) or `_AT_ONCE_LEGACY` (its era
        legacy: ``initialize``, or in the session), or a ``tools/call``
        naming a tool with `Tool.fused_arguments` (see the module docs),
        answered by `request` as on the event loop; ``notifications/initialized``,
        acted on by `notification`. Anything else, and anything that does
        not decode, is left untouched for the general stage.
        """
        if self.server.forwarder is not None:
            return DEFERRED
        try:
            msg = decode_message(self.decoder, data)
        except JSONRPCError:
            return DEFERRED  # its error reply (or, for a notification, its log line) is the event loop's
        t = type(msg)
        if t is Notification and msg.method == _INITIALIZED:  # type: ignore[union-attr]  # t is Notification
            return Notified(msg, self.notification(msg))  # type: ignore[arg-type]  # t is Notification
        if t is not Request:
            return DEFERRED
        method = msg.method  # type: ignore[union-attr]  # t is Request
        legacy = self.era(msg) is _LEGACY_ERA  # type: ignore[arg-type]  # t is Request
        if method == _TOOLS_CALL:
            params = msg.params  # type: ignore[union-attr]  # t is Request
            name = params.get("name") if type(params) is dict else None
            tool = self.server._tools.get(name) if type(name) is str else None
            if tool is None or tool.fused_arguments is None:
                return DEFERRED  # it may await, or run on a worker thread
            # A modern call: later ones take the fused stage once loaded (a legacy call never does).
            self._unfused = not legacy and self.fast is not None and not self.fast.loaded
        elif method not in (_AT_ONCE_LEGACY if legacy else _AT_ONCE):
            return DEFERRED
        reply = self.request(msg)  # type: ignore[arg-type]  # t is Request
        if type(reply) is not tuple:  # pragma: no cover - these handlers answer at once
            raise AssertionError(f"{method} did not answer at once")
        return reply

    def warm(self) -> None:
        """Load the fused stage if a call was answered without it (the stdio front, once the reply is written)."""
        if self._unfused:
            self._unfused = False
            if self.fast is not None:
                self.fast.load()

    def rebind(self, write: Write, held: frozenset[str] | None = None, over: Callable[[Call], Any] | None = None) -> None:
        """Messages not tied to a request go to ``write`` from now on (``held`` and ``over``, if given, replace theirs).

        For a transport that hands the connection on with nothing in flight
        (the stdio front to the event loop's `LineServer`): the legacy
        session, its notifications and the server's requests to the peer
        follow, since they write through the connection's ``write``.
        """
        if self.calls:
            raise RuntimeError("rebind: requests are in flight; they keep the write they started with")
        self.write = write
        if held is not None:
            self.held = held
        if over is not None:  # the event loop's transport ends posted calls: threaded tools may take the fused stage
            self._over = over
            self._posted = self._begin

    def serve(self, request: Request, write: Write, handle: Handle | None = None) -> Reply | Call:
        """Start a modern request a transport admitted (HTTP): its reply now, or its running `Call`.

        ``write`` takes its notifications; ``handle`` is the pipeline's
        (`Server.handle`) unless the transport wraps it (HTTP's scope check).
        The call is the transport's alone: HTTP requests share no ids.
        """
        call = Call(request.id, request.method, write, self.line)
        reply = call.start(handle if handle is not None else self._handle, request)
        return reply if reply is not None else call

    # -- requests ----------------------------------------------------------------

    def era(self, request: Request) -> Era:
        """The era ``request`` belongs to (a legacy session's, or what its ``_meta`` says)."""
        return request_era(request, self.session is not None, self.legacy)

    def request(self, request: Request, write: Write | None = None) -> Reply | Call:
        """Start serving ``request``: its reply now, or the `Call` to finish (see the module docs).

        ``write`` takes the request's notifications (and, by default, its
        requests to the peer); the connection's own ``write`` when omitted.
        """
        id_ = request.id
        calls = self.calls
        if id_ in calls:
            return reply_failed(id_, InvalidRequest(f"Invalid Request: request id {id_!r} is already in flight", id=id_))
        method = request.method
        call = Call(id_, method, write or self.write, self.line)
        session = self.session
        if session is None and method != "initialize":
            # `request_era`'s first test, inline: without a session, only `initialize` can be legacy.
            reply = call.start(self._handle, request)
        elif request_era(request, session is not None, self.legacy) is _LEGACY_ERA:
            if session is None:
                try:
                    session = self.session = self._open_session()
                except BaseException as exc:  # noqa: BLE001 - legacy turned off on the server: -32601
                    return reply_failed(id_, exc)
            reply = call.start(session.handle, request)
        else:
            reply = call.start(self._handle, request)
        if reply is not None:
            return reply
        calls[id_] = call
        return call

    def finished(self, call: Call) -> None:
        """The transport's task for ``call`` is over (replied, failed or cancelled)."""
        if call.state is _RUNNING:
            call.state = _CANCELLED  # cancelled before it ran
        if self.calls.get(call.id) is call:
            del self.calls[call.id]

    def cancel_calls(self, *, endless_only: bool = False) -> list[Call]:
        """Cancel the requests in flight (only open ``subscriptions/listen`` streams if ``endless_only``)."""
        cancelled = [
            call
            for call in self.calls.values()
            if not endless_only or call.method == methods.SUBSCRIPTIONS_LISTEN
        ]
        for call in cancelled:
            call.cancel()
        return cancelled

    # -- notifications and responses from the peer ----------------------------------

    def notification(self, note: Notification) -> Call | None:
        """Act on a notification; returns the `Call` it cancelled, if any."""
        if self._observers:  # e.g. OpenTelemetry: a SERVER span around it (server/_telemetry.py)
            return observe_notification(self._observers, note, self.session, self.session_id, self._act_on)
        return self._act_on(note)

    def _act_on(self, note: Notification) -> Call | None:
        method = note.method
        if method == methods.CANCELLED:
            params = note.params or {}
            target = params.get("requestId")
            call = self.calls.get(target) if type(target) in (str, int) else None
            if call is None or call.state is not _RUNNING:
                log.debug("cancellation for %r ignored: no such request in flight", target)
                return None
            log.info("request %r cancelled: %s", target, params.get("reason", "no reason given"))
            call.cancel()
            return call
        if method == "notifications/initialized" and self.session is not None:
            self.session.initialized = True
            return None
        log.debug("notification %s received", method)
        return None

    def response(self, msg: Response | ErrorResponse) -> bool:
        """The peer's answer to one of our requests; False when it answers nothing we sent."""
        return self.outgoing.answer(msg)

    # -- the legacy session -------------------------------------------------------------

    def _open_session(self) -> LegacySession:
        session: LegacySession = self.server.open_session(self._send_request, self._notify, session_id=self.session_id)
        session.close_stream = self.close_stream
        return session

    async def _send_request(self, method: str, params: dict[str, Any]) -> Any:
        route = self.route
        return await self.outgoing.request(method, params, route() if route is not None else self.write)

    def _notify(self, method: str, params: dict[str, Any]) -> None:
        try:
            data = encode_notification(method, params, line=self.line)
        except LocalProtocolError as exc:
            log.error("cannot encode %s: %s", method, exc)
            return
        self.write(data)

    # -- the end --------------------------------------------------------------------------

    def close(self, reason: str) -> None:
        """The connection (or session) ended: fail our requests to the peer, close the legacy session."""
        if self.state is ConnectionState.CLOSED:
            return
        self.state = ConnectionState.CLOSED
        self.outgoing.close(reason)  # and a request asked later fails at once
        if self.session is not None:
            self.session.close()
