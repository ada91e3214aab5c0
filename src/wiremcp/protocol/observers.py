"""Observers: what the server and the client tell about each request, notification and session, to whoever listens.

Telemetry (OpenTelemetry spans and metrics, on both sides), the CLI's
request log and its Prometheus counters are observers: they watch, they do
not take part. Nothing replaces a method on a live object to see the
traffic; the server (``server/_pipeline.py``) and the client
(``client/_observing.py``) call these hooks at one place each.

Rules:

* an `Observer` subclass overrides the hooks it needs; each default does
  nothing. Register one with ``Server.add_observer`` (before serving starts)
  or ``Client.add_observer``;
* no observer, no cost: the server and the client check once (the server
  when serving starts, the client per request: one truth test) and, with
  none, run exactly the path they ran before;
* a request: `Observer.request_started` gets an `ObservedRequest` and
  returns whatever it wants back (a span, a start time); exactly one
  `Observer.request_answered` follows with that value, and the outcome:
  the result dict, or the exception that ends it (a `JSONRPCError`, an
  ``asyncio.CancelledError``, anything else). Observers are started in the
  order they were registered and answered in the reverse order, nested as
  ``with`` blocks are; the same holds for notifications;
* on the server, a request is observed around the middleware and the
  handler; what a 2025-11-25 session answers itself (``initialize``,
  ``ping``, ``logging/setLevel``, ``resources/subscribe``,
  ``resources/unsubscribe``, a modern-only method's -32601) is observed too,
  with ``internal`` true. On the client, a request is observed from the
  first send to the reply (a request that was never sent and is sent again
  is the same request); `ObservedRequest.meta` is the ``_meta`` it will
  carry, which ``request_started`` may add to (trace context);
* a notification: the client's are observed as they are sent (``_meta``
  likewise open to additions), the server's as they are acted on;
* a session (a 2025-11-25 one: the modern era has none): `session_opened`
  when it opens, `session_closed` exactly once when it ends, with the same
  `ObservedSession`;
* an observer's own exception is not caught: it reaches the request as a
  handler's would. Observers must not block: they run on the event loop;
* the nesting of the notification hooks is written once, `around_notification`,
  which both sides call.
"""

from __future__ import annotations

from typing import Any, Callable, Collection, Mapping, Sequence, TypeVar

__all__ = ["Observer", "ObservedRequest", "ObservedNotification", "ObservedSession", "check_observer", "around_notification"]

T = TypeVar("T")


class ObservedRequest:
    """One request, as observers see it (the same object from `Observer.request_started` to `request_answered`)."""

    __slots__ = ("method", "params", "id", "version", "session_id", "headers", "internal", "meta")

    def __init__(
        self,
        method: str,
        params: dict[str, Any],
        id: Any = None,
        *,
        version: str | None = None,
        session_id: str | None = None,
        headers: Mapping[str, str] | None = None,
        internal: bool = False,
        meta: dict[str, Any] | None = None,
    ) -> None:
        #: The JSON-RPC method and params (the server's: as received; the client's: as given).
        self.method = method
        self.params = params
        #: The JSON-RPC id (the client's: set once the request is sent; None before).
        self.id = id
        #: The protocol version in use, when known (``initialize`` decides it before `request_answered`).
        self.version = version
        #: The session id: a 2025-11-25 session's, or the ``Mcp-Session-Id`` header; None without one.
        self.session_id = session_id
        #: Server side: the HTTP request's headers (lower-case names); None off HTTP.
        self.headers = headers
        #: Server side: answered by a 2025-11-25 session itself, not by a handler (no middleware ran).
        self.internal = internal
        #: The request's ``_meta``: the server's as received (may be None); the client's to send, open to additions.
        self.meta = meta

    def __repr__(self) -> str:
        return f"<ObservedRequest {self.method} id={self.id!r}>"


class ObservedNotification:
    """One notification: received (server) or sent (client)."""

    __slots__ = ("method", "params", "version", "session_id", "headers", "meta")

    def __init__(
        self,
        method: str,
        params: dict[str, Any],
        *,
        version: str | None = None,
        session_id: str | None = None,
        headers: Mapping[str, str] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.method = method
        self.params = params
        self.version = version
        self.session_id = session_id
        #: Server side: the HTTP request's headers; None off HTTP.
        self.headers = headers
        #: As `ObservedRequest.meta`: the client's is sent with the notification.
        self.meta = meta

    def __repr__(self) -> str:
        return f"<ObservedNotification {self.method}>"


class ObservedSession:
    """One 2025-11-25 session, from `Observer.session_opened` to `session_closed`."""

    __slots__ = ("id", "version", "http", "opened_at", "subscriptions")

    def __init__(
        self, id: str | None, version: str | None, *, http: bool, opened_at: float, subscriptions: Collection[str] = ()
    ) -> None:
        #: The HTTP session id; None over stdio.
        self.id = id
        #: The negotiated version (None until ``initialize``; set before `session_closed`).
        self.version = version
        #: Whether the session is carried over HTTP (else a pipe: stdio, memory).
        self.http = http
        #: ``time.perf_counter()`` when the session began to open (the client: when it began to connect).
        self.opened_at = opened_at
        #: Server side: the resource URIs the session is subscribed to now (a live view).
        self.subscriptions = subscriptions

    def __repr__(self) -> str:
        return f"<ObservedSession id={self.id!r} version={self.version!r}>"


class Observer:
    """Hooks the server and the client call; override the ones you need (see the module docs)."""

    def request_started(self, request: ObservedRequest) -> Any:
        """A request begins; the value returned comes back to `request_answered`."""
        return None

    def request_answered(
        self, request: ObservedRequest, started: Any, result: dict[str, Any] | None, error: BaseException | None
    ) -> None:
        """The request ended: ``result`` (then ``error`` is None), or ``error``, the exception that ended it."""

    def notification_started(self, note: ObservedNotification) -> Any:
        """A notification is about to be acted on (server) or sent (client); the value goes to `notification_ended`."""
        return None

    def notification_ended(self, note: ObservedNotification, started: Any, error: BaseException | None) -> None:
        """The notification was acted on or sent (``error``: the exception that stopped it)."""

    def session_opened(self, session: ObservedSession) -> None:
        """A 2025-11-25 session is open."""

    def session_closed(self, session: ObservedSession) -> None:
        """The session ended (called once per session)."""


def check_observer(observer: Any) -> Observer:
    """``observer``, if it is an `Observer` (what ``add_observer`` takes on both sides); else a TypeError."""
    if not isinstance(observer, Observer):
        raise TypeError(f"an observer is an instance of wiremcp.protocol.observers.Observer, not {observer!r}")
    return observer


def around_notification(observers: Sequence[Observer], note: ObservedNotification, act: Callable[[], T]) -> T:
    """``act()`` between the observers' notification hooks: started in order, ended in reverse, with its exception.

    The server calls it around acting on a notification, the client around writing one.
    """
    states = [observer.notification_started(note) for observer in observers]
    error: BaseException | None = None
    try:
        return act()
    except BaseException as exc:
        error = exc
        raise
    finally:
        for observer, state in zip(reversed(observers), reversed(states)):
            observer.notification_ended(note, state, error)
