"""`MemoryTaskStore`: tasks in a dict, for tests and single-process servers that need no durability.

Each method runs without awaiting anything, so on one event loop it is
atomic by construction: the first terminal transition wins (`finish`),
`answer` moves answers and drops keys in one step, and `ask` adds questions
to those still outstanding in one step; `create_capped` counts the live
tasks and creates in one step too. Records are copied in
and out, so a caller's changes to a record never reach the store.
"""

from __future__ import annotations

from typing import Any, Literal

from ._store import TERMINAL, TaskRecord, TaskStoreError

__all__ = ["MemoryTaskStore"]


class MemoryTaskStore:
    """An in-process `TaskStore`; lost when the process ends."""

    def __init__(self) -> None:
        self._tasks: dict[str, TaskRecord] = {}

    async def create(self, record: TaskRecord) -> None:
        """Store a new record (``get`` finds it once this returns); TaskStoreError if the id exists."""
        if record.task_id in self._tasks:
            raise TaskStoreError(f"a task with id {record.task_id!r} already exists")
        self._tasks[record.task_id] = record.copy()

    async def create_capped(self, record: TaskRecord, *, per_owner: int | None, total: int, now: float) -> None:
        """`create` unless a cap on live tasks is reached (`_limits.TaskCapReached`); count and create in one step."""
        from ._limits import TaskCapReached

        live = [r for r in self._tasks.values() if is_live(r, now)]
        if per_owner is not None:
            count = sum(1 for r in live if r.owner == record.owner)
            if count >= per_owner:
                raise TaskCapReached("owner", count, per_owner)
        if len(live) >= total:
            raise TaskCapReached("server", len(live), total)
        await self.create(record)

    async def get(self, task_id: str) -> TaskRecord | None:
        """A copy of the record of ``task_id``, or None when there is no such task."""
        record = self._tasks.get(task_id)
        return None if record is None else record.copy()

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
        record = self._tasks.get(task_id)
        if record is None:
            return None
        if record.status not in TERMINAL:
            apply_status(record, status, now, message, input_requests)
        return record.copy()

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
        record = self._tasks.get(task_id)
        if record is None:
            return None
        if record.status not in TERMINAL:
            apply_finish(record, status, now, message, result, error)
        return record.copy()

    async def ask(self, task_id: str, requests: dict[str, Any], *, now: float, message: str | None = None) -> TaskRecord | None:
        """Add ``requests`` to the outstanding ones, go to ``input_required`` unless terminal; the record, or None."""
        record = self._tasks.get(task_id)
        if record is None:
            return None
        if record.status not in TERMINAL:
            apply_ask(record, requests, now, message)
        return record.copy()

    async def answer(self, task_id: str, responses: dict[str, Any], *, now: float) -> TaskRecord | None:
        """``tasks/update``: keep the answers to outstanding keys (others ignored); the record after, or None."""
        record = self._tasks.get(task_id)
        if record is None:
            return None
        if record.status not in TERMINAL:
            apply_answers(record, responses, now)
        return record.copy()

    async def take_responses(self, task_id: str) -> dict[str, Any]:
        """Pop the answers given so far (``{}`` when none, or no such task)."""
        record = self._tasks.get(task_id)
        if record is None or not record.input_responses:
            return {}
        taken, record.input_responses = record.input_responses, {}
        return taken

    async def renew(self, worker: str, lease_until: float) -> None:
        """Extend to ``lease_until`` the lease of every non-terminal task ``worker`` runs."""
        for record in self._tasks.values():
            if record.worker == worker and record.status not in TERMINAL:
                record.lease_until = lease_until

    async def answered(self, worker: str) -> list[str]:
        """The ids of ``worker``'s live tasks holding answers it has not taken (one look for all its waiters)."""
        return [r.task_id for r in self._tasks.values() if r.worker == worker and r.input_responses and r.status not in TERMINAL]

    async def live(self, worker: str) -> dict[str, float | None]:
        """``worker``'s non-terminal tasks: id -> when its TTL elapses (None: never)."""
        return {r.task_id: r.expires_at() for r in self._tasks.values() if r.worker == worker and r.status not in TERMINAL}

    async def list_expired(self, now: float) -> list[str]:
        """The ids of the tasks whose TTL has fully elapsed at ``now``."""
        return [r.task_id for r in self._tasks.values() if r.expired(now)]

    async def delete(self, task_id: str) -> None:
        """Forget the task ``task_id`` (nothing happens when there is none)."""
        self._tasks.pop(task_id, None)

    async def list(self, owner: str | None, *, after: str | None, limit: int) -> list[TaskRecord]:
        """Up to ``limit`` tasks of ``owner``, oldest first, after the task ``after`` (for ``tasks/list``)."""
        mine = sorted((r for r in self._tasks.values() if r.owner == owner), key=lambda r: (r.created_at, r.task_id))
        if after is not None:
            keys = [(r.created_at, r.task_id) for r in mine]
            anchor = self._tasks.get(after)
            if anchor is not None:
                mine = [r for r, k in zip(mine, keys) if k > (anchor.created_at, anchor.task_id)]
        return [r.copy() for r in mine[:limit]]

    async def close(self) -> None:
        """Nothing to release: the tasks are lost with the store."""
        return None

    def __len__(self) -> int:
        return len(self._tasks)


def is_live(record: TaskRecord, now: float) -> bool:
    """Counted against the task caps: not terminal, TTL not elapsed, its worker's lease holding."""
    lease = record.lease_until
    return record.status not in TERMINAL and not record.expired(now) and (lease is None or lease >= now)


def apply_status(
    record: TaskRecord,
    status: Literal["working", "input_required"],
    now: float,
    message: str | None,
    input_requests: dict[str, Any] | None,
) -> None:
    """`TaskStore.set_status` on a record in hand (shared by the stores that hold records in memory)."""
    record.status = status
    record.status_message = message
    record.updated_at = now
    if input_requests is not None:
        record.input_requests = dict(input_requests)


def apply_finish(
    record: TaskRecord,
    status: Literal["completed", "failed", "cancelled"],
    now: float,
    message: str | None,
    result: dict[str, Any] | None,
    error: dict[str, Any] | None,
) -> None:
    """`TaskStore.finish` on a record in hand: the terminal status, its outcome, no questions left."""
    record.status = status
    record.status_message = message
    record.updated_at = now
    record.result = result
    record.error = error
    record.input_requests = {}
    record.input_responses = {}


def apply_ask(record: TaskRecord, requests: dict[str, Any], now: float, message: str | None) -> None:
    """`TaskStore.ask` on a record in hand: add the requests to those outstanding, go to ``input_required``."""
    record.input_requests = {**record.input_requests, **requests}
    record.status = "input_required"
    record.status_message = message
    record.updated_at = now


def apply_answers(record: TaskRecord, responses: dict[str, Any], now: float) -> None:
    """`TaskStore.answer` on a record in hand (shared by the stores that hold records in memory)."""
    outstanding = record.input_requests
    taken = {key: value for key, value in responses.items() if key in outstanding}
    if not taken:
        return
    record.input_responses = {**record.input_responses, **taken}
    record.input_requests = {k: v for k, v in outstanding.items() if k not in taken}
    record.updated_at = now
    if not record.input_requests and record.status == "input_required":
        record.status = "working"
        record.status_message = None
