"""Tasks (the ``io.modelcontextprotocol/tasks`` extension, SEP-2663, and 2025-11-25 experimental tasks).

A task is a durable handle on work that outlives the request that started
it. The pieces, each in its own module:

* `_store`: the `TaskStore` interface and `TaskRecord`;
* `_memory`: `MemoryTaskStore`, in-process;
* `_sqlite`: `SQLiteTaskStore`, the embedded durable default.
"""

from ._memory import MemoryTaskStore
from ._sqlite import SQLiteTaskStore, default_task_db_path
from ._store import NON_TERMINAL, TERMINAL, TaskRecord, TaskStatus, TaskStore, TaskStoreError

__all__ = ["TaskStore", "TaskRecord", "TaskStatus", "TaskStoreError", "MemoryTaskStore", "SQLiteTaskStore", "default_task_db_path", "TERMINAL", "NON_TERMINAL"]
