"""What the `ClientProtocol` asks its I/O layer to do: plain, immutable events.

Every method of the protocol that takes input (a received message, a
deadline passing, a cancellation, the connection ending) returns a list of
these, in the order they must be acted on. ``tag`` is the opaque handle the
I/O layer attached to a request when it sent it (an asyncio future, a test's
string); the protocol never looks inside it.

* `Send`: write these bytes (a notification or a reply to the server).
* `Abandon`: stop receiving for request ``id`` (HTTP: close its stream).
* `Settled` / `Failed`: the request tagged ``tag`` is done.
* `Progress` / `LogMessage`: a request-scoped notification for ``tag``
  (``LogMessage.tag`` is ``None`` when no single request claims it).
* `Acknowledged` / `SubscriptionNote` / `SubscriptionEnded`: a
  ``subscriptions/listen`` stream's life.
* `Notified`: a notification nothing else claimed.
* `ServerRequest`: a legacy server asks for input; answer it with
  `ClientProtocol.answer` or `ClientProtocol.answer_error`.
* `TaskUpdate`: a task status notification (``notifications/tasks`` or the
  2025-11-25 ``notifications/tasks/status``), checked and read into a
  `TaskState` for whoever follows that task.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ..jsonrpc import Notification

if TYPE_CHECKING:
    from ._tasks import TaskState

__all__ = [
    "Event",
    "Send",
    "Abandon",
    "Settled",
    "Failed",
    "Progress",
    "LogMessage",
    "Acknowledged",
    "SubscriptionNote",
    "SubscriptionEnded",
    "Notified",
    "ServerRequest",
    "TaskUpdate",
]

T = TypeVar("T")
#: A request id as MCP allows it (a string or an integer).
Id = str | int


@dataclass(frozen=True, slots=True)
class Send:
    """Bytes for the transport to send: one encoded envelope."""

    data: bytes


@dataclass(frozen=True, slots=True)
class Abandon:
    """The request ``id`` is given up (timeout or cancellation): the transport may stop waiting for its reply."""

    id: Id


@dataclass(frozen=True, slots=True)
class Settled(Generic[T]):
    """The request tagged ``tag`` completed with ``result``."""

    tag: T
    result: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Failed(Generic[T]):
    """The request tagged ``tag`` failed with ``error`` (an error reply or a local failure)."""

    tag: T
    error: BaseException


@dataclass(frozen=True, slots=True)
class Progress(Generic[T]):
    """A progress notification for the request tagged ``tag``."""

    tag: T
    progress: Any
    total: Any
    message: Any


@dataclass(frozen=True, slots=True)
class LogMessage(Generic[T]):
    """A log message, for the request tagged ``tag`` or (``tag`` None) for none in particular."""

    tag: T | None
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Acknowledged(Generic[T]):
    """The server acknowledged the subscription tagged ``tag``: the notifications it will send."""

    tag: T
    notifications: dict[str, Any]


@dataclass(frozen=True, slots=True)
class SubscriptionNote(Generic[T]):
    """A notification ``method`` delivered on the subscription tagged ``tag``."""

    tag: T
    method: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class SubscriptionEnded(Generic[T]):
    """The subscription tagged ``tag`` ended, with the error that ended it or None."""

    tag: T
    error: BaseException | None


@dataclass(frozen=True, slots=True)
class Notified:
    """A notification that no request or subscription claims."""

    notification: Notification


@dataclass(frozen=True, slots=True)
class ServerRequest:
    """A request from the server (``kind``: elicitation, sampling or roots) that the client must answer."""

    id: Id
    method: str
    kind: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class TaskUpdate:
    task: TaskState


Event = (
    Send
    | Abandon
    | Settled[T]
    | Failed[T]
    | Progress[T]
    | LogMessage[T]
    | Acknowledged[T]
    | SubscriptionNote[T]
    | SubscriptionEnded[T]
    | Notified
    | ServerRequest
    | TaskUpdate
)
