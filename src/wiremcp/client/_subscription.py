"""One ``subscriptions/listen`` stream as an async context manager and iterator (patterns/subscriptions.mdx).

Rules it keeps:

* entering sends the request and waits for
  ``notifications/subscriptions/acknowledged``; ``acknowledged`` is then the
  filter the server agreed to honour (it may be narrower than asked); no
  acknowledgment within the timeout cancels the request and raises
  `RequestTimeout`;
* iteration yields ``(method, params)`` pairs and ends cleanly when the
  server closes the subscription (its response to the listen request, or
  ``notifications/cancelled`` naming it); an abrupt end of the connection
  raises `ConnectionClosed`;
* at most ``buffer`` unread notifications are kept; past that the oldest
  are dropped and counted in ``dropped``;
* leaving the block cancels the subscription on the wire.

Routing (which notification belongs to which subscription) is the
`ClientProtocol`'s; this object only queues what it is given.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import TYPE_CHECKING, Any

from ._errors import ProtocolViolation, RequestTimeout
from ._options import DEFAULT, Default

if TYPE_CHECKING:
    from ._client import Client

__all__ = ["Subscription", "DEFAULT_SUBSCRIPTION_BUFFER"]

#: Notifications a subscription holds while nobody reads them.
DEFAULT_SUBSCRIPTION_BUFFER = 1024


class Subscription:
    """One ``subscriptions/listen`` stream: iterate it for ``(method, params)`` pairs."""

    def __init__(self, client: Client, filter_: dict[str, Any], *, buffer: int = DEFAULT_SUBSCRIPTION_BUFFER) -> None:
        self.client = client
        self.filter = filter_
        self.id: Any = None
        self.acknowledged: dict[str, Any] | None = None
        self.dropped = 0
        self._buffer = buffer
        self._queue: deque[tuple[str, dict[str, Any]]] = deque()
        self._wakeup = asyncio.Event()
        self._acked = asyncio.Event()
        self._ended = False
        self._error: BaseException | None = None

    async def __aenter__(self) -> Subscription:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def open(self, *, timeout: float | None | Default = DEFAULT) -> None:
        client = self.client
        wait = client.timeout if timeout is DEFAULT else timeout
        future = client._listen(self)
        future.add_done_callback(self._finished)
        acked = asyncio.ensure_future(self._acked.wait())
        try:
            waiting: set[asyncio.Future[Any]] = {acked, future}
            await asyncio.wait(waiting, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
        finally:
            acked.cancel()
        if self._acked.is_set():
            return
        if future.done():
            exc = future.exception()
            if exc is not None:
                raise exc
            raise ProtocolViolation("the server ended the subscription before acknowledging it")
        await self.aclose()
        raise RequestTimeout("the server did not acknowledge subscriptions/listen in time")

    def _finished(self, future: asyncio.Future[Any]) -> None:
        # The listen request settled: its response is a graceful close
        # (subscriptions.mdx, Graceful Closure); an error ends it with that error.
        self._end(None if future.cancelled() else future.exception())

    # -- fed by the Client ------------------------------------------------------

    def _acknowledge(self, notifications: dict[str, Any]) -> None:
        self.acknowledged = notifications
        self._acked.set()

    def _deliver(self, method: str, params: dict[str, Any]) -> None:
        if len(self._queue) >= self._buffer:
            self._queue.popleft()
            self.dropped += 1
        self._queue.append((method, params))
        self._wakeup.set()

    def _end(self, exc: BaseException | None) -> None:
        if self._ended:
            return
        self._ended = True
        self._error = exc
        self._wakeup.set()

    # -- reading ------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._ended

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> tuple[str, dict[str, Any]]:
        while True:
            if self._queue:
                return self._queue.popleft()
            if self._ended:
                if self._error is not None and not isinstance(self._error, asyncio.CancelledError):
                    raise self._error
                raise StopAsyncIteration
            self._wakeup.clear()
            await self._wakeup.wait()

    async def aclose(self) -> None:
        """Cancel the subscription (stdio: notifications/cancelled; HTTP: close its stream)."""
        if self._ended:
            return
        self._end(None)
        self.client._cancel(self.id, "the client closed the subscription")
