"""`Driver`: one `Client`'s asyncio machinery around its `ClientProtocol` and transport.

Everything MCP decides is the protocol object's (`_protocol`). What is left
here is what needs an event loop, kept off the public class:

* a future per request (its `Waiter`), settled from the protocol's events
  (`_dispatch`); cancelling the awaiting task cancels the request on the wire;
* one timer per connection, at the earliest deadline in flight (not a timer
  per call), which feeds `ClientProtocol.expire`;
* faults: a request that never left this process (`NotSent`: the connection
  could not be made) is sent once more after ``connect_retry_delay``, with
  the same deadline; nothing else is ever sent again (it may have run). A
  connection closed (or lost) is renewed (`_renew`) from
  ``transport_factory`` with a fresh protocol object, keeping the `EraCache`;
* calling user callbacks: the events a request's tag claims go to its
  callbacks (``on_progress``, ``on_log``), the rest to ``on_log`` and
  ``on_notification`` (`_receiver.call_back`: never raised into the reader);
  a legacy server's request for input is answered by the configured callback
  in a task of its own, and its failure by `ClientProtocol.answer_error`;
* observers (`_observing`): each request from its first send to its reply,
  each notification around its write, only when there are observers (one
  truth test).

`Client` (`_client`) is the public surface on top, `_calls` the rules of a
call (MRTR rounds, version retry, the cache, pages, tasks).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Callable

from ..protocol.observers import ObservedRequest, ObservedSession, Observer
from .events import (
    Abandon,
    Acknowledged,
    Event,
    Failed,
    Id,
    LogMessage,
    Notified,
    Progress,
    Send,
    ServerRequest,
    Settled,
    SubscriptionEnded,
    SubscriptionNote,
    TaskUpdate,
)
from ._eras import EraCache
from ._errors import ClientError, ConnectionClosed, NotSent
from ._observing import observe_request, observe_write
from ._options import CallOptions
from ._protocol import ClientProtocol, Outgoing
from ._receiver import Callback, TransportReceiver, Waiter, call_back, maybe_await
from ._transport import ClientTransport

if TYPE_CHECKING:
    from ._subscription import Subscription
    from ._task_handle import TaskHandle

__all__ = ["Driver", "RETRY_EVENT"]

log = logging.getLogger("wiremcp.client")

#: The ``wiremcp_event`` attribute of the log record saying a request that was not sent is tried
#: once more: what a log filter matches on (the CLI's `quiet_retries`), never the message's wording.
RETRY_EVENT = "connect_retry"

_NO_OPTIONS = CallOptions()


class Driver:
    """The asyncio side of one client: sending, deadlines, events, lifecycle; `Client` is the public class on top."""

    # The public attributes `Client.__init__` sets (and documents).
    transport: ClientTransport
    connect_retry_delay: float | None
    timeout: float | None
    probe_timeout: float
    on_log: Callback | None
    on_notification: Callback | None
    on_wire: Callable[[str, bytes], None] | None

    def __init__(
        self,
        settings: dict[str, Any],
        inputs: dict[str, Callback],
        eras: EraCache | None,
        transport_factory: Callable[[], ClientTransport] | None,
    ) -> None:
        """``settings``: the keywords of each new `ClientProtocol`; ``inputs``: the callbacks answering the server.

        ``transport`` is set before (by `Client.__init__`): the first protocol object is made for it.
        """
        self._inputs = inputs
        self._settings = settings
        self._proto: ClientProtocol[Waiter] = self._new_protocol(self.transport, eras)
        self._transport_factory = transport_factory
        self._receiver = TransportReceiver(self)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._opened = False
        self._deadline_timer: asyncio.TimerHandle | None = None
        self._deadline_at = 0.0
        self._tasks: set[asyncio.Future[None]] = set()
        #: Task handles following each task id (they get its status notifications).
        self._followers: dict[str, set[TaskHandle]] = {}
        #: Observers (protocol.observers; see _observing), and the 2025-11-25 session they were told of.
        self._observers: list[Observer] = []
        self._session: ObservedSession | None = None

    def _new_protocol(self, transport: ClientTransport, eras: EraCache | None) -> ClientProtocol[Waiter]:
        return ClientProtocol(
            **self._settings,
            eras=eras,
            server_key=transport.cache_key,
            cancel_by_notification=transport.cancel_by_notification,
            mirrors_headers=bool(getattr(transport, "mirrors_headers", False)),
            silence_means_legacy=bool(getattr(transport, "silence_means_legacy", transport.cancel_by_notification)),
        )

    # -- lifecycle ------------------------------------------------------------

    def _renew(self) -> None:
        if self._transport_factory is None:
            raise ClientError(
                "this client is closed and cannot reconnect: it has no transport_factory "
                "(Client.stdio, Client.http and Client.memory set one)"
            )
        self.transport = self._transport_factory()
        self._proto = self._new_protocol(self.transport, self._proto.eras)
        self._opened = False
        self._deadline_timer = None

    def _lost(self, exc: BaseException | None) -> None:
        if self._deadline_timer is not None:
            self._deadline_timer.cancel()
            self._deadline_timer = None
        self._dispatch(self._proto.connection_lost(exc))

    # -- sending --------------------------------------------------------------

    def _connected(self) -> asyncio.AbstractEventLoop:
        if self._proto.closed is not None:
            raise ConnectionClosed(str(self._proto.closed))
        if self._loop is None:
            raise ClientError("the client is not connected; use 'async with client' or 'await client.connect()'")
        return self._loop

    def _transmit(self, out: Outgoing, deadline: float | None) -> Id:
        if self.on_wire is not None:
            self.on_wire("send", out.data)
        try:
            self.transport.send(out.data, id=out.id, method=out.method, params=out.params, headers=out.headers)
        except BaseException:
            self._proto.forget(out.id)
            raise
        if deadline is not None:
            self._arm(deadline)
        return out.id

    async def _roundtrip(
        self, method: str, params: dict[str, Any] | None, options: CallOptions, *,
        cancel_on_timeout: bool = True, event: ObservedRequest | None = None,
    ) -> dict[str, Any]:
        """One request and its reply; a request that was never sent (`NotSent`) is sent once more."""
        if self._observers and event is None:  # observed: `observe_request` comes back here with its event
            return await observe_request(self, self._observers, method, params, options, cancel_on_timeout)
        deadline = options.deadline_after(self._connected().time(), self.timeout)
        try:
            return await self._attempt(method, params, options, deadline, cancel_on_timeout, event)
        except NotSent as exc:
            delay = self.connect_retry_delay
            if delay is None:
                raise
            log.warning("%s was not sent (%s); retrying once in %g s", method, exc, delay, extra={"wiremcp_event": RETRY_EVENT})
            await asyncio.sleep(delay)
            try:
                return await self._attempt(method, params, options, deadline, cancel_on_timeout, event)
            except NotSent as again:
                raise NotSent(f"{again} (tried twice, {delay:g} s apart)") from exc

    async def _attempt(
        self, method: str, params: dict[str, Any] | None, options: CallOptions, deadline: float | None,
        cancel_on_timeout: bool, event: ObservedRequest | None,
    ) -> dict[str, Any]:
        loop = self._connected()
        waiter = Waiter(loop.create_future(), options)
        out = self._proto.request(method, params, waiter, options, deadline, cancel_on_timeout=cancel_on_timeout)
        if event is not None:
            event.id = out.id
        id = self._transmit(out, deadline)
        try:
            return await waiter.future
        except asyncio.CancelledError:
            self._cancel(id, "the caller cancelled the request")
            raise

    def _listen(self, subscription: Subscription) -> asyncio.Future[dict[str, Any]]:
        waiter = Waiter(self._connected().create_future(), _NO_OPTIONS, subscription)
        subscription.id = self._transmit(self._proto.listen(subscription.filter, waiter), None)
        return waiter.future

    def _cancel(self, id: Id, reason: str) -> None:
        self._dispatch(self._proto.cancel(id, reason))

    def _write(self, data: bytes) -> None:
        if self._observers:  # a notification is observed around its write (see _observing)
            observe_write(self, self._observers, data, self._send_bytes)
        else:
            self._send_bytes(data)

    def _send_bytes(self, data: bytes) -> None:
        if self.on_wire is not None:
            self.on_wire("send", data)
        self.transport.send(data)

    # Timeouts: one timer for the whole connection, at the earliest deadline the
    # pending map holds (not a timer per call, created and cancelled each time).

    def _arm(self, deadline: float) -> None:
        timer = self._deadline_timer
        if timer is None or deadline < self._deadline_at:
            if timer is not None:
                timer.cancel()
            self._deadline_at = deadline
            assert self._loop is not None
            self._deadline_timer = self._loop.call_at(deadline, self._expire)

    def _expire(self) -> None:
        self._deadline_timer = None
        assert self._loop is not None
        # A timer may fire a hair early (the loop's clock resolution): allow 1 ms.
        self._dispatch(self._proto.expire(self._loop.time() + 1e-3))
        following = self._proto.next_deadline()
        if following is not None and self._proto.closed is None:
            self._arm(following)

    # -- acting on the protocol's events ----------------------------------------------

    def _dispatch(self, events: list[Event[Waiter]]) -> None:
        for event in events:
            if type(event) is Settled:
                future = event.tag.future
                if not future.done():
                    future.set_result(event.result)
            elif type(event) is Failed:
                future = event.tag.future
                if not future.done():
                    future.set_exception(event.error)
            elif type(event) is Send:
                try:
                    self._write(event.data)
                except ClientError as exc:
                    log.debug("could not send %r: %s", event.data[:80], exc)
            elif type(event) is Abandon:
                self.transport.abandon(event.id)
            elif type(event) is Progress:
                on_progress = event.tag.options.on_progress
                if on_progress is not None:
                    call_back(on_progress, event.progress, event.total, event.message)
            elif type(event) is LogMessage:
                target = event.tag.options.on_log if event.tag is not None else None
                if target is None:
                    target = self.on_log
                if target is not None:
                    call_back(target, event.params)
                else:
                    log.debug("server log message: %r", event.params)
            elif type(event) is Notified:
                if self.on_notification is not None:
                    call_back(self.on_notification, event.notification)
                else:
                    log.debug("notification %s received", event.notification.method)
            elif type(event) is Acknowledged:
                if event.tag.subscription is not None:
                    event.tag.subscription._acknowledge(event.notifications)
            elif type(event) is SubscriptionNote:
                if event.tag.subscription is not None:
                    event.tag.subscription._deliver(event.method, event.params)
            elif type(event) is SubscriptionEnded:
                if event.tag.subscription is not None:
                    event.tag.subscription._end(event.error)
            elif type(event) is TaskUpdate:
                for handle in tuple(self._followers.get(event.task.id, ())):
                    handle._notified(event.task)
            elif type(event) is ServerRequest:
                task = asyncio.ensure_future(self._answer_server(event))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _answer_server(self, request: ServerRequest) -> None:
        """Legacy era: answer a server-initiated request with the configured callback."""
        try:
            data = self._proto.answer(request.id, await self._answer_input(request.kind, request.params))
        except Exception as exc:  # noqa: BLE001 - the server is owed a reply
            log.exception("answering the server's %s failed", request.method)
            data = self._proto.answer_error(request.id, exc)
        if data is not None:
            self._dispatch([Send(data)])

    async def _answer_input(self, kind: str, params: dict[str, Any]) -> Any:
        return await maybe_await(self._inputs[kind](params))

    def _follow(self, handle: TaskHandle) -> None:
        self._followers.setdefault(handle.id, set()).add(handle)

    def _unfollow(self, handle: TaskHandle) -> None:
        followers = self._followers.get(handle.id)
        if followers is not None:
            followers.discard(handle)
            if not followers:
                del self._followers[handle.id]
