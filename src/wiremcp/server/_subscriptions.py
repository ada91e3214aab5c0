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


async def listen(
    subscription_id: RequestId,
    wanted: dict[str, Any],
    honoured: Collection[str],
    bus: ChangeBus,
    emit: Callable[[str, dict[str, Any]], None],
    open_count: list[int],
    limit: int,
) -> dict[str, Any]:
    """Serve one subscription until the server closes it (or the task is cancelled)."""
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
    box = Mailbox(tuple(kinds), uris)
    unsubscribe = bus.subscribe(box.deliver)
    open_count[0] += 1
    try:
        emit(ACKNOWLEDGED, {"_meta": {SUBSCRIPTION_ID: subscription_id}, "notifications": agreed})
        del agreed, wanted  # an idle stream keeps its mailbox only
        while True:
            event = await box.get()
            meta = {SUBSCRIPTION_ID: subscription_id}
            if event is None:
                return {"resultType": "complete", "_meta": meta}
            kind, uri = event
            if kind == "updated":
                emit(UPDATED, {"_meta": meta, "uri": uri})
            else:
                emit(_LIST_CHANGED[kind][1], {"_meta": meta})
    finally:
        open_count[0] -= 1
        unsubscribe()


_NO_URIS: frozenset[str] = frozenset()


class Mailbox:
    """The events one subscription wants and has not sent yet: at most `QUEUE_LIMIT`, the oldest dropped.

    An idle subscription holds this object and its two filters only: the queue
    is made on the first event and let go once it is empty, and a future
    exists only while the stream waits (not an ``asyncio.Queue``: its three
    deques and its event cost about 3 KiB per open stream).
    """

    __slots__ = ("kinds", "uris", "events", "waiter")

    def __init__(self, kinds: tuple[str, ...], uris: frozenset[str]) -> None:
        self.kinds = kinds
        self.uris = uris
        self.events: deque[Event] | None = None
        self.waiter: asyncio.Future[None] | None = None

    def deliver(self, event: Event) -> None:
        """The bus's callback: keep ``event`` when this subscription wants it, and wake the stream."""
        if event is not None:
            kind, uri = event
            if not (kind in self.kinds or (kind == "updated" and uri in self.uris)):
                return
        events = self.events
        if events is None:
            events = self.events = deque(maxlen=QUEUE_LIMIT)  # a listener that does not keep up loses the oldest
        events.append(event)
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def get(self) -> Event:
        """The next event, waiting for one."""
        while not self.events:
            import asyncio  # imported by then: on first use, not at start-up

            waiter = self.waiter = asyncio.get_running_loop().create_future()
            try:
                await waiter
            finally:
                self.waiter = None
        events = self.events
        event = events.popleft()
        if not events:
            self.events = None
        return event
