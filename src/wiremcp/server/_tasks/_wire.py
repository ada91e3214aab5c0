"""The wire shapes of a task, for each era (pure functions of a `TaskRecord`).

2026-07-28, the tasks extension (extensions/tasks, tasks.md):

* ``CreateTaskResult`` is flat, ``Result & Task``: ``resultType: "task"``
  and the task's fields at the top level; never ``result``, ``error``,
  ``inputRequests`` or ``requestState``;
* ``tasks/get`` answers a ``DetailedTask`` with ``resultType: "complete"``:
  ``inputRequests`` while ``input_required``, ``result`` once ``completed``,
  ``error`` once ``failed``;
* the durations are ``ttlMs`` (integer milliseconds or null) and
  ``pollIntervalMs``; never the 2025-11-25 ``ttl``/``pollInterval``;
* the inlined result carries no ``io.modelcontextprotocol/related-task``.

2025-11-25 (basic/utilities/tasks.mdx):

* ``CreateTaskResult`` is ``{"task": Task}``; ``tasks/get`` and
  ``tasks/cancel`` answer the ``Task``; durations are ``ttl`` and
  ``pollInterval``; the result comes from ``tasks/result`` with
  ``_meta["io.modelcontextprotocol/related-task"]``;
* a tool result with ``isError: true`` makes the task ``failed``
  ("For tool calls specifically, this includes cases where the tool call
  result has isError set to true"), where 2026-07-28 says ``completed``.

Timestamps are ISO 8601 in UTC with milliseconds (``2026-07-28T10:30:00.000Z``).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from ...jsonrpc import InternalError
from .._reply import error_object
from ._store import TaskRecord

__all__ = ["RELATED_TASK", "iso", "modern_task", "modern_detailed", "legacy_task", "legacy_status"]

#: ``_meta`` key associating a 2025-11-25 message with its task.
RELATED_TASK = "io.modelcontextprotocol/related-task"


def iso(t: float) -> str:
    """POSIX seconds as an ISO 8601 UTC timestamp with milliseconds."""
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def modern_task(record: TaskRecord) -> dict[str, Any]:
    """The ``Task`` fields (no status payload): the body of ``CreateTaskResult``."""
    task: dict[str, Any] = {
        "taskId": record.task_id,
        "status": record.status,
        "createdAt": iso(record.created_at),
        "lastUpdatedAt": iso(record.updated_at),
        "ttlMs": record.ttl_ms,
    }
    if record.poll_interval_ms is not None:
        task["pollIntervalMs"] = record.poll_interval_ms
    if record.status_message is not None:
        task["statusMessage"] = record.status_message
    return task


def modern_detailed(record: TaskRecord) -> dict[str, Any]:
    """The ``DetailedTask`` of ``tasks/get`` and ``notifications/tasks``."""
    task = modern_task(record)
    status = record.status
    if status == "input_required":
        task["inputRequests"] = dict(record.input_requests)
    elif status == "completed":
        task["result"] = record.result if record.result is not None else {"content": []}
    elif status == "failed":
        task["error"] = record.error if record.error is not None else error_object(InternalError("Internal error"))
    return task


def legacy_status(record: TaskRecord) -> str:
    """The 2025-11-25 status: a completed tool call with ``isError`` is ``failed`` there."""
    if record.status == "completed" and record.result is not None and record.result.get("isError") is True:
        return "failed"
    return record.status


def legacy_task(record: TaskRecord) -> dict[str, Any]:
    """The 2025-11-25 ``Task``."""
    task: dict[str, Any] = {
        "taskId": record.task_id,
        "status": legacy_status(record),
        "createdAt": iso(record.created_at),
        "lastUpdatedAt": iso(record.updated_at),
        "ttl": record.ttl_ms,
    }
    if record.poll_interval_ms is not None:
        task["pollInterval"] = record.poll_interval_ms
    if record.status_message is not None:
        task["statusMessage"] = record.status_message
    return task
