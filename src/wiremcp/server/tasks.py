"""Task stores: where a server keeps its tasks (io.modelcontextprotocol/tasks, 2025-11-25 tasks).

A server keeps its tasks in memory unless given a store
(``Server(task_store=...)``, docs/tasks.md). `TaskStore` is the interface a
deployment implements (records are `TaskRecord`; a store's own failures are
`TaskStoreError`); `MemoryTaskStore` and `SQLiteTaskStore` (a file at
`default_task_db_path` unless told otherwise; sqlite3 loads on first use)
come with wiremcp, and a Redis store with `wiremcp.backends`.

Each name loads its module on first use, as in `wiremcp.server`.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._tasks import MemoryTaskStore, TaskRecord, TaskStore, TaskStoreError
    from ._tasks._sqlite import SQLiteTaskStore, default_task_db_path
else:
    from ._lazy import lazy_names

    __getattr__, __dir__ = lazy_names(
        globals(),
        {
            **dict.fromkeys(("MemoryTaskStore", "TaskRecord", "TaskStore", "TaskStoreError"), "_tasks"),
            **dict.fromkeys(("SQLiteTaskStore", "default_task_db_path"), "_tasks._sqlite"),
        },
    )

__all__ = ["TaskStore", "TaskRecord", "TaskStoreError", "MemoryTaskStore", "SQLiteTaskStore", "default_task_db_path"]
