"""What every legacy (2025-11-25) session of the endpoint is, whichever store holds it.

`_sessions.HTTPSession` (the session lives in this process) and
`_shared_sessions.SharedSession` (this worker's copy of a session kept in
Redis) are both a `SessionBase`; what they share lives here once, and each
keeps only how it holds its streams. Rules kept here:

* a session is one `ServerConnection` in legacy mode, with the session's id,
  whose ``route`` and ``close_stream`` hooks are the session's own; its
  ``legacy`` session, negotiated ``version`` and whether it is ``closed``
  are read from that connection, never kept twice;
* ``initialize`` is answered at once; it opens the session only when it
  succeeded and negotiated a version; otherwise the connection is closed
  and the reply goes out with the status of its error code (400 when it has
  none). An open session's streams start with a priming event when the
  version is 2025-11-25 or later (older clients cannot parse an event with
  empty data), and its ``LegacySession`` takes the store's subscription
  limits;
* a request that ends leaves the connection (`SessionBase.settle`); its
  response, without its newline (SSE ``data`` holds none), is its stream's
  last event; a cancelled request has none;
* an event is framed ``id: {stream}-{n}`` then ``data: ...`` (`event`), the
  priming event with empty data (`priming`); a ``Last-Event-ID`` names a
  stream only when both numbers are digits, at most `MAX_ID_DIGITS` each
  (`event_id`);
* the first piece of an SSE response is preceded by its head (`write_sse`);
* a request refused because the caller holds its share of a cap (`CallerBusy`:
  ``RateLimit``, a caller's live tasks) is answered, when its reply is all the
  POST carries, with **429** and ``Retry-After``, as a 2026-07-28 request is
  (`refusal_status`); every other reply in a session is a 200, whatever it
  carries (2025-11-25 maps no error code to a status).
"""

from __future__ import annotations

import abc
import time
from typing import TYPE_CHECKING, Any, Protocol

from ...server.transport import CALLER_BUSY, Call, ConnectionState, LegacySession, Reply, ServerConnection, Write
from ._asgi import STATUS_BY_CODE, Send, sse_start

if TYPE_CHECKING:
    from ...jsonrpc import Request
    from ...server import Server
    from ._session_rules import SessionOptions


class Store(Protocol):
    """What a session reads of the store that holds it."""

    server: Server
    options: SessionOptions

__all__ = [
    "SessionBase", "PRIMING_SINCE", "MAX_ID_DIGITS", "discard", "unline", "event", "priming", "event_id", "write_sse",
    "refusal_status",
]

#: The first revision whose clients accept an SSE event with empty data (the priming event).
PRIMING_SINCE = "2025-11-25"
#: Digits of either number of an event id we could have given out; a longer one names no stream.
MAX_ID_DIGITS = 20


def refusal_status(reply: Reply | None) -> int:
    """The HTTP status of a session's POST whose one JSON body is ``reply``: 429 for the caller's share of a cap, else 200."""
    return STATUS_BY_CODE[CALLER_BUSY] if reply is not None and reply[1] == CALLER_BUSY else 200


def discard(data: bytes) -> None:
    """The ``write`` of a message answered at once (``initialize``): nothing is streamed."""
    return None


def unline(data: bytes) -> bytes:
    """A reply line without its newline: SSE ``data`` must not contain one."""
    return data[:-1] if data[-1:] == b"\n" else data


def event(sid: int, n: int, data: bytes) -> bytes:
    """Event ``n`` of stream ``sid``, framed."""
    return b"id: %d-%d\ndata: %s\n\n" % (sid, n, data)


def priming(sid: int, n: int) -> bytes:
    """The priming event: an id to resume from, and empty data."""
    return b"id: %d-%d\ndata: \n\n" % (sid, n)


def event_id(value: bytes) -> tuple[bytes, bytes] | None:
    """The stream's and the event's numbers (as digits) of a ``Last-Event-ID``, or None if we could not have given it out."""
    sid, dash, n = value.strip().partition(b"-")
    if not dash or not sid.isdigit() or not n.isdigit() or len(sid) > MAX_ID_DIGITS or len(n) > MAX_ID_DIGITS:
        return None  # (and int() refuses numbers past 4,300 digits)
    return sid, n


async def write_sse(send: Send, chunk: bytes, *, more: bool, head: bool) -> None:
    """One piece of an SSE response, after the response's head when ``head`` (the first piece)."""
    if head:
        await send(sse_start())
    await send({"type": "http.response.body", "body": chunk, "more_body": more})


class SessionBase(abc.ABC):
    """One legacy session: its id, whose token opened it, and its `ServerConnection`."""

    __slots__ = ("id", "key", "owner", "sessions", "conn", "primes", "last_seen")

    def __init__(self, sessions: Store, id: str, owner: Any, notify: Write, *, first_request_id: int = 1) -> None:
        self.id = id
        self.key = id.encode("ascii")
        self.owner = owner  # whose token opened it (None without auth)
        self.sessions = sessions
        self.primes = False  # whether its streams open with a priming event
        self.last_seen = time.monotonic()
        self.conn = ServerConnection(
            sessions.server,
            notify,  # session notifications
            line=False,
            legacy=True,
            session_id=id,
            route=self.route,
            close_stream=self.close_stream,
            first_request_id=first_request_id,
        )

    @property
    def legacy(self) -> LegacySession | None:
        return self.conn.session

    @property
    def version(self) -> str | None:
        legacy = self.conn.session
        return legacy.version if legacy is not None else None

    @property
    def closed(self) -> bool:
        return self.conn.state is ConnectionState.CLOSED

    def touch(self) -> None:
        self.last_seen = time.monotonic()

    def initialize(self, req: Request) -> tuple[bytes, int]:
        """Answer the session's ``initialize``: the reply and its HTTP status (200: the session is open)."""
        out = self.conn.request(req, discard)
        assert type(out) is tuple, "initialize is answered at once"
        data, code = out
        legacy = self.conn.session
        if code is not None or legacy is None or legacy.version is None:
            self.conn.close("initialize failed")
            return data, STATUS_BY_CODE.get(code, 400) if code is not None else 400
        self.primes = legacy.version >= PRIMING_SINCE
        legacy.max_subscriptions = self.sessions.options.max_session_subscriptions
        legacy.max_subscription_uri = self.sessions.options.max_subscription_uri
        return data, 200

    def settle(self, call: Call, reply: Reply | None) -> bytes | None:
        """A request ended: its call leaves the connection; its response as its stream's last event (None: cancelled)."""
        self.conn.finished(call)
        return None if reply is None else unline(reply[0])

    # -- the transport side of the ServerConnection: each store's own ---------------------

    @abc.abstractmethod
    def route(self) -> Write:
        """Where a request to the client goes now (see `ServerConnection`)."""

    @abc.abstractmethod
    def close_stream(self, request_id: Any, retry_ms: int | None) -> bool:
        """`Context.close_sse_stream`: end the connection of that request's stream; whether it did."""
