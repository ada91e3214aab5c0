"""`LegacyTaskWire`: tasks as a 2025-11-25 session speaks them (experimental, basic/utilities/tasks.mdx).

Rules it keeps (shapes in `_wire`):

* **the client decides.** A ``tools/call`` with ``params.task`` (an object,
  ``ttl`` a non-negative integer of milliseconds when present) becomes a
  task when the tool allows one; ``task="always"`` without it is -32601
  (``execution.taskSupport: "required"``); malformed ``params.task`` is
  -32602. The TTL asked is clamped to the cap and the reply says the TTL
  granted.
* ``CreateTaskResult`` is ``{"task": Task}``; ``tasks/get`` and
  ``tasks/cancel`` answer the ``Task``; cancelling a finished task is
  -32602 naming its status; ``tasks/result`` waits for a terminal status,
  then answers what the call would have (the result tagged with
  ``related-task``, or its JSON-RPC error; a cancelled task has none:
  -32602); ``tasks/list`` pages through the caller's tasks, oldest first,
  the cursor being an id it issued to that caller (-32602 otherwise).
* a task is its caller's: the authenticated caller, else its session.
* questions the body asks are real requests on the session, tagged with
  ``related-task`` (`_waiting.LegacyTaskInputs`); a ``progressToken`` of the
  ``tools/call`` stays valid for the task's life, each report also sent as
  ``notifications/progress`` on the session; each status change goes to the
  session as ``notifications/tasks/status`` until the task ends or the
  session is gone.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable, Literal

from ...jsonrpc import InternalError, InvalidParams, JSONRPCError, MethodNotFound
from ...protocol.meta import RequestMeta
from .._authorization import caller, task_visible
from .._reply import error_object
from ._host import TaskOrder
from ._modes import DEFAULT_POLL_INTERVAL_MS
from ._waiting import LegacyTaskInputs
from ._wire import RELATED_TASK, legacy_task

if TYPE_CHECKING:
    from .._tools import Tool
    from ._engine import TaskEngine
    from ._store import TaskRecord

__all__ = ["LegacyTaskWire", "LIST_PAGE"]

log = logging.getLogger("wiremcp.tasks")

#: Tasks per page of a 2025-11-25 ``tasks/list``.
LIST_PAGE = 50

Notify = Callable[[str, dict[str, Any]], None]


class LegacyTaskWire:
    """The 2025-11-25 adapter of a `TaskEngine`."""

    era: Literal["legacy"] = "legacy"

    def __init__(self, engine: TaskEngine) -> None:
        self.engine = engine
        self._notify: dict[str, Notify] = {}
        engine.watch(self._status)

    def order(self, tool: Tool, arguments: dict[str, Any], params: dict[str, Any], meta: RequestMeta) -> TaskOrder | None:
        """Whether this ``tools/call`` becomes a task (None: a plain result): the client's ``params.task`` says."""
        wanted = params.get("task")
        if wanted is None:
            if tool.task == "always":
                raise MethodNotFound(
                    f"Method not found: the tool {tool.name!r} must be called as a task "
                    "(execution.taskSupport is 'required'): add params.task"
                )
            return None
        if type(wanted) is not dict:
            raise InvalidParams("Invalid params: tools/call 'task' must be an object (TaskMetadata)")
        ttl = wanted.get("ttl")
        if ttl is not None and (type(ttl) is not int or ttl < 0):
            raise InvalidParams("Invalid params: task.ttl must be a non-negative integer of milliseconds")
        return TaskOrder(ttl)

    def owner(self, meta: RequestMeta) -> str | None:
        """The authenticated caller, else the session."""
        who = caller()
        session = meta.session
        if who is None and session is not None:
            return f"session:{getattr(session, 'id', None) or id(session)}"
        return who

    def attach(self, record: TaskRecord, meta: RequestMeta) -> LegacyTaskInputs:
        """The task's channel (real requests on its session); its status changes go to the session."""
        session = meta.session
        if session is None:
            raise InternalError("Internal error: a 2025-11-25 task needs the session that asked for it")
        notify = getattr(session, "notify", None)
        if notify is not None:
            self._notify[record.task_id] = notify
        return LegacyTaskInputs(self.engine, record.task_id, session)

    def forward_progress(self, meta: RequestMeta) -> Callable[[dict[str, Any]], None] | None:
        """Send the task's progress on its session with the ``tools/call``'s own token (tasks.mdx)."""
        token = meta.progress_token
        notify = getattr(meta.session, "notify", None)
        if token is None or notify is None:
            return None

        def forward(params: dict[str, Any]) -> None:
            try:
                notify("notifications/progress", {**params, "progressToken": token})
            except Exception:  # the session is gone: the status message still carries the progress
                log.debug("task progress for token %r not sent: the session is gone", token)

        return forward

    def _status(self, record: TaskRecord) -> None:
        notify = self._notify.get(record.task_id)
        if notify is None:
            return
        try:
            notify("notifications/tasks/status", legacy_task(record))
        except Exception:  # the session is gone
            self._notify.pop(record.task_id, None)
        if record.terminal:
            self._notify.pop(record.task_id, None)

    def require(self, meta: RequestMeta, method: str) -> None:
        """Tasks were negotiated at ``initialize``: nothing more to check per request."""

    def created(self, record: TaskRecord) -> dict[str, Any]:
        return {"task": legacy_task(record)}

    def task(self, record: TaskRecord) -> dict[str, Any]:
        return legacy_task(record)

    def cancelled(self, record: TaskRecord) -> dict[str, Any]:
        return legacy_task(record)

    def cancel_finished(self, record: TaskRecord) -> dict[str, Any]:
        """2025-11-25: cancelling a task in a terminal status is -32602."""
        raise InvalidParams(
            f"Cannot cancel task: already in terminal status '{record.status}'",
            {"taskId": record.task_id, "status": record.status},
        )

    async def result(self, params: dict[str, Any], meta: RequestMeta) -> dict[str, Any]:
        """``tasks/result``: waits for a terminal status, then what the call would have returned."""
        owner = self.owner(meta)
        engine = self.engine
        record = await engine.find(params, "tasks/result", owner)
        while not record.terminal:
            await engine.changed(record.task_id, (record.poll_interval_ms or DEFAULT_POLL_INTERVAL_MS) / 1000)
            record = await engine.find(params, "tasks/result", owner)
        if record.status == "completed":
            out = dict(record.result or {"content": []})
            out["_meta"] = {**(out.get("_meta") or {}), RELATED_TASK: {"taskId": record.task_id}}
            return out
        if record.status == "failed":
            error = record.error or error_object(InternalError("Internal error"))
            raise JSONRPCError(str(error.get("message", "")), error.get("data"), code=int(error.get("code", InternalError.code)))
        raise InvalidParams(f"Task {record.task_id} was cancelled: it has no result", {"taskId": record.task_id})

    async def list(self, params: dict[str, Any], meta: RequestMeta) -> dict[str, Any]:
        """``tasks/list``: the caller's tasks, oldest first, a page at a time."""
        cursor = params.get("cursor")
        owner = self.owner(meta)
        engine = self.engine
        store = await engine.ready()
        if cursor is not None:
            anchor = await store.get(cursor) if type(cursor) is str else None
            if anchor is None or anchor.owner != owner:
                raise InvalidParams("Invalid params: the cursor is not one this server issued")
        now = engine.clock()
        page = await store.list(owner, after=cursor, limit=LIST_PAGE + 1)
        more = len(page) > LIST_PAGE
        page = page[:LIST_PAGE]
        shown = [r for r in page if not r.expired(now) and task_visible(r, owner)]
        out: dict[str, Any] = {"tasks": [legacy_task(await engine.check_worker(r, now)) for r in shown]}
        if more:
            out["nextCursor"] = page[-1].task_id
        return out
