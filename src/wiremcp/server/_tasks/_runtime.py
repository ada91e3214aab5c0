"""`Tasks`: a server's task runtime; creates tasks, runs them, answers the ``tasks/*`` methods.

Rules it keeps (extensions/tasks/tasks.md; 2025-11-25 basic/utilities/tasks.mdx):

* **who decides.** A tool registered with ``task="never"`` (the default)
  never becomes a task; ``"auto"`` becomes one whenever the request can take
  one; ``"always"`` always does, and a 2026-07-28 request without the
  extension gets -32021 naming it (tasks.md: a server that cannot serve the
  request without a task MUST); a callable ``task(arguments) -> bool``
  decides per request and falls back to a plain result when the client
  cannot take a task. A 2026-07-28 request can take a task when its own
  ``_meta`` client capabilities declare ``io.modelcontextprotocol/tasks``
  (per request: nothing is remembered); a 2025-11-25 one when it carries
  ``params.task`` (requestor-driven; ``"always"`` without it is -32601,
  tool-level negotiation). A 2026-07-28 ``params.task`` is ignored.
* **durable before the reply.** ``CreateTaskResult`` is sent only after the
  store's ``create`` returned, so an immediate ``tasks/get`` finds it; a
  store that fails is -32603 with its message and no task.
* **caps.** A task is created only within the caps on live tasks (per
  owner: -32000, HTTP 429; per server: -32000, HTTP 503), counted in the
  store as it is created, and with a TTL no longer than the maximum
  (`_limits`); a task waiting for input never reads the store on a timer
  of its own (`_sweep`: one look per worker).
* **input first, then the task.** Declared inputs (``Annotated[T,
  Elicit(...)]``) are gathered by multi round-trip requests on the
  ``tools/call`` itself, before the task exists (tasks.md: SHOULD resolve
  MRTR exchanges synchronously); questions the body asks while it runs
  (``await ctx.elicit(...)``) park the task in ``input_required`` with the
  questions in ``inputRequests`` (keys unique over the task's life), and
  ``tasks/update`` answers them, a subset at a time if the client wants;
  answers to keys not outstanding are ignored. In a 2025-11-25 session the
  questions are real requests on the session, as for any legacy call.
* **outcomes.** A result, ``isError`` included, is ``completed``; a
  JSON-RPC error raised by the tool is ``failed`` with that ``error``.
  ``tasks/cancel`` marks the task ``cancelled`` (the store's first terminal
  transition wins, so a cancel racing a completion leaves one outcome) and
  stops its work; on a terminal task it is the same empty ack (2025-11-25:
  -32602, as that revision says).
* **unknown task ids** are -32602 saying which: not found, expired (the TTL
  has fully elapsed: never earlier), or another client's (the caller that
  made it is bound to it when requests are authenticated).
* **the store goes away** (Redis down, a locked file): creating a task is
  -32603 naming the store's problem, and so is looking one up; a task
  already running goes on, its progress meanwhile is not recorded (logged),
  and its outcome is written again and again (back-off up to
  `STORE_RETRY_MAX_SECONDS`) until the store takes it or the task's TTL
  has elapsed: nothing is lost, and the store's first terminal transition
  wins, so nothing is reported twice. A store failure inside the task's own
  work (its questions) fails the task, recorded the same way.
* **workers die.** A running task holds a lease its process renews; a task
  whose worker stopped (lease lapsed, or its process on this host is gone)
  is marked ``failed`` with a message saying so at the next look, never
  left ``working`` forever.
* progress reported by a task (``ctx.report_progress``) becomes its
  ``statusMessage``: progress and log notifications are never sent for a
  2026-07-28 task (tasks.md, Task Status Notifications). A 2025-11-25 task
  whose ``tools/call`` carried a ``progressToken`` also sends
  ``notifications/progress`` with that token on its session, for the task's
  whole life (tasks.mdx, "Task Progress Notifications").
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Literal, Union

from ...jsonrpc import InternalError, InvalidParams, JSONRPCError, MethodNotFound, Request
from ...protocol.extensions import TASKS, client_declares, missing_extension
from ...protocol.meta import SUBSCRIPTION_ID, RequestMeta
from .._authorization import caller, check_task, task_visible
from .._context import InsufficientScope
from ._memory import MemoryTaskStore
from ._modes import DEFAULT_POLL_INTERVAL_MS, DEFAULT_TASK_TTL_MS, TaskMode, check_task_mode
from ._limits import TaskCapReached, TaskLimits, create_within, granted_ttl
from ._store import TaskRecord, TaskStore, TaskStoreError
from ._sweep import AnswerSweep, overdue
from ._waiting import LegacyTaskInputs, TaskInputs
from ._wire import RELATED_TASK, legacy_task, modern_detailed, modern_task

if TYPE_CHECKING:
    from .._context import Emit
    from .._server import Server
    from .._tools import Tool

__all__ = [
    "Tasks",
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

log = logging.getLogger("wiremcp.tasks")

#: Seconds a worker's lease on its running tasks lasts; renewed every `HEARTBEAT_SECONDS`.
LEASE_SECONDS = 30.0
HEARTBEAT_SECONDS = 10.0
#: Seconds an expired task is still remembered, to say "expired" rather than "not found".
EXPIRED_GRACE_SECONDS = 3_600.0
#: Seconds between two sweeps of expired tasks.
SWEEP_SECONDS = 60.0
#: Seconds before writing a task's outcome again when the store failed; doubled each time up to the max.
STORE_RETRY_FIRST_SECONDS = 0.1
STORE_RETRY_MAX_SECONDS = 5.0
#: Tasks per page of a 2025-11-25 ``tasks/list``.
LIST_PAGE = 50

TASK_METHODS = ("tasks/get", "tasks/update", "tasks/cancel")
LEGACY_TASK_METHODS = ("tasks/result", "tasks/list")


def _owner(meta: RequestMeta) -> str | None:
    """The caller (issuer, subject, client id: `_authorization.caller`), else the legacy session, else None."""
    who = caller()
    if who is None and meta.session is not None:
        session = meta.session
        return f"session:{getattr(session, 'id', None) or id(session)}"
    return who


def _is_store(candidate: Any) -> bool:
    """A store instance, not a factory (a store class passes the Protocol check too: it has the methods)."""
    return candidate is not None and not isinstance(candidate, type) and isinstance(candidate, TaskStore)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Tasks:
    """One server's tasks: its store, the tasks running in this process, the ``tasks/*`` handlers."""

    def __init__(
        self,
        server: Server,
        store: TaskStore | Callable[[], TaskStore] | None = None,
        *,
        ttl_ms: int | None = DEFAULT_TASK_TTL_MS,
        poll_interval_ms: int | None = DEFAULT_POLL_INTERVAL_MS,
        max_tasks: int | None = None,
        max_tasks_per_owner: int | None = None,
        max_ttl_ms: int | None = None,
    ) -> None:
        if ttl_ms is not None and (type(ttl_ms) is not int or ttl_ms <= 0):
            raise ValueError("task ttl_ms is a positive integer of milliseconds, or None for unlimited")
        if poll_interval_ms is not None and (type(poll_interval_ms) is not int or poll_interval_ms <= 0):
            raise ValueError("task poll_interval_ms is a positive integer of milliseconds")
        self.server = server
        self._store_or_factory = store
        self._store: TaskStore | None = store if _is_store(store) else None  # type: ignore[assignment]  # _is_store: an instance, not a factory
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        #: The caps on live tasks and on their TTL (see _limits).
        self.limits = TaskLimits.of(max_tasks, max_tasks_per_owner, max_ttl_ms)
        #: This process's worker id: ``host:pid:boot``.
        self.host = socket.gethostname()
        self.worker_id = f"{self.host}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._running: dict[str, asyncio.Task[None]] = {}
        self._inputs: dict[str, TaskInputs | LegacyTaskInputs] = {}
        self._cancelling: set[str] = set()
        self._owners: dict[str, str | None] = {}
        #: Wakes the tasks waiting for answers: one look at the store per worker (see _sweep).
        self.answers = AnswerSweep(self.ready, self.worker_id)
        self._changed: dict[str, asyncio.Event] = {}
        self._watchers: set[Callable[[TaskRecord], None]] = set()
        self._legacy_notify: dict[str, Callable[[str, dict[str, Any]], None]] = {}
        self._heartbeat: asyncio.Task[None] | None = None
        self._next_sweep = 0.0
        self._background: set[asyncio.Task[Any]] = set()

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
        runners = [runner for runner in self._running.values() if not runner.done()]
        for runner in runners:
            runner.cancel()
        if runners:
            await asyncio.gather(*runners, return_exceptions=True)
        await self.answers.aclose()
        jobs = [job for job in (self._heartbeat, *self._background) if job is not None and not job.done()]
        self._heartbeat = None
        for job in jobs:
            job.cancel()
        if jobs:
            await asyncio.gather(*jobs, return_exceptions=True)
        if self._store is not None:
            await self._store.close()

    # -- routing a tools/call ------------------------------------------------------

    def route(
        self, tool: Tool, arguments: dict[str, Any], request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None
    ) -> Awaitable[dict[str, Any]] | None:
        """The task path for this ``tools/call``, or None to call the tool as usual."""
        mode = tool.task
        if meta.session is not None:  # 2025-11-25: requestor-driven, params.task
            wanted = params.get("task")
            if wanted is None:
                if mode == "always":
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
            return self._start(tool, arguments, request, meta, emit, legacy_ttl=ttl)
        wants = bool(mode(arguments)) if callable(mode) else True
        if not wants:
            return None
        if not self.server.negotiated(meta, TASKS):
            if mode == "always":
                raise missing_extension(TASKS, f"the tool {tool.name!r} always runs as a task")
            return None
        return self._start(tool, arguments, request, meta, emit, legacy_ttl=None)

    async def _start(
        self,
        tool: Tool,
        arguments: dict[str, Any],
        request: Request,
        meta: RequestMeta,
        emit: Emit | None,
        *,
        legacy_ttl: int | None,
    ) -> dict[str, Any]:
        from .._context import Context

        server = self.server
        prepared, problem = tool.prepare(arguments)
        if problem is not None:
            return server._complete(problem)
        assert prepared is not None
        if tool.inputs:  # MRTR on the tools/call itself, before the task exists (InputRequired ends the round)
            gathered, problem = await tool.gather_inputs(Context(request.id, request.method, meta, server, emit))
            if problem is not None:
                return server._complete(problem)
            prepared = {**prepared, **gathered}
        legacy = meta.session is not None
        ttl_ms = granted_ttl(legacy_ttl, self.ttl_ms, self.limits)  # the reply says the TTL granted
        now = time.time()
        record = TaskRecord(
            task_id=str(uuid.uuid4()),
            status="working",
            created_at=now,
            updated_at=now,
            ttl_ms=ttl_ms,
            poll_interval_ms=self.poll_interval_ms,
            name=tool.name,
            era="legacy" if legacy else "modern",
            owner=_owner(meta),
            scopes=list(tool.scopes),
            worker=self.worker_id,
            lease_until=now + LEASE_SECONDS,
        )
        try:
            store = await self.ready()
            await create_within(store, record, self.limits, list(self._owners.values()))
        except TaskCapReached as exc:
            log.warning("tasks: refused a task of %r: %s", tool.name, exc)
            raise exc.refusal() from None
        except TaskStoreError as exc:
            raise InternalError(f"Internal error: the task could not be created: {exc}") from None
        task_id = record.task_id
        self._owners[task_id] = record.owner
        inputs: TaskInputs | LegacyTaskInputs
        if legacy:
            inputs = LegacyTaskInputs(self, task_id, meta.session)
            notify = getattr(meta.session, "notify", None)
            if notify is not None:
                self._legacy_notify[task_id] = notify
        else:
            inputs = TaskInputs(self, task_id)
        self._inputs[task_id] = inputs
        task_meta = RequestMeta(meta.protocol_version, meta.client_capabilities, meta.client_info, None, task_id, meta.raw)
        task_meta.session = inputs
        forward = None
        if legacy and meta.progress_token is not None:  # 2025-11-25: the token stays valid for the task's life
            forward = self._legacy_progress(meta.session, meta.progress_token)
        ctx = Context(request.id, request.method, task_meta, server, self._progress_sink(task_id, forward))
        runner = asyncio.ensure_future(self._work(task_id, tool, prepared, ctx, record.expires_at()))
        self._running[task_id] = runner
        self._ensure_heartbeat()
        self._maybe_sweep(now)
        if legacy:
            return server._complete({"task": legacy_task(record)})
        return server._complete({"resultType": "task", **modern_task(record)})

    # -- running ---------------------------------------------------------------------

    async def _work(self, task_id: str, tool: Tool, arguments: dict[str, Any], ctx: Any, until: float | None) -> None:
        try:
            out = tool.run_body(arguments, ctx, self.server.workers, self.server.mask_errors)
            try:
                result = out if isinstance(out, dict) else await out
            except TaskStoreError as exc:  # the store failed under the tool (its questions): the task fails
                log.error("task %s: the task store failed while the task ran: %s", task_id, exc)
                message = f"The task store failed while the task ran: {exc}"
                await self._finish(task_id, "failed", error={"code": -32603, "message": message}, message=message, until=until)
                return
            await self._finish(task_id, "completed", result=dict(result), until=until)
        except JSONRPCError as exc:
            await self._finish(task_id, "failed", error=exc.to_error(), message=f"Tool execution failed: {exc.message}", until=until)
        except asyncio.CancelledError:
            if task_id not in self._cancelling:  # not the client: the server is stopping
                await asyncio.shield(
                    self._finish(
                        task_id,
                        "failed",
                        error={"code": -32603, "message": "The server stopped before the task finished"},
                        message="The server stopped before the task finished",
                    )
                )
        except BaseException as exc:  # InputRequired outside MRTR, a bug: the task fails, the process lives
            log.exception("task %s: the tool %r failed outside its result", task_id, tool.name)
            await self._finish(
                task_id, "failed", error={"code": -32603, "message": "Internal error"}, message=f"Internal error: {type(exc).__name__}"
            )
        finally:
            self._running.pop(task_id, None)
            self._inputs.pop(task_id, None)
            self._cancelling.discard(task_id)
            self._owners.pop(task_id, None)
            self.answers.forget(task_id)

    async def _finish(
        self,
        task_id: str,
        status: Literal["completed", "failed", "cancelled"],
        *,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        message: str | None = None,
        until: float | None | Literal[False] = False,
    ) -> TaskRecord | None:
        """Record a terminal status (the store's first terminal transition wins).

        ``until``: the outcome of the task's own work, written again while the
        store fails, until it is recorded or the time ``until`` (the TTL's end;
        None: no end) has passed; ``False``: one attempt.
        """
        store = await self.ready()
        delay = STORE_RETRY_FIRST_SECONDS
        while True:
            try:
                record = await store.finish(task_id, status, now=time.time(), message=message, result=result, error=error)
                break
            except TaskStoreError as exc:
                if until is False or (until is not None and time.time() >= until):
                    log.error("task %s: could not record its outcome (%s): %s", task_id, status, exc)
                    return None
                log.error("task %s: could not record its outcome (%s) yet, again in %g s: %s", task_id, status, delay, exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, STORE_RETRY_MAX_SECONDS)
        if record is not None:
            self.publish(record)
        return record

    async def set_status(
        self, task_id: str, status: Literal["working", "input_required"], message: str | None, requests: dict[str, Any] | None
    ) -> None:
        store = await self.ready()
        try:
            record = await store.set_status(task_id, status, now=time.time(), message=message, input_requests=requests)
        except TaskStoreError as exc:  # progress is transient: the next report, or the outcome, says more
            log.error("task %s: could not record its status %r: %s", task_id, message, exc)
            return
        if record is not None:
            self.publish(record)

    @staticmethod
    def _legacy_progress(session: Any, token: str | int) -> Callable[[dict[str, Any]], None] | None:
        """Send a 2025-11-25 task's progress on its session with the ``tools/call``'s own token."""
        notify = getattr(session, "notify", None)
        if notify is None:
            return None

        def forward(params: dict[str, Any]) -> None:
            try:
                notify("notifications/progress", {**params, "progressToken": token})
            except Exception:  # the session is gone: the status message still carries the progress
                log.debug("task progress for token %r not sent: the session is gone", token)

        return forward

    def _progress_sink(self, task_id: str, forward: Callable[[dict[str, Any]], None] | None = None) -> Emit:
        """Progress becomes the status message (in order); tasks.md: no progress or log notifications for a task.

        ``forward``: a 2025-11-25 task's progress also goes to its session (`_legacy_progress`).
        """
        queue: list[str] = []
        busy = [False]

        async def drain() -> None:
            try:
                while queue:
                    message = queue.pop(0)
                    inputs = self._inputs.get(task_id)
                    if inputs is None or inputs.waiting:  # finished, or input_required: its own message stands
                        continue
                    await self.set_status(task_id, "working", message, None)
            finally:
                busy[0] = False

        def emit(method: str, params: dict[str, Any]) -> None:
            if method != "notifications/progress":
                return
            if forward is not None:
                forward(params)
            message = params.get("message")
            if message is None:
                total = params.get("total")
                message = f"{params.get('progress')}/{total}" if total is not None else f"{params.get('progress')}"
            queue.append(str(message))
            if not busy[0]:
                busy[0] = True
                self._spawn(drain())

        return emit

    def _spawn(self, job: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(job)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _ensure_heartbeat(self) -> None:
        if self._heartbeat is None or self._heartbeat.done():
            self._heartbeat = asyncio.ensure_future(self._beat())

    async def _beat(self) -> None:
        """Renew this worker's leases; stop local work on tasks cancelled or expired meanwhile."""
        while self._running:
            await asyncio.sleep(HEARTBEAT_SECONDS)
            store = await self.ready()
            now = time.time()
            try:
                await store.renew(self.worker_id, now + LEASE_SECONDS)
                stop, expired = await overdue(store, self.worker_id, list(self._running), now)
                for task_id in stop:
                    self._stop(task_id)
                for task_id in expired:
                    record = await store.get(task_id)
                    if record is not None:
                        await self._expire(record)
            except TaskStoreError as exc:
                log.error("tasks: the heartbeat could not reach the task store: %s", exc)
            self._maybe_sweep(now)

    def _stop(self, task_id: str) -> None:
        runner = self._running.get(task_id)
        if runner is not None and not runner.done():
            self._cancelling.add(task_id)
            runner.cancel()

    async def _expire(self, record: TaskRecord) -> None:
        message = f"Task has expired: its TTL of {record.ttl_ms} ms elapsed before it finished"
        await self._finish(record.task_id, "failed", error={"code": -32603, "message": message}, message=message)
        self._stop(record.task_id)

    def _maybe_sweep(self, now: float) -> None:
        if now >= self._next_sweep:
            self._next_sweep = now + SWEEP_SECONDS
            self._spawn(self._sweep(now))

    async def _sweep(self, now: float) -> None:
        """Forget tasks expired for longer than `EXPIRED_GRACE_SECONDS` (until then: "expired")."""
        try:
            store = await self.ready()
            for task_id in await store.list_expired(now - EXPIRED_GRACE_SECONDS):
                self._stop(task_id)
                await store.delete(task_id)
        except TaskStoreError as exc:
            log.error("tasks: sweeping expired tasks failed: %s", exc)

    # -- notifications ------------------------------------------------------------------

    def publish(self, record: TaskRecord) -> None:
        """A task changed: wake its waiters, tell listeners (2026-07-28) and its session (2025-11-25)."""
        changed = self._changed.pop(record.task_id, None)
        if changed is not None:
            changed.set()
        for deliver in list(self._watchers):
            deliver(record)
        notify = self._legacy_notify.get(record.task_id)
        if notify is not None:
            try:
                notify("notifications/tasks/status", legacy_task(record))
            except Exception:  # the session is gone
                self._legacy_notify.pop(record.task_id, None)
            if record.terminal:
                self._legacy_notify.pop(record.task_id, None)

    def watch(self, deliver: Callable[[TaskRecord], None]) -> Callable[[], None]:
        self._watchers.add(deliver)
        return lambda: self._watchers.discard(deliver)

    async def _changed_or_timeout(self, task_id: str, seconds: float) -> None:
        event = self._changed.setdefault(task_id, asyncio.Event())
        try:
            await asyncio.wait_for(event.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    # -- looking a task up ---------------------------------------------------------------

    async def lookup(self, params: dict[str, Any], method: str, meta: RequestMeta) -> TaskRecord:
        """The caller's task named by ``params.taskId``, or the -32602 saying why not."""
        task_id = params.get("taskId")
        if type(task_id) is not str:
            raise InvalidParams(f"Invalid params: {method} needs 'taskId', the task's id as a string")
        try:
            store = await self.ready()
            record = await store.get(task_id)
        except TaskStoreError as exc:
            raise InternalError(f"Internal error: the task store failed: {exc}") from None
        now = time.time()
        if record is None:
            raise InvalidParams(
                f"Failed to retrieve task: Task not found (no task has the id {task_id!r})",
                {"taskId": task_id, "reason": "unknown"},
            )
        check_task(record, _owner(meta))
        if record.expired(now):
            raise InvalidParams(
                f"Failed to retrieve task: Task has expired (its TTL of {record.ttl_ms} ms has elapsed)",
                {"taskId": task_id, "reason": "expired"},
            )
        return await self._check_worker(record, now)

    async def _check_worker(self, record: TaskRecord, now: float) -> TaskRecord:
        """A live task whose worker is gone becomes ``failed``, with a message saying so."""
        if record.terminal:
            return record
        worker = record.worker or ""
        if worker == self.worker_id:
            if record.task_id in self._running:
                return record
            dead = True
        else:
            host, _, rest = worker.partition(":")
            pid = rest.partition(":")[0]
            dead = record.lease_until is not None and record.lease_until < now
            if not dead and host == self.host and pid.isdigit():
                dead = int(pid) == os.getpid() or not _pid_alive(int(pid))
        if not dead:
            return record
        message = "The server process running this task stopped before it finished (it was restarted or crashed)"
        finished = await self._finish(record.task_id, "failed", error={"code": -32603, "message": message}, message=message)
        return finished if finished is not None else record

    # -- the methods -----------------------------------------------------------------------

    def _require(self, meta: RequestMeta, method: str) -> None:
        if meta.session is None and not client_declares(meta.client_capabilities, TASKS):
            raise missing_extension(TASKS, f"{method} is part of the tasks extension")

    async def get(self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None) -> dict[str, Any]:
        self._require(meta, "tasks/get")
        record = await self.lookup(params, "tasks/get", meta)
        if meta.session is not None:
            return self.server._complete(legacy_task(record))
        return self.server._complete({"resultType": "complete", **modern_detailed(record)})

    async def update(self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None) -> dict[str, Any]:
        self._require(meta, "tasks/update")
        responses = params.get("inputResponses")
        record = await self.lookup(params, "tasks/update", meta)
        if type(responses) is not dict:
            raise InvalidParams("Invalid params: tasks/update needs 'inputResponses', an object of answers by key")
        if responses and not record.terminal:
            try:
                store = await self.ready()
                after = await store.answer(record.task_id, responses, now=time.time())
            except TaskStoreError as exc:
                raise InternalError(f"Internal error: the task store failed: {exc}") from None
            if after is not None and after.input_requests != record.input_requests:
                self.publish(after)
            self.answers.wake(record.task_id)
        return self.server._complete({"resultType": "complete"})

    async def cancel(self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None) -> dict[str, Any]:
        self._require(meta, "tasks/cancel")
        record = await self.lookup(params, "tasks/cancel", meta)
        legacy = meta.session is not None
        if record.terminal:
            if legacy:  # 2025-11-25: cancelling a terminal task is -32602
                raise InvalidParams(
                    f"Cannot cancel task: already in terminal status '{record.status}'",
                    {"taskId": record.task_id, "status": record.status},
                )
            return self.server._complete({"resultType": "complete"})
        self._cancelling.add(record.task_id)
        finished = await self._finish(record.task_id, "cancelled", message="Cancelled at the client's request")
        self._stop(record.task_id)
        if legacy:
            return self.server._complete(legacy_task(finished if finished is not None else record))
        return self.server._complete({"resultType": "complete"})

    async def result(self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None) -> dict[str, Any]:
        """2025-11-25 ``tasks/result``: waits for a terminal status, then what the call would have returned."""
        record = await self.lookup(params, "tasks/result", meta)
        while not record.terminal:
            await self._changed_or_timeout(record.task_id, (record.poll_interval_ms or DEFAULT_POLL_INTERVAL_MS) / 1000)
            record = await self.lookup(params, "tasks/result", meta)
        related = {RELATED_TASK: {"taskId": record.task_id}}
        if record.status == "completed":
            out = dict(record.result or {"content": []})
            out["_meta"] = {**(out.get("_meta") or {}), **related}
            return self.server._complete(out)
        if record.status == "failed":
            error = record.error or {"code": -32603, "message": "Internal error"}
            raise JSONRPCError(str(error.get("message", "")), error.get("data"), code=int(error.get("code", -32603)))
        raise InvalidParams(f"Task {record.task_id} was cancelled: it has no result", {"taskId": record.task_id})

    async def list_tasks(self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None) -> dict[str, Any]:
        """2025-11-25 ``tasks/list``: the caller's tasks, oldest first, a page at a time."""
        cursor = params.get("cursor")
        owner = _owner(meta)
        store = await self.ready()
        if cursor is not None:
            anchor = await store.get(cursor) if type(cursor) is str else None
            if anchor is None or anchor.owner != owner:
                raise InvalidParams("Invalid params: the cursor is not one this server issued")
        now = time.time()
        page = await store.list(owner, after=cursor, limit=LIST_PAGE + 1)
        more = len(page) > LIST_PAGE
        page = page[:LIST_PAGE]
        shown = [r for r in page if not r.expired(now) and task_visible(r, owner)]
        tasks = [legacy_task(await self._check_worker(r, now)) for r in shown]
        out: dict[str, Any] = {"tasks": tasks}
        if more:
            out["nextCursor"] = page[-1].task_id
        return self.server._complete(out)

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
        for task_id in ids:
            try:
                await self.lookup({"taskId": task_id}, "subscriptions/listen", meta)
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

        return self.watch(deliver)
