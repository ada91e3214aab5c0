"""Where the client tells its observers (``protocol/observers.py``) about requests, notifications and its session.

Rules:

* `Client` calls these only when it has observers (one truth test per
  request or write); without them nothing here runs;
* `observe_request` is the whole of one request, from the first send to the
  reply (a request never sent and sent again is the same one): the observers
  may add to `ObservedRequest.meta`, which the request then carries as
  ``_meta`` (trace context); the request id, the session id and the
  protocol version (``initialize`` decides the last two) are filled in
  before ``request_answered``;
* `observe_write` sees every message the client writes outside a request:
  a notification (``notifications/initialized``, ``notifications/cancelled``,
  `Client.notify`) is observed around its write, its ``_meta`` open to
  additions as a request's; an answer to a server's request passes through
  untouched;
* `session_opened` and `session_closed` frame a 2025-11-25 session, from
  ``connect`` (its start) to ``aclose``.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, Sequence

from orjson import loads

from ..jsonrpc import encode_notification
from ..protocol.meta import PROTOCOL_VERSION
from ..protocol.observers import ObservedNotification, ObservedRequest, ObservedSession, Observer, around_notification

if TYPE_CHECKING:
    from ._driver import Driver
    from ._options import CallOptions

__all__ = ["observe_request", "observe_write", "session_opened", "session_closed"]


def _version(client: Driver) -> str | None:
    proto = client._proto
    meta = proto._meta
    version = meta.get(PROTOCOL_VERSION) if meta is not None else proto.protocol_version
    return version if type(version) is str else None


def _session_id(client: Driver) -> str | None:
    session_id = getattr(client.transport, "session_id", None)
    return session_id if type(session_id) is str else None


async def observe_request(
    client: Driver,
    observers: Sequence[Observer],
    method: str,
    params: dict[str, Any] | None,
    options: CallOptions,
    cancel_on_timeout: bool,
) -> dict[str, Any]:
    """``client._roundtrip`` (the request) between the observers' request hooks."""
    given = dict(options.meta) if options.meta else {}
    event = ObservedRequest(
        method, params if params is not None else {}, version=_version(client), session_id=_session_id(client),
        meta=dict(given),
    )
    states = [observer.request_started(event) for observer in observers]
    if event.meta != given:
        options = replace(options, meta=event.meta)
    try:
        result = await client._roundtrip(method, params, options, cancel_on_timeout=cancel_on_timeout, event=event)
    except BaseException as exc:
        _answered(client, observers, event, states, None, exc)
        raise
    _answered(client, observers, event, states, result, None)
    return result


def _answered(
    client: Driver,
    observers: Sequence[Observer],
    event: ObservedRequest,
    states: list[Any],
    result: dict[str, Any] | None,
    error: BaseException | None,
) -> None:
    if event.session_id is None:  # initialize over HTTP: the session id came with its reply
        event.session_id = _session_id(client)
    if event.version is None:
        version = client._proto.protocol_version
        event.version = version if type(version) is str else None
    for observer, state in zip(reversed(observers), reversed(states)):
        observer.request_answered(event, state, result, error)


def observe_write(client: Driver, observers: Sequence[Observer], data: bytes, write: Callable[[bytes], None]) -> None:
    """``write(data)``; a notification between the observers' notification hooks, its ``_meta`` theirs to add to."""
    message = loads(data)
    method = message.get("method") if type(message) is dict and "id" not in message else None
    if type(method) is not str:  # an answer to the server's request: not an observed message
        write(data)
        return
    given = message.get("params")
    params = dict(given) if type(given) is dict else {}
    meta = params.get("_meta")
    event = ObservedNotification(
        method, params, version=_version(client), session_id=_session_id(client),
        meta=dict(meta) if type(meta) is dict else {},
    )

    def send() -> None:
        if event.meta:  # what the observers added; else the notification goes as it was
            params["_meta"] = event.meta
            write(encode_notification(method, params))
        else:
            write(data)

    around_notification(observers, event, send)


def session_opened(client: Driver, observers: Sequence[Observer], opened_at: float) -> ObservedSession:
    """Tell ``observers`` a 2025-11-25 session is open (it began to connect at ``opened_at``)."""
    url = getattr(client.transport, "url", None)
    event = ObservedSession(_session_id(client), _version(client), http=type(url) is str, opened_at=opened_at)
    for observer in observers:
        observer.session_opened(event)
    return event


def session_closed(observers: Sequence[Observer], event: ObservedSession) -> None:
    """Tell ``observers`` the session of ``event`` ended."""
    for observer in reversed(observers):
        observer.session_closed(event)


#: The clock `Client.connect` notes a session's start with (only when it has observers).
clock = time.perf_counter
