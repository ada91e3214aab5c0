"""`Tasks`: a server's task runtime; one era-neutral engine, one wire adapter per era.

The pieces (each rule is kept in the module named):

* `_engine.TaskEngine`: a task's life whatever the era: create within the
  caps, durable before the reply; run; lease and heartbeat; finish (the
  store's first terminal transition wins; outcomes written again while the
  store fails); expire and sweep; look up (not found, expired, another's);
* `_modern.ModernTaskWire`: the 2026-07-28 tasks extension (the server
  decides; flat ``CreateTaskResult``; -32021 without the extension);
* `_legacy.LegacyTaskWire`: 2025-11-25 tasks (the client decides with
  ``params.task``; ``tasks/result``, ``tasks/list``; the session's
  notifications);
* `_waiting`: the task's channel for questions to the client, handed to
  the body as its request's ``questions`` (`RequestMeta.for_task`).

Rules kept here:

* **one adapter per request, by its era.** ``meta.era`` (said where the
  request's `RequestMeta` was built) picks the adapter; nothing else tells
  the eras apart.
* **input first, then the task.** Declared inputs (``Annotated[T,
  Elicit(...)]``) are gathered by multi round-trip requests on the
  ``tools/call`` itself, before the task exists (tasks.md: SHOULD resolve
  MRTR exchanges synchronously); arguments that do not fit the tool's
  schema are the tool execution error, no task.
* **what the server adds.** Every answer leaves through the server's
  ``decorate`` (its result ``_meta``), given in `TaskHost`: the runtime
  holds no server.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Union

from ...jsonrpc import InvalidParams, Request
from ...protocol.meta import RequestMeta
from ._engine import EXPIRED_GRACE_SECONDS, HEARTBEAT_SECONDS, LEASE_SECONDS, TaskEngine
from ._host import TaskHost, TaskOrder
from ._legacy import LegacyTaskWire
from ._limits import TaskLimits, granted_ttl
from ._memory import MemoryTaskStore
from ._modern import ACK, ModernTaskWire
from ._modes import DEFAULT_POLL_INTERVAL_MS, DEFAULT_TASK_TTL_MS, TaskMode, check_task_mode
from ._store import TaskStore

if TYPE_CHECKING:
    from .._context import Emit
    from .._tools import Tool

__all__ = [
    "Tasks",
    "TaskHost",
    "TaskMode",
    "check_task_mode",
    "DEFAULT_TASK_TTL_MS",
    "DEFAULT_POLL_INTERVAL_MS",
    "LEASE_SECONDS",
    "HEARTBEAT_SECONDS",
    "EXPIRED_GRACE_SECONDS",
    "TASK_METHODS",
    "LEGACY_TASK_METHODS",
]

TASK_METHODS = ("tasks/get", "tasks/update", "tasks/cancel")
LEGACY_TASK_METHODS = ("tasks/result", "tasks/list")

Wire = Union[ModernTaskWire, LegacyTaskWire]


def _is_store(candidate: Any) -> bool:
    """A store instance, not a factory (a store class passes the Protocol check too: it has the methods)."""
    return candidate is not None and not isinstance(candidate, type) and isinstance(candidate, TaskStore)


class Tasks:
    """One server's tasks: the engine, an adapter per era, the ``tasks/*`` handlers."""

    def __init__(
        self,
        host: TaskHost,
        store: TaskStore | Callable[[], TaskStore] | None = None,
        *,
        ttl_ms: int | None = DEFAULT_TASK_TTL_MS,
        poll_interval_ms: int | None = DEFAULT_POLL_INTERVAL_MS,
        max_tasks: int | None = None,
        max_tasks_per_owner: int | None = None,
        max_ttl_ms: int | None = None,
        spawn: Callable[[Awaitable[Any]], Any] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if ttl_ms is not None and (type(ttl_ms) is not int or ttl_ms <= 0):
            raise ValueError("task ttl_ms is a positive integer of milliseconds, or None for unlimited")
        if poll_interval_ms is not None and (type(poll_interval_ms) is not int or poll_interval_ms <= 0):
            raise ValueError("task poll_interval_ms is a positive integer of milliseconds")
        self.host = host
        self._store_or_factory = store
        self._store: TaskStore | None = store if _is_store(store) else None  # type: ignore[assignment]  # _is_store: an instance, not a factory
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        #: The era-neutral engine (create, run, lease, finish, sweep).
        self.engine = TaskEngine(self.ready, TaskLimits.of(max_tasks, max_tasks_per_owner, max_ttl_ms), spawn=spawn, clock=clock)
        self.modern = ModernTaskWire(self.engine, host.negotiated)
        self.legacy = LegacyTaskWire(self.engine)

    @property
    def limits(self) -> TaskLimits:
        """The caps on live tasks and on their TTL (see _limits)."""
        return self.engine.limits

    def _wire(self, meta: RequestMeta) -> Wire:
        return self.legacy if meta.era == "legacy" else self.modern

    # -- the store ---------------------------------------------------------------

    @property
    def store(self) -> TaskStore | None:
        """The store, once in use (None before the first task operation when it is built lazily)."""
        return self._store

    def prefer(self, factory: Callable[[], TaskStore]) -> None:
        """Use ``factory``'s store unless one was chosen (``task_store=``, ``WIREMCP_TASK_STORE``) or is in use."""
        if self._store is None and self._store_or_factory is None:
            self._store_or_factory = factory

    async def ready(self) -> TaskStore:
        """The store, built on first use (a factory runs once)."""
        store = self._store
        if store is None:
            made: Any = self._store_or_factory
            store = MemoryTaskStore() if made is None else made if _is_store(made) else made()
            self._store = store
        return store

    async def aclose(self) -> None:
        """The server stops (its lifespan ends): stop this process's tasks, then close the store.

        A task still running is cancelled and recorded ``failed`` with "The
        server stopped before the task finished" (never left ``working``);
        then the heartbeat and background jobs stop and the store is closed
        (SQLite: its connection and its thread). A server that serves again
        uses the store again (the stores reopen on use).
        """
        await self.engine.aclose()
        if self._store is not None:
            await self._store.close()

    # -- routing a tools/call ------------------------------------------------------

    def route(
        self, tool: Tool, arguments: dict[str, Any], request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None
    ) -> Awaitable[dict[str, Any]] | None:
        """The task path for this ``tools/call``, or None to call the tool as usual."""
        wire = self._wire(meta)
        order = wire.order(tool, arguments, params, meta)
        if order is None:
            return None
        return self._start(wire, order, tool, arguments, request, meta, emit)

    async def _start(
        self, wire: Wire, order: TaskOrder, tool: Tool, arguments: dict[str, Any], request: Request, meta: RequestMeta,
        emit: Emit | None,
    ) -> dict[str, Any]:
        host = self.host
        prepared, problem = tool.prepare(arguments)
        if problem is not None:
            return host.decorate(problem)
        assert prepared is not None
        if tool.inputs:  # MRTR on the tools/call itself, before the task exists (InputRequired ends the round)
            gathered, problem = await tool.gather_inputs(host.context(request.id, request.method, meta, emit))
            if problem is not None:
                return host.decorate(problem)
            prepared = {**prepared, **gathered}
        engine = self.engine
        record = await engine.create(
            name=tool.name, era=wire.era, owner=wire.owner(meta), scopes=list(tool.scopes),
            ttl_ms=granted_ttl(order.ttl_ms, self.ttl_ms, engine.limits),  # the reply says the TTL granted
            poll_interval_ms=self.poll_interval_ms,
        )
        channel = wire.attach(record, meta)
        sink = engine.progress(record.task_id, wire.forward_progress(meta))
        ctx = host.context(request.id, request.method, meta.for_task(record.task_id, channel), sink)
        work = prepared
        engine.run(record, lambda: host.run(tool, work, ctx), channel)
        return host.decorate(wire.created(record))

    # -- the methods -----------------------------------------------------------------------

    async def get(self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None) -> dict[str, Any]:
        wire = self._wire(meta)
        wire.require(meta, "tasks/get")
        record = await self.engine.find(params, "tasks/get", wire.owner(meta))
        return self.host.decorate(wire.task(record))

    async def update(self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None) -> dict[str, Any]:
        wire = self._wire(meta)
        wire.require(meta, "tasks/update")
        responses = params.get("inputResponses")
        record = await self.engine.find(params, "tasks/update", wire.owner(meta))
        if type(responses) is not dict:
            raise InvalidParams("Invalid params: tasks/update needs 'inputResponses', an object of answers by key")
        await self.engine.answer(record, responses)
        return self.host.decorate(dict(ACK))

    async def cancel(self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None) -> dict[str, Any]:
        wire = self._wire(meta)
        wire.require(meta, "tasks/cancel")
        record = await self.engine.find(params, "tasks/cancel", wire.owner(meta))
        if record.terminal:
            return self.host.decorate(wire.cancel_finished(record))
        finished = await self.engine.cancel(record)
        return self.host.decorate(wire.cancelled(finished if finished is not None else record))

    async def result(self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None) -> dict[str, Any]:
        """2025-11-25 ``tasks/result``: waits for a terminal status, then what the call would have returned."""
        return self.host.decorate(await self.legacy.result(params, meta))

    async def list_tasks(self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None) -> dict[str, Any]:
        """2025-11-25 ``tasks/list``: the caller's tasks, oldest first, a page at a time."""
        return self.host.decorate(await self.legacy.list(params, meta))

    # -- subscriptions/listen: notifications/tasks (2026-07-28) ----------------------------------

    def listen_filter(self, wanted: dict[str, Any], meta: RequestMeta) -> list[str] | None:
        """The ``taskIds`` of a listen filter, checked (-32602 malformed, -32021 without the extension)."""
        return self.modern.listen_filter(wanted, meta)

    async def agreed_ids(self, ids: list[str], meta: RequestMeta) -> list[str]:
        """The ids of ``ids`` this caller may follow (its own, known, unexpired tasks)."""
        return await self.modern.agreed_ids(ids, meta)

    def task_emitter(self, ids: list[str], subscription_id: Any, emit: Emit) -> Callable[[], None]:
        """Send ``notifications/tasks`` for ``ids`` to ``emit`` until the returned stop."""
        return self.modern.task_emitter(ids, subscription_id, emit)
