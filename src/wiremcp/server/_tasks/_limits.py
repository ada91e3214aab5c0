"""Caps on tasks: how many may be live (per owner, per server) and for how long a task is kept.

Rules kept here:

* a **live** task is one not terminal whose TTL has not elapsed and whose
  worker's lease holds (a task whose worker died is not counted: the next
  look at it marks it ``failed``);
* the count is the store's, taken in the same transaction as the ``create``
  (`create_within` calls the store's ``create_capped``), so the caps hold
  across every process sharing a store (an SQLite file, Redis); a store
  without ``create_capped`` (a third party's, written before it) is capped
  on the tasks this process runs, and says so once in the log;
* past ``max_tasks_per_owner`` live tasks of one owner, a new task is
  refused with -32000 (`CallerBusy`: HTTP **429**, ``Retry-After``); past
  ``max_tasks`` live tasks in the store, with -32000 (`ServerBusy`: HTTP
  **503**, ``Retry-After``). A caller with no owner (no authentication, a
  2026-07-28 request) is counted against ``max_tasks`` only: it has no share
  of its own to exceed;
* a task is kept at most ``max_ttl_ms`` (its TTL, from creation): a longer
  TTL asked by a 2025-11-25 ``params.task.ttl`` is clamped to it, and the
  reply carries the TTL granted (tasks.mdx: receivers MAY override it and
  MUST say the actual ``ttl``); so is a server's own ``task_ttl_ms`` above
  it (a server that lowers the cap below the default TTL of one hour gets
  the cap as its TTL).

The defaults and their settings (``Server(max_tasks=, max_tasks_per_owner=,
task_max_ttl_ms=)``, ``WIREMCP_MAX_TASKS``, ``WIREMCP_MAX_OWNER_TASKS``,
``WIREMCP_TASK_MAX_TTL_MS``, ``wiremcp run --max-tasks ...``) are in
docs/limits.md.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any, Literal

from .._reply import CallerBusy, ServerBusy
from ._store import TaskRecord, TaskStore

__all__ = [
    "DEFAULT_MAX_TASKS",
    "DEFAULT_MAX_TASKS_PER_OWNER",
    "DEFAULT_MAX_TTL_MS",
    "TaskLimits",
    "TaskCapReached",
    "create_within",
    "granted_ttl",
]

log = logging.getLogger("wiremcp.tasks")

#: Live tasks one server (every process sharing its store) keeps before refusing new ones.
DEFAULT_MAX_TASKS = 10_000
#: Live tasks one owner (an authenticated caller; a 2025-11-25 session) may hold.
DEFAULT_MAX_TASKS_PER_OWNER = 1_000
#: The longest a task is kept, from creation: one day.
DEFAULT_MAX_TTL_MS = 86_400_000


class TaskCapReached(Exception):
    """Raised by a store's ``create_capped``: the task was not created, a cap is reached."""

    def __init__(self, scope: Literal["owner", "server"], count: int, limit: int) -> None:
        super().__init__(f"{count} live tasks, the {scope} limit is {limit}")
        self.scope = scope
        self.count = count
        self.limit = limit

    def refusal(self) -> ServerBusy:
        """The JSON-RPC error the caller gets (-32000; HTTP 429 for the owner's share, 503 for the server's)."""
        if self.scope == "owner":
            return CallerBusy(
                f"Too many tasks: this caller holds {self.count} live tasks, the most one caller may ({self.limit}); "
                "wait for one to finish or cancel one, then try again"
            )
        return ServerBusy(
            f"Server busy: {self.count} live tasks, the most this server keeps ({self.limit}); try again later"
        )


@dataclasses.dataclass(frozen=True, slots=True)
class TaskLimits:
    """The caps of one server's tasks (see the module docstring)."""

    max_tasks: int = DEFAULT_MAX_TASKS
    max_tasks_per_owner: int = DEFAULT_MAX_TASKS_PER_OWNER
    max_ttl_ms: int = DEFAULT_MAX_TTL_MS

    def __post_init__(self) -> None:
        for name in ("max_tasks", "max_tasks_per_owner", "max_ttl_ms"):
            value = getattr(self, name)
            if type(value) is not int or value < 1:
                raise ValueError(f"task limits: {name} is a positive integer, not {value!r}")

    @classmethod
    def of(cls, max_tasks: int | None, max_tasks_per_owner: int | None, max_ttl_ms: int | None) -> TaskLimits:
        """The limits, each given one or its default (None)."""
        return cls(
            DEFAULT_MAX_TASKS if max_tasks is None else max_tasks,
            DEFAULT_MAX_TASKS_PER_OWNER if max_tasks_per_owner is None else max_tasks_per_owner,
            DEFAULT_MAX_TTL_MS if max_ttl_ms is None else max_ttl_ms,
        )

    def clamp(self, ttl_ms: int | None) -> int:
        """A TTL (None: unlimited) no longer than the cap."""
        return self.max_ttl_ms if ttl_ms is None else min(ttl_ms, self.max_ttl_ms)


def granted_ttl(requested: int | None, default: int | None, limits: TaskLimits) -> int | None:
    """The TTL a task gets: a 2025-11-25 request's (0 or absent: the server's), at most the cap."""
    return limits.clamp(requested or default)


_warned: set[type[Any]] = set()


async def create_within(store: TaskStore, record: TaskRecord, limits: TaskLimits, local: list[str | None]) -> None:
    """Create ``record`` unless a cap is reached (`TaskCapReached`); counted in the store when it can.

    ``local``: the owners of the tasks this process runs, counted instead by
    a store without ``create_capped``.
    """
    per_owner = limits.max_tasks_per_owner if record.owner is not None else None
    capped = getattr(store, "create_capped", None)
    if capped is not None:
        await capped(record, per_owner=per_owner, total=limits.max_tasks, now=record.created_at)
        return
    if type(store) not in _warned:
        _warned.add(type(store))
        log.warning("tasks: the store %s has no create_capped: the task caps count this process's tasks only", type(store).__name__)
    if per_owner is not None:
        count = sum(1 for owner in local if owner == record.owner)
        if count >= per_owner:
            raise TaskCapReached("owner", count, per_owner)
    if len(local) >= limits.max_tasks:
        raise TaskCapReached("server", len(local), limits.max_tasks)
    await store.create(record)
