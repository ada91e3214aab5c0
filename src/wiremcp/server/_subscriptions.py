"""``subscriptions/listen`` (basic/patterns/subscriptions.mdx): change events fanned out to streams.

A `ChangeBus` carries change events from wherever they happen (a tool added
at run time, ``server.notify_resource_updated(uri)``) to every open
subscription. The bus belongs to the server's backend (`wiremcp.backends`):
`LocalBus` in one process; with ``WIREMCP_REDIS_URL`` a bus over Redis
pub/sub, so a change on one worker reaches listeners on all of them, each
worker applying its listeners' filters (docs/deploy.md).

Rules kept by `listen` (the request handler):

* the first message of a stream is ``notifications/subscriptions/acknowledged``
  with the subset of the filter the server honours;
* every notification carries ``io.modelcontextprotocol/subscriptionId`` (the
  listen request's id) in ``_meta``;
* only the kinds the client asked for are sent;
* past ``limit`` open subscriptions (the server's ``max_subscriptions``) a new
  one is refused with -32000 (`ServerBusy`; HTTP: 503 with ``Retry-After``);
* the stream ends with a ``complete`` result (carrying the subscription id)
  when the server closes it, and without one when the client cancels it or
  the transport goes away.
"""

from __future__ import annotations

import contextvars
from collections import deque
from typing import TYPE_CHECKING, Any, Callable, Collection

from ..backends import ChangeBus, Event, LocalBus
from ..jsonrpc import InvalidParams, RequestId
from ..protocol.meta import SUBSCRIPTION_ID
from ._reply import ServerBusy
from ._settings import DEFAULT_MAX_SUBSCRIPTIONS

if TYPE_CHECKING:
    import asyncio

__all__ = ["ChangeBus", "LocalBus", "Event", "Mailbox", "listen", "DEFAULT_MAX_SUBSCRIPTIONS", "parse_filter"]

#: Events queued for one slow listener before the oldest are dropped.
QUEUE_LIMIT = 1024

ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
_LIST_CHANGED = {
    "tools": ("toolsListChanged", "notifications/tools/list_changed"),
    "prompts": ("promptsListChanged", "notifications/prompts/list_changed"),
    "resources": ("resourcesListChanged", "notifications/resources/list_changed"),
}
UPDATED = "notifications/resources/updated"


def parse_filter(params: dict[str, Any]) -> dict[str, Any]:
    """The validated ``notifications`` filter (-32602 when malformed)."""
    wanted = params.get("notifications")
    if type(wanted) is not dict:
        raise InvalidParams("Invalid params: subscriptions/listen needs 'notifications', an object (SubscriptionFilter)")
    for flag, _ in _LIST_CHANGED.values():
        if flag in wanted and type(wanted[flag]) is not bool:
            raise InvalidParams(f"Invalid params: notifications.{flag} must be a boolean")
    uris = wanted.get("resourceSubscriptions")
    if uris is not None and (type(uris) is not list or any(type(u) is not str for u in uris)):
        raise InvalidParams("Invalid params: notifications.resourceSubscriptions must be an array of URIs")
    return wanted


def listen(
    subscription_id: RequestId,
    wanted: dict[str, Any],
    honoured: Collection[str],
    bus: ChangeBus,
    emit: Callable[[str, dict[str, Any]], None],
    open_count: list[int],
    limit: int,
) -> asyncio.Future[dict[str, Any]]:
    """Open one subscription: its acknowledgement is emitted now; the future is its ``complete`` result.

    No coroutine waits for its events: the bus's callback (`Mailbox.deliver`)
    queues them and a callback of the loop emits them. Cancelling the future
    (the client cancels, the transport goes away, or the task awaiting it is
    cancelled) ends the subscription without a result.
    """
    import asyncio  # imported by then: on first use, not at start-up

    if open_count[0] >= limit:
        raise ServerBusy(f"Server busy: {open_count[0]} subscriptions are open, the most this server keeps ({limit}); retry later")
    agreed: dict[str, Any] = {}
    kinds: list[str] = []
    for kind, (flag, _) in _LIST_CHANGED.items():
        if wanted.get(flag) is True and kind in honoured:
            agreed[flag] = True
            kinds.append(kind)
    uris: frozenset[str] = _NO_URIS
    if wanted.get("resourceSubscriptions") and "updated" in honoured:
        agreed["resourceSubscriptions"] = list(wanted["resourceSubscriptions"])
        uris = frozenset(agreed["resourceSubscriptions"])
    done: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
    box = Mailbox(subscription_id, tuple(kinds), uris, emit, done, open_count)
    box.unsubscribe = bus.subscribe(box.deliver)
    open_count[0] += 1
    done.add_done_callback(box.ended, context=_NO_CONTEXT)  # not a copy of the request's context (its headers)
    emit(ACKNOWLEDGED, {"_meta": {SUBSCRIPTION_ID: subscription_id}, "notifications": agreed})
    return done


_NO_URIS: frozenset[str] = frozenset()
#: The context `listen`'s clean-up runs in: it reads no context variable.
_NO_CONTEXT = contextvars.Context()


class Mailbox:
    """One open subscription: the events it wants and has not sent yet (at most `QUEUE_LIMIT`, the oldest dropped).

    An idle subscription holds this object, its two filters, its ``emit`` and
    its future only: the queue is made on the first event and let go once it
    is sent. Events are sent by a callback of the loop (`flush`), scheduled
    by the first event after the queue was emptied, in the order they came.
    """

    __slots__ = ("id", "kinds", "uris", "emit", "done", "events", "open_count", "unsubscribe")

    def __init__(
        self,
        subscription_id: RequestId,
        kinds: tuple[str, ...],
        uris: frozenset[str],
        emit: Callable[[str, dict[str, Any]], None],
        done: asyncio.Future[dict[str, Any]],
        open_count: list[int],
    ) -> None:
        self.id = subscription_id
        self.kinds = kinds
        self.uris = uris
        self.emit = emit
        self.done = done
        self.events: deque[Event] | None = None
        self.open_count = open_count  # the server's open subscriptions, counted in place
        self.unsubscribe: Callable[[], None] | None = None  # from the bus, once subscribed

    def ended(self, _: asyncio.Future[dict[str, Any]]) -> None:
        """The subscription is over (completed, or cancelled): it leaves the bus and the count."""
        self.open_count[0] -= 1
        self.events = None
        unsubscribe, self.unsubscribe = self.unsubscribe, None
        if unsubscribe is not None:
            unsubscribe()

    def deliver(self, event: Event) -> None:
        """The bus's callback: keep ``event`` when this subscription wants it, and schedule its sending."""
        if event is not None:
            kind, uri = event
            if not (kind in self.kinds or (kind == "updated" and uri in self.uris)):
                return
        if self.done.done():
            return
        events = self.events
        if events is None:
            events = self.events = deque(maxlen=QUEUE_LIMIT)  # a listener that does not keep up loses the oldest
            self.done.get_loop().call_soon(self.flush)
        events.append(event)

    def flush(self) -> None:
        """Emit the events queued, in order; the ``None`` event (the server closes it) completes the subscription."""
        events, self.events = self.events, None
        done = self.done
        while events and not done.done():
            event = events.popleft()
            meta = {SUBSCRIPTION_ID: self.id}
            if event is None:
                done.set_result({"resultType": "complete", "_meta": meta})
                return
            kind, uri = event
            if kind == "updated":
                self.emit(UPDATED, {"_meta": meta, "uri": uri})
            else:
                self.emit(_LIST_CHANGED[kind][1], {"_meta": meta})
