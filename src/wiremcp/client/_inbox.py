"""`Inbox`: where `ClientProtocol` routes what arrives, to the request, subscription or callback it concerns.

Rules it keeps (the module docstring of `_protocol` states them whole):

* **replies** are matched by id (`PendingRequests.resolve`); a reply to an
  id never sent, or a second reply, is logged and dropped, and so is one to
  a request cancelled or timed out; an error without an id on a request's
  own response stream (HTTP), or with an id of no request in flight that
  came with an HTTP error status, answers that request;
* **progress** goes to the request its ``progressToken`` names if it asked
  for progress, else to the 2025-11-25 task call that kept the token;
  **log messages** to the request whose stream carried them, else to the
  one request in flight that asked for logs, else to nobody in particular;
* **task status notifications** are checked (a malformed one is logged and
  dropped), handed out as `TaskUpdate`, then routed as any notification;
* **subscriptions**: a notification whose ``_meta`` names a subscription id
  (or that arrived on its stream) goes to it; the acknowledgment opens it;
  anything before that is logged and dropped; ``notifications/cancelled``
  naming it ends it;
* everything else is `Notified`, after list_changed and resources/updated
  notifications made the cached results stale.

The routing state is this class's own: the requests that asked for logs,
the open subscriptions, and the progress tokens 2025-11-25 tasks keep.
"""

from __future__ import annotations

import logging
from typing import Any, Generic, TypeVar

from ..jsonrpc import ErrorResponse, Notification, PendingRequests, RemoteProtocolError, Response
from ..protocol import Era, methods
from ..protocol.meta import SUBSCRIPTION_ID
from ._cache import ResultCache
from ._errors import ProtocolViolation, RemoteError
from ._tasks import LEGACY_TASK_NOTIFICATION, TASK_NOTIFICATION, TERMINAL, parse_task
from .events import (
    Acknowledged,
    Event,
    Failed,
    Id,
    LogMessage,
    Notified,
    Progress,
    Settled,
    SubscriptionEnded,
    SubscriptionNote,
    TaskUpdate,
)

__all__ = ["Entry", "Inbox", "as_id"]

log = logging.getLogger("wiremcp.client")

_ACKNOWLEDGED = "notifications/subscriptions/acknowledged"

T = TypeVar("T")
Events = list[Event[T]]


def as_id(value: Any) -> Id | None:
    """``value`` when it can be an MCP request id (a string or an integer, never a bool), else ``None``."""
    t = type(value)
    return value if t is str or t is int else None


class Entry(Generic[T]):
    """What the protocol keeps about one request in flight."""

    __slots__ = ("tag", "progress", "logs", "cancel_on_timeout", "subscription", "acked")

    def __init__(self, tag: T, progress: bool, logs: bool, cancel_on_timeout: bool, subscription: bool) -> None:
        self.tag = tag
        self.progress = progress
        self.logs = logs
        self.cancel_on_timeout = cancel_on_timeout
        self.subscription = subscription
        self.acked = False


class Inbox(Generic[T]):
    """The routing of replies and notifications; `ClientProtocol` is the whole protocol on top."""

    # The state of the protocol the routing reads (set by `ClientProtocol.__init__`).
    cache: ResultCache
    era: Era | None

    def __init__(self) -> None:
        self._pending: PendingRequests[Entry[T]] = PendingRequests()
        self._log_calls: set[Id] = set()
        self._subscriptions: dict[Id, Entry[T]] = {}
        #: 2025-11-25 tasks whose call asked for progress: its progressToken -> (task id, the call's entry).
        self._task_progress: dict[Id, tuple[str, Entry[T]]] = {}

    def _drop_task_progress(self, task_id: str) -> None:
        if self._task_progress:
            for token in [t for t, (tid, _) in self._task_progress.items() if tid == task_id]:
                del self._task_progress[token]

    def _settled(self, id: Id) -> None:
        self._log_calls.discard(id)
        self._subscriptions.pop(id, None)

    def _reply(self, msg: Response | ErrorResponse, status: int | None, origin: Id | None) -> Events[T]:
        if msg.id is None or (status is not None and type(msg) is ErrorResponse and msg.id not in self._pending):
            if origin is not None and origin in self._pending and type(msg) is ErrorResponse:
                # An error without an id on a request's own response stream (HTTP) answers that request;
                # so does one with an id of no request in flight that came with an HTTP error status:
                # the server refused that POST as a whole (official mcp 1.x answers a POST without a
                # session with 400 and id "server-error"), and the request must not wait for another.
                msg = ErrorResponse(origin, msg.error)
            else:
                self._unmatched(msg)
                return []
        try:
            entry = self._pending.resolve(msg)
        except RemoteProtocolError:
            self._unmatched(msg)
            return []
        if entry is None:
            log.warning("dropped the reply to request %r: it came after the request was cancelled or timed out", msg.id)
            return []
        context = entry.context
        if context.logs or context.subscription:
            self._settled(entry.id)
        if type(msg) is Response:
            if context.progress and self.era is Era.LEGACY and entry.method == methods.TOOLS_CALL:
                self._keep_task_progress(entry.id, context, msg.result)
            return [Settled(context.tag, msg.result)]
        return [Failed(context.tag, RemoteError(msg.error, entry.method, http_status=status))]  # type: ignore[union-attr]  # an ErrorResponse here

    def _keep_task_progress(self, token: Id, context: Entry[T], result: Any) -> None:
        """A 2025-11-25 ``CreateTaskResult``: its call's progressToken stays valid for the task's life (tasks.mdx)."""
        task = result.get("task") if type(result) is dict else None
        if type(task) is not dict:
            return
        task_id = task.get("taskId")
        if type(task_id) is str and task.get("status") not in TERMINAL:
            self._task_progress[token] = (task_id, context)

    @staticmethod
    def _unmatched(msg: Response | ErrorResponse) -> None:
        if type(msg) is ErrorResponse:
            log.warning("the server reported an error for no request in flight (id %r): %s", msg.id, msg.message)
        else:
            log.warning("ignored a reply for id %r, which is not in flight", msg.id)

    def _notification(self, note: Notification, origin: Id | None) -> Events[T]:
        method = note.method
        params: dict[str, Any] = note.params if type(note.params) is dict else {}
        if method == methods.PROGRESS:
            token = as_id(params.get("progressToken"))
            entry = self._pending.get(token) if token is not None else None
            if entry is not None and entry.context.progress:
                return [Progress(entry.context.tag, params.get("progress"), params.get("total"), params.get("message"))]
            kept = self._task_progress.get(token) if token is not None else None
            if kept is not None:  # the progress of a 2025-11-25 task, to the call that made it
                return [Progress(kept[1].tag, params.get("progress"), params.get("total"), params.get("message"))]
            log.debug("progress for unknown token %r dropped", token)
            return []
        if method == methods.MESSAGE:
            return [LogMessage(self._log_target(origin), params)]
        if method == TASK_NOTIFICATION or method == LEGACY_TASK_NOTIFICATION:
            return self._task_notification(note, params, origin)
        self.cache.notified(method, params)
        subscriptions = self._subscriptions
        if subscriptions:
            if method == methods.CANCELLED:
                target = as_id(params.get("requestId"))
                if target is not None and target in subscriptions:
                    # The server tore the subscription down (cancellation.mdx): nothing to cancel on our side.
                    ended = subscriptions.pop(target)
                    self._pending.abandon(target, "cancelled by the server")
                    return [SubscriptionEnded(ended.tag, None)]
            meta = params.get("_meta")
            sub_id = as_id(meta.get(SUBSCRIPTION_ID)) if type(meta) is dict else None
            if sub_id is None and origin is not None and origin in subscriptions:
                sub_id = origin
            sub = subscriptions.get(sub_id) if sub_id is not None else None
            if sub is not None:
                return self._deliver(sub, sub_id, method, params)
        return [Notified(note)]

    def _task_notification(self, note: Notification, params: dict[str, Any], origin: Id | None) -> Events[T]:
        """tasks.md, "Task Status Notifications"; tasks.mdx, "Task Status Notification"."""
        try:
            task = parse_task(params, legacy=note.method == LEGACY_TASK_NOTIFICATION, where=note.method)
        except ProtocolViolation as exc:
            log.warning("ignored a malformed task status notification: %s", exc)
            return []
        if task.terminal:
            self._drop_task_progress(task.id)
        out: Events[T] = [TaskUpdate(task)]
        if self._subscriptions:
            meta = params.get("_meta")
            sub_id = as_id(meta.get(SUBSCRIPTION_ID)) if type(meta) is dict else None
            if sub_id is None and origin is not None and origin in self._subscriptions:
                sub_id = origin
            sub = self._subscriptions.get(sub_id) if sub_id is not None else None
            if sub is not None:
                out.extend(self._deliver(sub, sub_id, note.method, params))
                return out
        out.append(Notified(note))
        return out

    @staticmethod
    def _deliver(sub: Entry[T], id: Any, method: str, params: dict[str, Any]) -> Events[T]:
        if method == _ACKNOWLEDGED:
            sub.acked = True
            notes = params.get("notifications")
            return [Acknowledged(sub.tag, notes if type(notes) is dict else {})]
        if not sub.acked:
            log.warning("subscription %r: %s arrived before the acknowledgment; dropped", id, method)
            return []
        return [SubscriptionNote(sub.tag, method, params)]

    def _log_target(self, origin: Id | None) -> T | None:
        if origin is not None:
            entry = self._pending.get(origin)
        elif len(self._log_calls) == 1:
            (only,) = self._log_calls
            entry = self._pending.get(only)
        else:
            return None
        return entry.context.tag if entry is not None and entry.context.logs else None
