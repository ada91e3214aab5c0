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

from typing import TYPE_CHECKING, Any, Callable

from ..backends import ChangeBus, Event, LocalBus
from ..jsonrpc import InvalidParams, RequestId
from ..protocol.meta import SUBSCRIPTION_ID
from ._reply import ServerBusy
from ._settings import DEFAULT_MAX_SUBSCRIPTIONS

if TYPE_CHECKING:
    import asyncio

__all__ = ["ChangeBus", "LocalBus", "Event", "listen", "DEFAULT_MAX_SUBSCRIPTIONS", "parse_filter"]

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
    honoured: set[str],
    bus: ChangeBus,
    emit: Callable[[str, dict[str, Any]], None],
    open_count: list[int],
    limit: int,
) -> dict[str, Any]:
    """Serve one subscription until the server closes it (or the task is cancelled)."""
    import asyncio  # imported by then: on first use, not at start-up
    if open_count[0] >= limit:
        raise ServerBusy(f"Server busy: {open_count[0]} subscriptions are open, the most this server keeps ({limit}); retry later")
    agreed: dict[str, Any] = {}
    kinds: set[str] = set()
    for kind, (flag, _) in _LIST_CHANGED.items():
        if wanted.get(flag) is True and kind in honoured:
            agreed[flag] = True
            kinds.add(kind)
    uris: set[str] = set()
    if wanted.get("resourceSubscriptions") and "updated" in honoured:
        agreed["resourceSubscriptions"] = list(wanted["resourceSubscriptions"])
        uris = set(agreed["resourceSubscriptions"])
    meta = {SUBSCRIPTION_ID: subscription_id}
    queue: asyncio.Queue[Event] = asyncio.Queue(QUEUE_LIMIT)

    def deliver(event: Event) -> None:
        if event is not None:
            kind, uri = event
            if not (kind in kinds or (kind == "updated" and uri in uris)):
                return
        if queue.full():  # a listener that does not keep up loses the oldest event
            queue.get_nowait()
        queue.put_nowait(event)

    unsubscribe = bus.subscribe(deliver)
    open_count[0] += 1
    try:
        emit(ACKNOWLEDGED, {"_meta": meta, "notifications": agreed})
        while True:
            event = await queue.get()
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


