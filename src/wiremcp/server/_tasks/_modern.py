"""`ModernTaskWire`: tasks as the 2026-07-28 ``io.modelcontextprotocol/tasks`` extension speaks them.

Rules it keeps (extensions/tasks/tasks.md; shapes in `_wire`):

* **the server decides.** ``task="auto"`` (or a callable saying yes) becomes
  a task when the request's own ``_meta`` client capabilities declare the
  extension (per request: nothing is remembered), else a plain result;
  ``"always"`` without it is -32021 naming the extension (a server that
  cannot serve the request without a task MUST). ``params.task`` (the
  2025-11-25 hint) is ignored.
* ``tasks/get``, ``tasks/update``, ``tasks/cancel`` and a listen with
  ``taskIds`` need the extension on that request (-32021 otherwise).
* ``CreateTaskResult`` is flat (``resultType: "task"`` and the task's
  fields); ``tasks/get`` is a ``DetailedTask`` with ``resultType:
  "complete"``; ``tasks/cancel`` and ``tasks/update`` are empty acks, a
  cancel of a finished task included.
* a task is its caller's (the authenticated caller; without authentication
  every request shares one scope, the random task id being the bearer).
* questions the body asks park the task in ``input_required``
  (`_waiting.TaskInputs`); progress and log notifications are never sent
  for a task; status changes go to listen streams as ``notifications/tasks``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Literal

from ...jsonrpc import InvalidParams
from ...protocol.extensions import TASKS, client_declares, missing_extension
from ...protocol.meta import SUBSCRIPTION_ID, RequestMeta
from .._authorization import caller
from .._context import InsufficientScope
from ._host import TaskOrder
from ._waiting import TaskInputs
from ._wire import modern_detailed, modern_task

if TYPE_CHECKING:
    from .._context import Emit
    from .._tools import Tool
    from ._engine import TaskEngine
    from ._store import TaskRecord

__all__ = ["ModernTaskWire", "ACK"]

#: The empty acknowledgement of ``tasks/update`` and ``tasks/cancel``.
ACK: dict[str, Any] = {"resultType": "complete"}


class ModernTaskWire:
    """The 2026-07-28 adapter of a `TaskEngine`."""

    era: Literal["modern"] = "modern"

    def __init__(self, engine: TaskEngine, negotiated: Callable[[RequestMeta, str], bool]) -> None:
        self.engine = engine
        self._negotiated = negotiated

    def order(self, tool: Tool, arguments: dict[str, Any], params: dict[str, Any], meta: RequestMeta) -> TaskOrder | None:
        """Whether this ``tools/call`` becomes a task (None: a plain result)."""
        mode = tool.task
        wants = bool(mode(arguments)) if callable(mode) else True
        if not wants:
            return None
        if not self._negotiated(meta, TASKS):
            if mode == "always":
                raise missing_extension(TASKS, f"the tool {tool.name!r} always runs as a task")
            return None
        return TaskOrder()

    def owner(self, meta: RequestMeta) -> str | None:
        """The caller the task is bound to (None: unauthenticated, one shared scope)."""
        return caller()

    def attach(self, record: TaskRecord, meta: RequestMeta) -> TaskInputs:
        """The task's channel for questions: ``input_required`` until ``tasks/update`` answers."""
        return TaskInputs(self.engine, record.task_id)

    def forward_progress(self, meta: RequestMeta) -> None:
        """No progress notification for a task (tasks.md): its status message carries it."""
        return None

    def require(self, meta: RequestMeta, method: str) -> None:
        if not client_declares(meta.client_capabilities, TASKS):
            raise missing_extension(TASKS, f"{method} is part of the tasks extension")

    def created(self, record: TaskRecord) -> dict[str, Any]:
        return {"resultType": "task", **modern_task(record)}

    def task(self, record: TaskRecord) -> dict[str, Any]:
        return {"resultType": "complete", **modern_detailed(record)}

    def cancelled(self, record: TaskRecord) -> dict[str, Any]:
        return dict(ACK)

    def cancel_finished(self, record: TaskRecord) -> dict[str, Any]:
        """A cancel of a task already finished: the same ack, nothing changes."""
        return dict(ACK)

    # -- subscriptions/listen: notifications/tasks ---------------------------------------------

    def listen_filter(self, wanted: dict[str, Any], meta: RequestMeta) -> list[str] | None:
        """The ``taskIds`` of a listen filter, checked (-32602 malformed, -32021 without the extension)."""
        ids = wanted.get("taskIds")
        if ids is None:
            return None
        if type(ids) is not list or any(type(i) is not str for i in ids):
            raise InvalidParams("Invalid params: notifications.taskIds must be an array of task ids")
        if not client_declares(meta.client_capabilities, TASKS):
            raise missing_extension(TASKS, "task status notifications are part of the tasks extension")
        return list(ids)

    async def agreed_ids(self, ids: list[str], meta: RequestMeta) -> list[str]:
        """The ids of ``ids`` this caller may follow (its own, known, unexpired tasks)."""
        agreed = []
        owner = self.owner(meta)
        for task_id in ids:
            try:
                await self.engine.lookup(task_id, owner)
            except (InvalidParams, InsufficientScope):  # another's, unknown, or its tool's scopes lacking
                continue
            agreed.append(task_id)
        return agreed

    def task_emitter(self, ids: list[str], subscription_id: Any, emit: Emit) -> Callable[[], None]:
        """Send ``notifications/tasks`` (a full DetailedTask) for ``ids`` to ``emit`` until the returned stop."""
        wanted = set(ids)

        def deliver(record: TaskRecord) -> None:
            if record.task_id in wanted:
                params = modern_detailed(record)
                params["_meta"] = {SUBSCRIPTION_ID: subscription_id}
                emit("notifications/tasks", params)

        return self.engine.watch(deliver)
