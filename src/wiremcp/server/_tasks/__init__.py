"""Tasks (the ``io.modelcontextprotocol/tasks`` extension, SEP-2663, and 2025-11-25 experimental tasks).

A task is a durable handle on work that outlives the request that started
it. The pieces, each in its own module:

* `_store`: the `TaskStore` interface and `TaskRecord`;
* `_memory`: `MemoryTaskStore`, in-process;
* `_sqlite`: `SQLiteTaskStore`, the embedded durable default of ``wiremcp run``;
* `_wire`: a record's wire shapes for each era;
* `_engine`: `TaskEngine`, a task's life whatever the era (create within
  the caps of `_limits`, run, lease, finish, expire and sweep, with the one
  look per worker of `_sweep`);
* `_modern`, `_legacy`: one wire adapter per era (who decides that a call
  becomes a task, the answers of ``tasks/*``, whom a task belongs to);
* `_waiting`: a running task's channel for questions to the client;
* `_host`: what the runtime is given by its server (`TaskHost`);
* `_runtime`: `Tasks`, the engine and its adapters behind the ``tasks/*``
  handlers, the adapter picked by each request's era.

``WIREMCP_TASK_STORE`` picks the store of a `Server` built without
``task_store=``: ``memory``, ``sqlite`` (the file under the user's state
directory, `default_task_db_path`) or ``sqlite:PATH``. Unset, a server
keeps its tasks in memory, except under ``wiremcp run``, which prefers the
SQLite file (`Server.prefer_durable_tasks`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable

from .._settings import ENV_TASK_STORE
from ._modes import DEFAULT_POLL_INTERVAL_MS, DEFAULT_TASK_TTL_MS, TaskMode

__all__ = [
    "TaskStore",
    "TaskRecord",
    "TaskStatus",
    "TaskStoreError",
    "MemoryTaskStore",
    "SQLiteTaskStore",
    "default_task_db_path",
    "store_from_env",
    "Tasks",
    "TaskMode",
    "TERMINAL",
    "NON_TERMINAL",
    "DEFAULT_TASK_TTL_MS",
    "DEFAULT_POLL_INTERVAL_MS",
]

if TYPE_CHECKING:
    from ._memory import MemoryTaskStore
    from ._runtime import Tasks
    from ._store import NON_TERMINAL, TERMINAL, TaskRecord, TaskStatus, TaskStore, TaskStoreError
    from ._sqlite import SQLiteTaskStore, default_task_db_path
else:

    def __getattr__(name: str) -> Any:
        # The store's interface and the in-memory store load on first use: `_modes` (what a tool's
        # ``task=`` and a `Server` need at start-up) is imported through this package.
        if name == "MemoryTaskStore":
            from ._memory import MemoryTaskStore

            return MemoryTaskStore
        if name in ("NON_TERMINAL", "TERMINAL", "TaskRecord", "TaskStatus", "TaskStore", "TaskStoreError"):
            from . import _store

            return getattr(_store, name)
        if name == "Tasks":  # the runtime (and asyncio) only when a tool may become a task
            from ._runtime import Tasks

            return Tasks
        if name in ("SQLiteTaskStore", "default_task_db_path"):  # sqlite3 only when it is used
            from . import _sqlite

            return getattr(_sqlite, name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: The environment variable naming the task store (see the module docstring).
ENV_STORE = ENV_TASK_STORE


def store_from_env(environ: dict[str, str] | None = None) -> Callable[[], TaskStore] | None:
    """A factory for the store ``WIREMCP_TASK_STORE`` names, or None when unset; ValueError if malformed."""
    raw = (os.environ if environ is None else environ).get(ENV_STORE, "").strip()
    if raw == "":
        return None
    if raw == "memory":
        from ._memory import MemoryTaskStore

        return MemoryTaskStore
    if raw == "sqlite":
        from ._sqlite import SQLiteTaskStore

        return lambda: SQLiteTaskStore()
    if raw.startswith("sqlite:") and len(raw) > len("sqlite:"):
        from ._sqlite import SQLiteTaskStore

        path = raw[len("sqlite:"):]
        return lambda: SQLiteTaskStore(path)
    raise ValueError(f"{ENV_STORE} is 'memory', 'sqlite' or 'sqlite:PATH', not {raw!r}")
