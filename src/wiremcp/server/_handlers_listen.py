"""The handler of ``subscriptions/listen``: a stream of change events (the rules are `_subscriptions`').

Rules kept here, around `_subscriptions.listen`:

* the filter is checked first (-32602 when malformed); the server honours
  tools, prompts and resources list changes and resource updates;
* a server with tasks may be asked for ``taskIds`` too: the acknowledgement
  then names the ids agreed (the caller's own, `Tasks.agreed_ids`), and those
  tasks' status changes join the stream until it ends (docs/tasks.md);
* the open streams of the server are counted here, against the server's
  ``max_subscriptions``;
* without an event sink (a transport that cannot stream) events are dropped.

`_subscriptions` (and its imports) load on the first ``subscriptions/listen``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable

from ..jsonrpc import Request
from ..protocol.meta import RequestMeta
from ._context import Emit

if TYPE_CHECKING:
    from ._server import Server

__all__ = ["Listening"]

#: The kinds of change events the server honours.
HONOURED = frozenset({"tools", "prompts", "resources", "updated"})


class Listening:
    """``subscriptions/listen`` for one server, and the count of its open streams."""

    __slots__ = ("server", "open")

    def __init__(self, server: Server) -> None:
        self.server = server
        #: The open streams, in a list so that `_subscriptions.listen` counts them in place.
        self.open = [0]

    def listen(self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None) -> Awaitable[dict[str, Any]]:
        from ._subscriptions import listen, parse_filter

        wanted = parse_filter(params)
        server = self.server
        honoured = HONOURED
        if server.tasks is not None:
            task_ids = server.tasks.listen_filter(wanted, meta)
            if task_ids is not None:
                return self._listen_tasks(request, wanted, honoured, task_ids, meta, emit or _drop)
        return listen(request.id, wanted, honoured, server.bus, emit or _drop, self.open, server.max_subscriptions)

    async def _listen_tasks(
        self, request: Request, wanted: dict[str, Any], honoured: frozenset[str], task_ids: list[str], meta: RequestMeta, emit: Emit
    ) -> dict[str, Any]:
        """``subscriptions/listen`` with ``taskIds``: the acknowledgement names the ids agreed (tasks.md)."""
        from ._subscriptions import listen

        server = self.server
        tasks = server.tasks
        assert tasks is not None
        agreed = await tasks.agreed_ids(task_ids, meta)

        def acknowledging(method: str, params: dict[str, Any]) -> None:
            if method == "notifications/subscriptions/acknowledged":
                params = {**params, "notifications": {**params.get("notifications", {}), "taskIds": agreed}}
            emit(method, params)

        stop = tasks.task_emitter(agreed, request.id, emit)
        try:
            return await listen(request.id, wanted, honoured, server.bus, acknowledging, self.open, server.max_subscriptions)
        finally:
            stop()


def _drop(method: str, params: dict[str, Any]) -> None:
    return None
