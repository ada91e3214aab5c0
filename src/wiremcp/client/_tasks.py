"""Tasks from the client's side, without I/O: the shapes, the checks and the steps of following one task.

Two wires carry tasks, and this module reads both into one `TaskState`:

* the **tasks extension** (``io.modelcontextprotocol/tasks``, SEP-2663) of
  2026-07-28 servers: the client declares the extension in its per-request
  capabilities; the server alone decides to answer a ``tools/call`` with a
  ``CreateTaskResult`` (``resultType: "task"``, the task's fields flat in
  the result); ``tasks/get`` returns a ``DetailedTask`` that inlines
  ``result``, ``error`` or ``inputRequests``; input is answered with
  ``tasks/update``; ``tasks/cancel`` is an empty acknowledgement; status
  comes as ``notifications/tasks`` on a ``subscriptions/listen`` stream
  that asked for ``taskIds``. Durations are ``ttlMs`` and ``pollIntervalMs``.
* the **experimental tasks of 2025-11-25** (basic/utilities/tasks.mdx): the
  requestor augments the request with ``params.task`` (only where the
  server declared ``tasks.requests.tools.call`` and the tool's
  ``execution.taskSupport`` is ``optional`` or ``required``); the
  ``CreateTaskResult`` nests the task under ``task``; the result comes from
  ``tasks/result``, which blocks while the task runs and is where the
  server asks for input (as ordinary server requests tagged with
  ``io.modelcontextprotocol/related-task``); ``tasks/list`` exists;
  ``tasks/cancel`` returns the task; status comes unasked as
  ``notifications/tasks/status`` and must not be relied on. Durations are
  ``ttl`` and ``pollInterval``.

Rules it keeps:

* A ``CreateTaskResult`` is accepted only where the client asked for one:
  in the modern era when it declared the extension and only for
  ``tools/call`` (any other request answered with a task is an invalid
  response, tasks.md "Capability Negotiation"); in the legacy era only for a
  request it augmented. Anything else is a `ProtocolViolation`.
* Every task object is checked: ``taskId`` a non-empty string, ``status``
  one of the five, ``createdAt``/``lastUpdatedAt`` strings, the TTL an
  integer or ``null``, the poll interval a positive integer when present;
  an ``input_required`` modern task carries ``inputRequests`` (an object
  of request objects), a ``completed`` one ``result`` (an object), a
  ``failed`` one ``error`` (an object with an integer ``code``).
* `TaskFollower` decides what to do after each observation: wait (at the
  server's ``pollIntervalMs``, backing off by `BACKOFF` while nothing
  changes, never past ``max(interval, max_interval)``, and back to the
  server's interval when something does); answer the input requests whose
  keys it has not answered yet (a key is answered once: tasks.md asks the
  client to de-duplicate across polls); fetch the result (legacy:
  ``tasks/result``, also when input is required, since that is where a
  2025-11-25 server sends its requests); or stop at a terminal status.
  Input requests the client did not declare a capability for are refused
  before any callback runs (the same rule as MRTR).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Mapping

from ..protocol import methods
from ._errors import ClientError, ProtocolViolation
from ._mrtr import INPUT_METHODS, InputRequest, undeclared

__all__ = [
    "TASKS_EXTENSION",
    "TASKS_GET",
    "TASKS_UPDATE",
    "TASKS_CANCEL",
    "TASKS_RESULT",
    "TASKS_LIST",
    "TASK_NOTIFICATION",
    "LEGACY_TASK_NOTIFICATION",
    "RELATED_TASK",
    "STATUSES",
    "TERMINAL",
    "TASK_METHODS",
    "DEFAULT_POLL_INTERVAL",
    "DEFAULT_MAX_POLL_INTERVAL",
    "BACKOFF",
    "TaskState",
    "TaskCancelled",
    "parse_task",
    "created_task",
    "legacy_task_support",
    "augment",
    "TaskFollower",
    "Wait",
    "Answer",
    "Fetch",
    "Finished",
    "Step",
]

#: The extension's identifier (tasks.md, "Extension Identifier").
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
TASKS_GET = "tasks/get"
TASKS_UPDATE = "tasks/update"
TASKS_CANCEL = "tasks/cancel"
#: 2025-11-25 only.
TASKS_RESULT = "tasks/result"
#: 2025-11-25 only (the extension has no tasks/list: tasks.md, "Security Considerations").
TASKS_LIST = "tasks/list"
TASK_NOTIFICATION = "notifications/tasks"
LEGACY_TASK_NOTIFICATION = "notifications/tasks/status"
#: The 2025-11-25 ``_meta`` key tying a message to a task.
RELATED_TASK = "io.modelcontextprotocol/related-task"

STATUSES = frozenset({"working", "input_required", "completed", "failed", "cancelled"})
TERMINAL = frozenset({"completed", "failed", "cancelled"})
#: The requests a server may answer with a task (tasks.md, "Supported Methods").
TASK_METHODS = frozenset({methods.TOOLS_CALL})

#: Seconds between polls when the server suggests no interval.
DEFAULT_POLL_INTERVAL = 1.0
#: Seconds the back-off grows to at most (unless the server's own interval is longer).
DEFAULT_MAX_POLL_INTERVAL = 5.0
#: Factor the wait grows by after each poll that saw no change.
BACKOFF = 1.5

Status = Literal["working", "input_required", "completed", "failed", "cancelled"]


class TaskCancelled(ClientError):
    """The task ended ``cancelled``: it has no result. ``task`` is its last state."""

    def __init__(self, task: TaskState) -> None:
        message = f"task {task.id} was cancelled"
        if task.status_message:
            message += f": {task.status_message}"
        super().__init__(message)
        self.task = task


@dataclass(frozen=True, slots=True)
class TaskState:
    """One observation of a task, from either wire; ``raw`` is the task object as received.

    ``result``, ``error`` and ``input_requests`` are set only where the
    modern ``DetailedTask`` inlines them (a 2025-11-25 result comes from
    ``tasks/result`` instead).
    """

    id: str
    status: str
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    poll_interval_ms: int | None = None
    status_message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def terminal(self) -> bool:
        """``completed``, ``failed`` or ``cancelled``: the task will not change again."""
        return self.status in TERMINAL

    def same_as(self, other: TaskState | None) -> bool:
        """Whether ``other`` shows nothing new: same status, message, update time and pending input."""
        return (
            other is not None
            and other.status == self.status
            and other.status_message == self.status_message
            and other.last_updated_at == self.last_updated_at
            and other.input_requests == self.input_requests
        )


def _bad(where: str, what: str) -> ProtocolViolation:
    return ProtocolViolation(f"{where}: {what}")


def parse_task(raw: Any, *, legacy: bool, where: str = "task") -> TaskState:
    """A `TaskState` from a task object (``legacy``: 2025-11-25 field names), or `ProtocolViolation`."""
    if type(raw) is not dict:
        raise _bad(where, "the task is not an object")
    task_id = raw.get("taskId")
    if type(task_id) is not str or not task_id:
        raise _bad(where, "taskId must be a non-empty string")
    status = raw.get("status")
    if status not in STATUSES:
        raise _bad(where, f"status {status!r} is not one of {', '.join(sorted(STATUSES))}")
    created, updated = raw.get("createdAt"), raw.get("lastUpdatedAt")
    if type(created) is not str or type(updated) is not str:
        raise _bad(where, "createdAt and lastUpdatedAt must be ISO 8601 strings")
    ttl_key, poll_key = ("ttl", "pollInterval") if legacy else ("ttlMs", "pollIntervalMs")
    ttl = raw.get(ttl_key)
    if ttl is not None and (type(ttl) is not int or ttl < 0):
        raise _bad(where, f"{ttl_key} must be a non-negative integer or null")
    poll = raw.get(poll_key)
    if poll is not None and (type(poll) is not int or poll <= 0):
        raise _bad(where, f"{poll_key} must be a positive integer")
    message = raw.get("statusMessage")
    if message is not None and type(message) is not str:
        raise _bad(where, "statusMessage must be a string")
    result = error = requests = None
    if not legacy:
        if status == "completed":
            result = raw.get("result")
            if type(result) is not dict:
                raise _bad(where, "a completed task must carry result, an object")
        elif status == "failed":
            error = raw.get("error")
            if type(error) is not dict or type(error.get("code")) is not int:
                raise _bad(where, "a failed task must carry error, a JSON-RPC error object")
        elif status == "input_required":
            requests = raw.get("inputRequests")
            if type(requests) is not dict:
                raise _bad(where, "an input_required task must carry inputRequests, an object")
            for key, ask in requests.items():
                if type(ask) is not dict or type(ask.get("method")) is not str:
                    raise _bad(where, f"inputRequests[{key!r}] is not a request object")
    return TaskState(task_id, status, created, updated, ttl, poll, message, result, error, requests, raw)


def created_task(method: str, result: dict[str, Any], *, legacy: bool, declared: bool, augmented: bool) -> TaskState | None:
    """The task a result creates, ``None`` for an ordinary result; `ProtocolViolation` where none may come.

    ``declared``: this request carried the extension (modern); ``augmented``:
    it carried ``params.task`` (legacy).
    """
    if legacy:
        if not augmented:
            return None
        if "task" not in result:
            return None  # the server ran it as an ordinary request (it may: tasks.mdx, Task Support and Handling)
        return parse_task(result["task"], legacy=True, where=f"the CreateTaskResult of {method}")
    if result.get("resultType") != "task":
        return None
    if not declared:
        raise ProtocolViolation(
            f"{method} returned a task (resultType 'task') to a request that did not declare {TASKS_EXTENSION}"
        )
    if method not in TASK_METHODS:
        raise ProtocolViolation(f"{method} returned a task, but only {', '.join(sorted(TASK_METHODS))} may (tasks.md)")
    return parse_task(result, legacy=False, where=f"the CreateTaskResult of {method}")


def legacy_task_support(server_capabilities: Mapping[str, Any], tool: Mapping[str, Any] | None) -> str:
    """``"required"``, ``"optional"`` or ``"forbidden"``: may a 2025-11-25 ``tools/call`` of ``tool`` be a task?

    tasks.mdx, "Tool-Level Negotiation": without ``tasks.requests.tools.call``
    in the server's capabilities, never; else the tool's
    ``execution.taskSupport``, ``forbidden`` when absent or unknown.
    """
    tasks = server_capabilities.get("tasks")
    requests = tasks.get("requests") if type(tasks) is dict else None
    tools = requests.get("tools") if type(requests) is dict else None
    if type(tools) is not dict or "call" not in tools:
        return "forbidden"
    execution = tool.get("execution") if tool is not None else None
    support = execution.get("taskSupport") if type(execution) is dict else None
    return support if support in ("required", "optional") else "forbidden"


def augment(params: Mapping[str, Any], ttl_ms: int | None) -> dict[str, Any]:
    """``params`` with the 2025-11-25 task augmentation (``params.task``, with ``ttl`` when given)."""
    return {**params, "task": {} if ttl_ms is None else {"ttl": ttl_ms}}


# -- following one task ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Wait:
    """Poll again (``tasks/get``) after ``seconds``, or sooner if a status notification comes."""

    seconds: float


@dataclass(frozen=True, slots=True)
class Answer:
    """Answer these input requests (the callbacks), then `TaskFollower.update_params` for ``tasks/update``."""

    requests: tuple[InputRequest, ...]


@dataclass(frozen=True, slots=True)
class Fetch:
    """Legacy: send ``tasks/result`` (it blocks until the task ends; the server asks for input meanwhile)."""


@dataclass(frozen=True, slots=True)
class Finished:
    """The task is terminal; ``task`` holds its end (modern: with the result or error inlined)."""

    task: TaskState


Step = Wait | Answer | Fetch | Finished


class TaskFollower:
    """One task followed to its end: feed it each observation (`observe`), act on `next_step`."""

    __slots__ = ("task_id", "legacy", "declared", "max_interval", "task", "answered", "_unchanged")

    def __init__(
        self,
        task_id: str,
        *,
        legacy: bool,
        declared: frozenset[str] = frozenset(),
        max_interval: float = DEFAULT_MAX_POLL_INTERVAL,
    ) -> None:
        self.task_id = task_id
        self.legacy = legacy
        #: The input kinds (``elicitation``, ``sampling``, ``roots``) the client can answer.
        self.declared = declared
        self.max_interval = max_interval
        #: The latest observation, ``None`` before the first.
        self.task: TaskState | None = None
        #: Input request keys already answered (tasks.md: never answer a key twice).
        self.answered: set[str] = set()
        self._unchanged = 0

    def observe(self, task: TaskState) -> bool:
        """Take a ``tasks/get`` result or a status notification; ``True`` if it shows something new.

        A terminal task stays terminal: a later observation of another status
        (an out-of-order notification) is ignored.
        """
        if task.id != self.task_id:
            raise ProtocolViolation(f"expected task {self.task_id}, the server described task {task.id}")
        previous = self.task
        if previous is not None and previous.terminal:
            return False
        if task.same_as(previous):
            self._unchanged += 1
            return False
        self._unchanged = 0
        self.task = task
        return True

    def interval(self) -> float:
        """Seconds to wait before the next poll: the server's interval, backed off while nothing changes."""
        task = self.task
        base = DEFAULT_POLL_INTERVAL if task is None or task.poll_interval_ms is None else task.poll_interval_ms / 1000
        return float(min(base * BACKOFF**self._unchanged, max(base, self.max_interval)))

    def next_step(self) -> Step:
        task = self.task
        if task is None:
            return Wait(0.0)
        status = task.status
        if self.legacy:
            if status == "cancelled":
                return Finished(task)
            if status in TERMINAL or status == "input_required":
                return Fetch()
            return Wait(self.interval())
        if status in TERMINAL:
            return Finished(task)
        if status == "input_required" and task.input_requests:
            fresh = []
            for key, ask in task.input_requests.items():
                if key in self.answered:
                    continue
                kind = INPUT_METHODS.get(ask["method"])
                if kind is None or kind not in self.declared:
                    raise undeclared(ask["method"], kind)
                params = ask.get("params")
                fresh.append(InputRequest(key, ask["method"], kind, params if type(params) is dict else {}))
            if fresh:
                return Answer(tuple(fresh))
        return Wait(self.interval())

    def update_params(self, responses: Mapping[str, Any]) -> dict[str, Any]:
        """The params of ``tasks/update`` carrying ``responses``; their keys count as answered from now on."""
        self.answered.update(responses)
        return {"taskId": self.task_id, "inputResponses": dict(responses)}

    def fetched(self, result: dict[str, Any]) -> dict[str, Any]:
        """Legacy: the ``tasks/result`` result is the request's own result; it must not be a task again."""
        if "task" in result and "content" not in result:
            raise ProtocolViolation(f"tasks/result for task {self.task_id} returned a task, not the request's result")
        return result
