"""The task store: where tasks live, so that a task outlives the request that made it.

A `TaskStore` is a small async interface. The server needs nothing else from
it, so a deployment picks one (memory for tests, SQLite embedded, Redis for
several workers) without touching the handlers:

==================  =========================================================
method              contract
==================  =========================================================
``create``          store a new record; when it returns, ``get`` finds it
                    (tasks.md: a ``CreateTaskResult`` MUST NOT be sent before
                    the task is durably created). A duplicate id is an error.
``get``             the record, or None; a copy: changing its fields or input
                    maps changes nothing (``result`` and ``error`` are
                    treated as immutable by everyone).
``set_status``      ``working`` / ``input_required`` (with its outstanding
                    ``input_requests``), **only if the task is not terminal**.
``finish``          the one way into a terminal status (``completed`` with
                    ``result``, ``failed`` with ``error``, ``cancelled``),
                    **atomic: only the first terminal transition wins**, so a
                    cancel racing a completion leaves exactly one outcome.
``ask``             (optional, see below) the worker's questions: atomically
                    add ``requests`` to the outstanding ``input_requests``
                    (those already there stay, answered ones are not put
                    back) and go to ``input_required``, only if the task is
                    not terminal.
``answer``          ``tasks/update``: atomically move the answers to
                    outstanding keys into ``input_responses`` and drop those
                    keys from ``input_requests``; answers to other keys are
                    ignored (tasks.md: SHOULD ignore); when none is left
                    outstanding the status goes back to ``working``.
``take_responses``  the worker's side: pop the answers given so far.
``renew``           extend the lease of every live task a worker runs.
``list_expired``    ids whose TTL has elapsed at ``now`` (never earlier).
``delete``          forget a task.
``list``            a page of tasks of one owner, oldest first (for the
                    2025-11-25 ``tasks/list``).
``close``           release connections, files.
==================  =========================================================

``ask`` came after the first stores were written, so it is optional: a
store without it is still a `TaskStore`, and `add_input_requests` (what the
runtime calls) falls back to ``get`` then ``set_status`` with the merged
requests. That fallback has a window: an answer given (by another process)
between the two calls is put back as outstanding, shown again, and the task
can stay ``input_required`` after its last question is answered. A store
shared by several processes should implement ``ask`` in one transaction, as
the three built-in stores do (memory, SQLite, and Redis with WATCH/MULTI).

Every mutating method takes ``now`` (POSIX seconds) from the caller, so the
store keeps no clock and a test can drive it with plain numbers. Every
mutating method returns the record as it is afterwards (None: no such task),
so the caller sees whether its transition won. A store that cannot do its
work raises `TaskStoreError` (the server answers -32603 with its message).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal, Protocol, runtime_checkable

__all__ = [
    "TaskRecord",
    "TaskStore",
    "TaskStoreError",
    "TaskStatus",
    "TERMINAL",
    "NON_TERMINAL",
    "record_to_json",
    "record_from_json",
    "add_input_requests",
]

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
#: Statuses a task never leaves (tasks.md, Task Status State Diagram).
TERMINAL = frozenset({"completed", "failed", "cancelled"})
NON_TERMINAL = frozenset({"working", "input_required"})


class TaskStoreError(Exception):
    """The store could not do what was asked (disk full, connection lost, ...): the message says what."""


@dataclasses.dataclass(slots=True)
class TaskRecord:
    """One task as stored. Times are POSIX seconds; ``ttl_ms`` None is unlimited."""

    task_id: str
    status: TaskStatus
    created_at: float
    updated_at: float
    ttl_ms: int | None
    poll_interval_ms: int | None = None
    status_message: str | None = None
    #: The request the task augments (``tools/call``) and its tool, for messages and listings.
    method: str = "tools/call"
    name: str | None = None
    #: ``modern`` (the tasks extension) or ``legacy`` (2025-11-25 experimental tasks).
    era: Literal["modern", "legacy"] = "modern"
    #: Who may see the task: the authenticated caller that made it, or None (no authentication).
    owner: str | None = None
    #: The scopes of its tool, checked on every ``tasks/*`` request (`server._authorization`);
    #: None in a record written before they were kept: no authenticated caller sees it.
    scopes: list[str] | None = None
    #: The worker running the task (``host:pid:boot``) and until when its lease holds.
    worker: str | None = None
    lease_until: float | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    #: Outstanding server-to-client requests by key (status ``input_required``).
    input_requests: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: Answers received by ``tasks/update`` and not yet taken by the worker.
    input_responses: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def terminal(self) -> bool:
        """Whether the status is terminal (``completed``, ``failed``, ``cancelled``): it never changes again."""
        return self.status in TERMINAL

    def expires_at(self) -> float | None:
        """When the TTL elapses (POSIX seconds), or None for unlimited."""
        return None if self.ttl_ms is None else self.created_at + self.ttl_ms / 1000

    def expired(self, now: float) -> bool:
        """Whether the TTL has fully elapsed at ``now``: never before ``created_at + ttl_ms``."""
        end = self.expires_at()
        return end is not None and now >= end

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON-ready dict, for stores that serialise (SQLite, Redis)."""
        return record_to_json(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TaskRecord:
        """The inverse of `to_json`."""
        return record_from_json(data)

    def copy(self) -> TaskRecord:
        """A copy whose fields and input maps are its own; ``result`` and ``error`` are shared, never mutated."""
        return dataclasses.replace(self, input_requests=dict(self.input_requests), input_responses=dict(self.input_responses))


def record_to_json(record: TaskRecord) -> dict[str, Any]:
    """The record as a JSON-ready dict (for stores that serialise)."""
    return dataclasses.asdict(record)


def record_from_json(data: dict[str, Any]) -> TaskRecord:
    """The inverse of `record_to_json` (deep: nested dicts are new objects)."""
    import copy

    return TaskRecord(**copy.deepcopy(data))


@runtime_checkable
class TaskStore(Protocol):
    """Where tasks live; see the module docstring for each method's contract."""

    async def create(self, record: TaskRecord) -> None:
        """Store a new record (``get`` finds it once this returns); TaskStoreError if the id exists."""

    async def get(self, task_id: str) -> TaskRecord | None:
        """A copy of the record of ``task_id``, or None when there is no such task."""

    async def set_status(
        self,
        task_id: str,
        status: Literal["working", "input_required"],
        *,
        now: float,
        message: str | None = None,
        input_requests: dict[str, Any] | None = None,
    ) -> TaskRecord | None:
        """Set ``working`` / ``input_required`` (and ``input_requests``) unless terminal; the record after, or None."""

    async def finish(
        self,
        task_id: str,
        status: Literal["completed", "failed", "cancelled"],
        *,
        now: float,
        message: str | None = None,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
    ) -> TaskRecord | None:
        """Move to a terminal status, only if not terminal yet (the first wins); the record after, or None."""

    async def answer(self, task_id: str, responses: dict[str, Any], *, now: float) -> TaskRecord | None:
        """``tasks/update``: keep the answers to outstanding keys (others ignored); the record after, or None."""

    async def take_responses(self, task_id: str) -> dict[str, Any]:
        """Pop the answers given so far (``{}`` when none, or no such task)."""

    async def renew(self, worker: str, lease_until: float) -> None:
        """Extend to ``lease_until`` the lease of every non-terminal task ``worker`` runs."""

    async def list_expired(self, now: float) -> list[str]:
        """The ids of the tasks whose TTL has fully elapsed at ``now``."""

    async def delete(self, task_id: str) -> None:
        """Forget the task ``task_id`` (nothing happens when there is none)."""

    async def list(self, owner: str | None, *, after: str | None, limit: int) -> list[TaskRecord]:
        """Up to ``limit`` tasks of ``owner``, oldest first, after the task ``after`` (for ``tasks/list``)."""

    async def close(self) -> None:
        """Release what the store holds (connections, files)."""


async def add_input_requests(
    store: TaskStore, task_id: str, requests: dict[str, Any], *, now: float, message: str | None
) -> TaskRecord | None:
    """Park the task in ``input_required`` with ``requests`` added to those outstanding: the store's ``ask``.

    A store without ``ask`` (written before it) gets ``get`` then
    ``set_status`` with the merged requests: not atomic (see the module docs).
    """
    ask = getattr(store, "ask", None)
    if ask is not None:
        record: TaskRecord | None = await ask(task_id, requests, now=now, message=message)
        return record
    current = await store.get(task_id)
    if current is None:
        return None
    merged = {**current.input_requests, **requests}
    return await store.set_status(task_id, "input_required", now=now, message=message, input_requests=merged)
