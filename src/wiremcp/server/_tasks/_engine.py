"""`TaskEngine`: the life of a task whatever the era: create, run, lease, finish, sweep.

The engine knows records, the store and this process's running work; it
writes no wire shape (each era's adapter does: `_modern`, `_legacy`) and
reaches into no server (what it needs is passed in: the store, the caps,
how to start a coroutine, the clock). Rules it keeps (extensions/tasks/tasks.md;
2025-11-25 basic/utilities/tasks.mdx):

* **durable before the reply.** `create` returns only after the store's
  ``create`` did, so an immediate ``tasks/get`` finds the task; a store
  that fails is -32603 naming its problem, and no task exists.
* **caps.** A task is created only within the caps on live tasks (per
  owner: -32000, HTTP 429; per server: -32000, HTTP 503), counted in the
  store as it is created (`_limits.create_within`).
* **outcomes.** The body's result, ``isError`` included, is ``completed``;
  a JSON-RPC error it raises is ``failed`` with that error; anything else
  is ``failed`` with "Internal error" (logged; the process lives). The
  store's first terminal transition wins, so a cancel racing a completion
  leaves one outcome. Error objects come from the exceptions
  (`_reply.error_object`), never written by hand.
* **the store goes away.** A running task goes on; its progress meanwhile
  is not recorded (logged); its outcome is written again (back-off up to
  `STORE_RETRY_MAX_SECONDS`) until the store takes it or the task's TTL has
  elapsed. A store failure inside the body's own questions fails the task.
* **workers die.** A running task holds a lease its worker renews every
  `HEARTBEAT_SECONDS` (`tick`); a task whose worker stopped (lease lapsed,
  or its process on this host gone) is marked ``failed`` at the next look
  (`check_worker`), never left ``working``. A task whose TTL elapsed while
  it ran is stopped and ``failed``; tasks expired for longer than
  `EXPIRED_GRACE_SECONDS` are deleted (until then a look says "expired").
* **unknown task ids** are -32602 saying which: not found, expired (the TTL
  has fully elapsed: never earlier), or another caller's (`check_task`).
* progress reported by the body becomes the task's ``statusMessage``, in
  order, never over a task waiting for input (`progress`).

Nothing here needs a running event loop except the timers (`spawn`
defaults to ``asyncio.ensure_future``): with an in-memory store and a
``spawn`` of its own, a test drives every step by hand
(tests/server/tasks/test_task_engine.py).
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Literal, Protocol, cast

from ...jsonrpc import InternalError, InvalidParams, JSONRPCError
from .._authorization import check_task
from .._reply import error_object
from ._limits import TaskCapReached, TaskLimits, create_within
from ._store import TaskRecord, TaskStore, TaskStoreError
from ._sweep import AnswerSweep, overdue

if TYPE_CHECKING:
    from .._context import Emit

__all__ = [
    "TaskEngine",
    "Runner",
    "Channel",
    "LEASE_SECONDS",
    "HEARTBEAT_SECONDS",
    "EXPIRED_GRACE_SECONDS",
    "SWEEP_SECONDS",
    "STORE_RETRY_FIRST_SECONDS",
    "STORE_RETRY_MAX_SECONDS",
    "WORKER_GONE",
    "SERVER_STOPPED",
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

WORKER_GONE = "The server process running this task stopped before it finished (it was restarted or crashed)"
SERVER_STOPPED = "The server stopped before the task finished"

Terminal = Literal["completed", "failed", "cancelled"]


class Runner(Protocol):
    """A started piece of work (an ``asyncio.Task``, or a test's stand-in)."""

    def cancel(self) -> Any: ...

    def done(self) -> bool: ...


class Channel(Protocol):
    """A running task's channel for questions to the client (`_waiting`)."""

    @property
    def waiting(self) -> bool:
        """Whether the body waits for answers now (its status message is then its own)."""
        ...


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def _all_ended(runners: list[Runner]) -> None:
    """Until each runner (an ``asyncio.Task`` when serving) has ended, whatever its outcome."""
    await asyncio.gather(*(cast("asyncio.Future[Any]", runner) for runner in runners), return_exceptions=True)


def _failure(message: str) -> dict[str, Any]:
    """The error object of a task that failed for a reason of the server's (-32603 with ``message``)."""
    return error_object(InternalError(message))


class TaskEngine:
    """One server's tasks, era-neutral: the store, this worker's running tasks, their leases and outcomes."""

    def __init__(
        self,
        ready: Callable[[], Awaitable[TaskStore]],
        limits: TaskLimits,
        *,
        spawn: Callable[[Awaitable[Any]], Runner] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        #: The store, made on first use (the runtime's factory).
        self.ready = ready
        #: The caps on live tasks and on their TTL (see _limits).
        self.limits = limits
        self._spawn_runner: Callable[[Awaitable[Any]], Runner] = spawn if spawn is not None else asyncio.ensure_future
        self.clock = clock
        #: This process's worker id: ``host:pid:boot``.
        self.host = socket.gethostname()
        self.worker_id = f"{self.host}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._running: dict[str, Runner] = {}
        self._channels: dict[str, Channel] = {}
        self._cancelling: set[str] = set()
        self._owners: dict[str, str | None] = {}
        #: Wakes the tasks waiting for answers: one look at the store per worker (see _sweep).
        self.answers = AnswerSweep(ready, self.worker_id)
        self._changed: dict[str, asyncio.Event] = {}
        self._watchers: set[Callable[[TaskRecord], None]] = set()
        self._heartbeat: Runner | None = None
        self._next_sweep = 0.0
        self._background: set[Runner] = set()

    @property
    def running(self) -> list[str]:
        """The ids of the tasks this worker runs now."""
        return list(self._running)

    # -- create and run -------------------------------------------------------------

    async def create(
        self, *, name: str, era: Literal["modern", "legacy"], owner: str | None, scopes: list[str],
        ttl_ms: int | None, poll_interval_ms: int | None,
    ) -> TaskRecord:
        """A new ``working`` task, in the store within the caps, leased to this worker (or the refusal)."""
        now = self.clock()
        record = TaskRecord(
            task_id=str(uuid.uuid4()), status="working", created_at=now, updated_at=now, ttl_ms=ttl_ms,
            poll_interval_ms=poll_interval_ms, name=name, era=era, owner=owner, scopes=scopes,
            worker=self.worker_id, lease_until=now + LEASE_SECONDS,
        )
        try:
            store = await self.ready()
            await create_within(store, record, self.limits, list(self._owners.values()))
        except TaskCapReached as exc:
            log.warning("tasks: refused a task of %r: %s", name, exc)
            raise exc.refusal() from None
        except TaskStoreError as exc:
            raise InternalError(f"Internal error: the task could not be created: {exc}") from None
        self._owners[record.task_id] = owner
        return record

    def run(self, record: TaskRecord, body: Callable[[], dict[str, Any] | Awaitable[dict[str, Any]]], channel: Channel) -> None:
        """Start ``body`` (called once the work starts) as the task's work; its outcome finishes the task."""
        task_id = record.task_id
        self._channels[task_id] = channel
        self._running[task_id] = self._spawn_runner(self._work(task_id, record.name or "", body, record.expires_at()))
        if self._heartbeat is None or self._heartbeat.done():
            self._heartbeat = self._spawn_runner(self._beat())
        self._maybe_sweep(self.clock())

    async def _work(
        self, task_id: str, name: str, body: Callable[[], dict[str, Any] | Awaitable[dict[str, Any]]], until: float | None
    ) -> None:
        try:
            out = body()
            try:
                result = out if isinstance(out, dict) else await out
            except TaskStoreError as exc:  # the store failed under the body (its questions): the task fails
                log.error("task %s: the task store failed while the task ran: %s", task_id, exc)
                message = f"The task store failed while the task ran: {exc}"
                await self.finish(task_id, "failed", error=_failure(message), message=message, until=until)
                return
            await self.finish(task_id, "completed", result=dict(result), until=until)
        except JSONRPCError as exc:
            await self.finish(task_id, "failed", error=exc.to_error(), message=f"Tool execution failed: {exc.message}", until=until)
        except asyncio.CancelledError:
            if task_id not in self._cancelling:  # not the client: the server is stopping
                await asyncio.shield(self.finish(task_id, "failed", error=_failure(SERVER_STOPPED), message=SERVER_STOPPED))
        except BaseException as exc:  # InputRequired outside MRTR, a bug: the task fails, the process lives
            log.exception("task %s: the tool %r failed outside its result", task_id, name)
            await self.finish(task_id, "failed", error=_failure("Internal error"), message=f"Internal error: {type(exc).__name__}")
        finally:
            self._running.pop(task_id, None)
            self._channels.pop(task_id, None)
            self._cancelling.discard(task_id)
            self._owners.pop(task_id, None)
            self.answers.forget(task_id)

    # -- transitions --------------------------------------------------------------------

    async def finish(
        self,
        task_id: str,
        status: Terminal,
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
                record = await store.finish(task_id, status, now=self.clock(), message=message, result=result, error=error)
                break
            except TaskStoreError as exc:
                if until is False or (until is not None and self.clock() >= until):
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
        """A non-terminal status; a store failure is logged (progress is transient: the outcome says more)."""
        store = await self.ready()
        try:
            record = await store.set_status(task_id, status, now=self.clock(), message=message, input_requests=requests)
        except TaskStoreError as exc:
            log.error("task %s: could not record its status %r: %s", task_id, message, exc)
            return
        if record is not None:
            self.publish(record)

    async def answer(self, record: TaskRecord, responses: dict[str, Any]) -> None:
        """Answers to a task's questions (``tasks/update``): stored, and its waiter woken."""
        if not responses or record.terminal:
            return
        try:
            store = await self.ready()
            after = await store.answer(record.task_id, responses, now=self.clock())
        except TaskStoreError as exc:
            raise InternalError(f"Internal error: the task store failed: {exc}") from None
        if after is not None and after.input_requests != record.input_requests:
            self.publish(after)
        self.answers.wake(record.task_id)

    async def cancel(self, record: TaskRecord) -> TaskRecord | None:
        """Mark a live task ``cancelled`` and stop its work here; the record afterwards (None: not recorded)."""
        self._cancelling.add(record.task_id)
        finished = await self.finish(record.task_id, "cancelled", message="Cancelled at the client's request")
        self.stop(record.task_id)
        return finished

    def stop(self, task_id: str) -> None:
        """Cancel this worker's work on ``task_id`` (its outcome is recorded by whoever stopped it)."""
        runner = self._running.get(task_id)
        if runner is not None and not runner.done():
            self._cancelling.add(task_id)
            runner.cancel()

    def progress(self, task_id: str, forward: Callable[[dict[str, Any]], None] | None = None) -> Emit:
        """An ``emit`` whose progress becomes the task's status message, in order (no notification is sent).

        ``forward``: the progress also goes there (a 2025-11-25 task's session).
        """
        queue: list[str] = []
        busy = [False]

        async def drain() -> None:
            try:
                while queue:
                    message = queue.pop(0)
                    channel = self._channels.get(task_id)
                    if channel is None or channel.waiting:  # finished, or input_required: its own message stands
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
                self.spawn(drain())

        return emit

    # -- looking a task up -----------------------------------------------------------------

    async def find(self, params: dict[str, Any], method: str, owner: str | None) -> TaskRecord:
        """The task ``params.taskId`` names (-32602 when it is missing or not a string), as `lookup`."""
        task_id = params.get("taskId")
        if type(task_id) is not str:
            raise InvalidParams(f"Invalid params: {method} needs 'taskId', the task's id as a string")
        return await self.lookup(task_id, owner)

    async def lookup(self, task_id: str, owner: str | None) -> TaskRecord:
        """The task ``task_id`` of ``owner``, or the -32602 saying why not (-32603: the store failed)."""
        try:
            store = await self.ready()
            record = await store.get(task_id)
        except TaskStoreError as exc:
            raise InternalError(f"Internal error: the task store failed: {exc}") from None
        now = self.clock()
        if record is None:
            raise InvalidParams(
                f"Failed to retrieve task: Task not found (no task has the id {task_id!r})",
                {"taskId": task_id, "reason": "unknown"},
            )
        check_task(record, owner)
        if record.expired(now):
            raise InvalidParams(
                f"Failed to retrieve task: Task has expired (its TTL of {record.ttl_ms} ms has elapsed)",
                {"taskId": task_id, "reason": "expired"},
            )
        return await self.check_worker(record, now)

    async def check_worker(self, record: TaskRecord, now: float) -> TaskRecord:
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
        finished = await self.finish(record.task_id, "failed", error=_failure(WORKER_GONE), message=WORKER_GONE)
        return finished if finished is not None else record

    # -- leases and the sweep -----------------------------------------------------------------

    def spawn(self, job: Awaitable[Any]) -> None:
        """Start a background job (kept until done, cancelled by `aclose`)."""
        runner = self._spawn_runner(job)
        self._background.add(runner)
        add_done = getattr(runner, "add_done_callback", None)
        if add_done is not None:
            add_done(self._background.discard)

    async def _beat(self) -> None:
        """While tasks run here: renew their leases every `HEARTBEAT_SECONDS` (`tick`)."""
        while self._running:
            await asyncio.sleep(HEARTBEAT_SECONDS)
            await self.tick()

    async def tick(self) -> None:
        """One heartbeat: renew this worker's leases; stop local work on tasks cancelled or expired meanwhile."""
        store = await self.ready()
        now = self.clock()
        try:
            await store.renew(self.worker_id, now + LEASE_SECONDS)
            stop, expired = await overdue(store, self.worker_id, list(self._running), now)
            for task_id in stop:
                self.stop(task_id)
            for task_id in expired:
                record = await store.get(task_id)
                if record is not None:
                    await self._expire(record)
        except TaskStoreError as exc:
            log.error("tasks: the heartbeat could not reach the task store: %s", exc)
        self._maybe_sweep(now)

    async def _expire(self, record: TaskRecord) -> None:
        message = f"Task has expired: its TTL of {record.ttl_ms} ms elapsed before it finished"
        await self.finish(record.task_id, "failed", error=_failure(message), message=message)
        self.stop(record.task_id)

    def _maybe_sweep(self, now: float) -> None:
        if now >= self._next_sweep:
            self._next_sweep = now + SWEEP_SECONDS
            self.spawn(self.sweep(now))

    async def sweep(self, now: float) -> None:
        """Forget tasks expired for longer than `EXPIRED_GRACE_SECONDS` (until then: "expired")."""
        try:
            store = await self.ready()
            for task_id in await store.list_expired(now - EXPIRED_GRACE_SECONDS):
                self.stop(task_id)
                await store.delete(task_id)
        except TaskStoreError as exc:
            log.error("tasks: sweeping expired tasks failed: %s", exc)

    # -- changes ----------------------------------------------------------------------------

    def publish(self, record: TaskRecord) -> None:
        """A task changed: wake its waiters, tell the watchers (listen streams, legacy sessions)."""
        changed = self._changed.pop(record.task_id, None)
        if changed is not None:
            changed.set()
        for deliver in list(self._watchers):
            deliver(record)

    def watch(self, deliver: Callable[[TaskRecord], None]) -> Callable[[], None]:
        """Call ``deliver`` with every change until the returned stop is called."""
        self._watchers.add(deliver)
        return lambda: self._watchers.discard(deliver)

    async def changed(self, task_id: str, seconds: float) -> None:
        """Until ``task_id`` changes here, or ``seconds`` pass."""
        event = self._changed.setdefault(task_id, asyncio.Event())
        try:
            await asyncio.wait_for(event.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    async def aclose(self) -> None:
        """Stop this process's tasks (each recorded ``failed``: the server stopped), then the timers."""
        runners = [runner for runner in self._running.values() if not runner.done()]
        for runner in runners:
            runner.cancel()
        if runners:
            await _all_ended(runners)
        await self.answers.aclose()
        jobs = [job for job in (self._heartbeat, *self._background) if job is not None and not job.done()]
        self._heartbeat = None
        for job in jobs:
            job.cancel()
        if jobs:
            await _all_ended(jobs)
