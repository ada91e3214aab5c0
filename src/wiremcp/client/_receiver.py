"""What a `Client` hands to the layers around it: the transport's receiver, each request's tag, user callbacks.

Rules it keeps:

* the transport calls a `TransportReceiver` (the `Receiver` interface of
  `_transport`), never the `Client` users hold, so that object has only the
  MCP surface; a message goes to ``on_wire`` (``"recv"``) first, then to
  `ClientProtocol.receive`, and the events that come back are acted on at
  once (`Driver._dispatch`);
* each request's tag in the protocol is a `Waiter`: the future its caller
  awaits, its `CallOptions` (where its progress and log callbacks are), and
  its `Subscription` when it is a ``subscriptions/listen``;
* a user callback for a notification runs at once (`call_back`); an async
  one becomes a task; a failing one is logged, never raised into the reader
  (it would end the connection for everyone);
* a callback answering a server (``elicitation``, ``sampling``, ``roots``)
  may be sync or async (`maybe_await`).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from typing import TYPE_CHECKING, Any, Callable

from ._options import CallOptions

if TYPE_CHECKING:
    from ._driver import Driver
    from ._subscription import Subscription

__all__ = ["Callback", "TransportReceiver", "Waiter", "call_back", "maybe_await"]

log = logging.getLogger("wiremcp.client")

Callback = Callable[..., Any]


async def maybe_await(value: Any) -> Any:
    """``value``, awaited first when it is awaitable."""
    if inspect.isawaitable(value):
        return await value
    return value


def call_back(fn: Callback, *args: Any) -> None:
    """Run a notification callback; an async one becomes a task. Its errors are logged, never raised here."""
    try:
        out = fn(*args)
        if inspect.isawaitable(out):
            asyncio.ensure_future(out).add_done_callback(_log_task_error)
    except Exception:  # noqa: BLE001 - a user callback must not break the reader
        log.exception("a notification callback failed")


def _log_task_error(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("a notification callback failed", exc_info=task.exception())


class Waiter:
    """The tag of one request: its future, its options, and its subscription if it is a listen."""

    __slots__ = ("future", "options", "subscription")

    def __init__(self, future: asyncio.Future[dict[str, Any]], options: CallOptions, subscription: Subscription | None = None) -> None:
        self.future = future
        self.options = options
        self.subscription = subscription


class TransportReceiver:
    """What the transport calls (the `Receiver` interface), kept off the `Client` users hold."""

    __slots__ = ("_client",)

    def __init__(self, client: Driver) -> None:
        self._client = client

    def message(self, data: bytes, origin: Any = None, status: int | None = None) -> None:
        """One message from the server (``origin``: the request whose response stream carried it)."""
        client = self._client
        if client.on_wire is not None:
            client.on_wire("recv", data)
        client._dispatch(client._proto.receive(data, origin, status))

    def request_failed(self, id: Any, exc: BaseException) -> None:
        """Request ``id`` cannot be answered any more."""
        client = self._client
        client._dispatch(client._proto.request_failed(id, exc))

    def closed(self, exc: BaseException | None) -> None:
        """The connection is gone."""
        self._client._lost(exc)
