"""Worker threads for synchronous handlers, so a blocking ``def`` never stalls the event loop.

Rules:

* a plain ``def`` tool, resource, prompt or completer runs in a bounded
  thread pool (`Workers`, ``threads`` workers, started on first use); its
  arguments are checked and converted on the loop first, its result is
  turned into the reply on the loop afterwards;
* ``inline=True`` at registration keeps a microsecond-scale pure function on
  the loop (no thread hop: 30 to 75 µs less server CPU per call, see bench/sync_tools.py);
* the call runs in a copy of the caller's `contextvars` context (so
  ``current_auth`` and other context variables are what the request set), and
  its `Context` sends progress and log notifications through the loop
  (`Context.from_thread`);
* cancelling the awaiting request (``notifications/cancelled``, a closed
  connection) cancels the asyncio future at once: the transport sends no
  reply, and the thread, which Python cannot interrupt, runs to its end
  while its late result or exception is dropped. A call still queued for a
  thread when it is cancelled never starts;
* `Workers.post` hands the outcome to a callback on the loop instead of a
  future (the fused stage's threaded tool call: no task awaits it); the
  callback's target (a `Call`) says whether it was cancelled, as a future does.
"""

from __future__ import annotations

import contextvars
import threading
from _queue import SimpleQueue  # queue.SimpleQueue itself, without queue.py (~2.6 M instructions at start-up)
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Protocol, TypeVar

from ..jsonrpc import JSONRPCError

if TYPE_CHECKING:
    import asyncio
    from ._context import Context

__all__ = ["Workers", "run_handler"]

R = TypeVar("R")


class Workers:
    """A bounded pool of at most ``size`` threads, started as calls need them.

    Leaner than `loop.run_in_executor`: a job is a tuple on a `queue.SimpleQueue`
    and its outcome comes back with one ``call_soon_threadsafe``, with no
    `concurrent.futures.Future` in between.
    """

    __slots__ = ("size", "_queue", "_threads", "_idle", "_lock", "_generation")

    def __init__(self, size: int) -> None:
        if type(size) is not int or size < 1:
            raise ValueError(f"the worker thread pool needs at least one thread, not {size!r}")
        self.size = size
        self._queue: SimpleQueue[_Job | None] = SimpleQueue()
        self._threads: list[threading.Thread] = []
        #: Threads waiting for a job that no queued job has reserved (under ``_lock``). Past
        #: ``size`` threads jobs queue unreserved, and it may count high: no thread is started then.
        self._idle = 0
        self._lock = threading.Lock()
        #: Bumped by `shutdown`: a thread of an earlier generation, finishing its last call, is no
        #: longer counted idle, and it waits on the queue of its own generation (its stop is there).
        self._generation = 0

    async def run(self, fn: Callable[..., Any], arguments: dict[str, Any], ctx: Context | None = None) -> Any:
        """Call ``fn(**arguments)`` in a worker thread and return its result (or raise its exception).

        A coroutine, so that nothing needs a running loop before it is awaited.
        """
        return await self.submit(fn, arguments, ctx)

    def submit(self, fn: Callable[..., Any], arguments: dict[str, Any], ctx: Context | None = None) -> asyncio.Future[Any]:
        """`run`, started now on the running loop: the future of ``fn(**arguments)``'s outcome (one coroutine less to await)."""
        import asyncio  # imported by then: on first use, not at start-up
        loop = asyncio.get_running_loop()
        if ctx is not None:
            ctx.from_thread(loop)
        future: asyncio.Future[Any] = loop.create_future()
        self.post(fn, arguments, future, _settle_future)
        return future

    def post(self, fn: Callable[..., Any], arguments: dict[str, Any], target: _Target, settle: Callable[[Any, Any, BaseException | None], None]) -> None:
        """Call ``fn(**arguments)`` in a worker thread; ``settle(target, result, exception)`` gets its outcome on the running loop.

        No future and no task: the caller's callback takes the outcome (the
        fused stage's threaded call, `_intake.FastPath`). ``target.cancelled()``
        true before the call starts: it never starts; after, ``settle`` still
        runs and decides (the target's state is the loop's to read).
        """
        import asyncio  # imported by then: on first use, not at start-up
        job = (target, asyncio.get_running_loop(), contextvars.copy_context(), fn, arguments, settle)
        thread = None
        with self._lock:
            # Reserve an idle thread for this job, or start one: a queued job never waits
            # behind a busy (possibly blocked) thread while the pool has room.
            if self._idle > 0:
                self._idle -= 1
            elif len(self._threads) < self.size:
                thread = threading.Thread(
                    target=self._work,
                    args=(self._queue, self._generation),
                    name=f"wiremcp-worker-{len(self._threads)}",
                    daemon=True,
                )
                self._threads.append(thread)
            jobs = self._queue
        jobs.put(job)
        if thread is not None:
            thread.start()

    def _work(self, jobs: SimpleQueue[_Job | None], generation: int) -> None:
        get = jobs.get
        while True:
            job = get()
            if job is None:
                return
            target, loop, context, fn, arguments, settle = job
            if not target.cancelled():  # a call cancelled while queued never starts
                try:
                    outcome: tuple[Any, BaseException | None] = (context.run(fn, **arguments), None)
                except BaseException as exc:  # noqa: BLE001 - handed to the awaiting request
                    outcome = (None, exc)
                try:
                    loop.call_soon_threadsafe(settle, target, *outcome)
                except RuntimeError:  # the loop is closed: nobody waits for the outcome
                    pass
            with self._lock:
                if self._generation == generation:
                    self._idle += 1

    def shutdown(self, wait: bool = False) -> None:
        """Stop the threads once the queued calls ran; the pool starts again on the next call."""
        with self._lock:
            threads, self._threads = self._threads, []
            self._idle = 0
            jobs, self._queue = self._queue, SimpleQueue()
            self._generation += 1
        for _ in threads:
            jobs.put(None)
        if wait:
            for thread in threads:
                thread.join()


class _Target(Protocol):
    """What a job's outcome goes to: an asyncio future (`Workers.submit`) or a `Call` (`Workers.post`)."""

    def cancelled(self) -> bool: ...


#: A queued call: its target, its loop, its context, the function, its arguments, and what settles the target on the loop.
_Job = tuple[
    _Target,
    "asyncio.AbstractEventLoop",
    contextvars.Context,
    Callable[..., Any],
    dict[str, Any],
    Callable[[Any, Any, "BaseException | None"], None],
]


def _settle_future(future: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    """On the loop: hand the thread's outcome to the request, unless it was cancelled (dropped)."""
    if future.cancelled():
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(result)


def run_handler(
    fn: Callable[..., Any],
    arguments: dict[str, Any],
    ctx: Context | None,
    *,
    is_async: bool,
    threaded: bool,
    workers: Workers | None,
    done: Callable[[Any], R],
    fail: Callable[[Exception], R],
) -> R | Awaitable[R]:
    """Call a resource, prompt or completer function and make its result with ``done``.

    A plain function runs in ``workers`` when ``threaded`` (inline without
    workers), an async one is awaited. An exception from the function or from
    ``done`` goes to ``fail`` (which returns a result or raises), except a
    `JSONRPCError`, which stays a protocol error, and BaseExceptions
    (`InputRequired`, cancellation), which propagate.
    """
    if threaded and workers is not None:
        return _settle(workers.run(fn, arguments, ctx), done, fail)
    try:
        out = fn(**arguments)
        if is_async:
            return _settle(out, done, fail)
        return done(out)
    except JSONRPCError:
        raise
    except Exception as exc:
        return fail(exc)


async def _settle(pending: Awaitable[Any], done: Callable[[Any], R], fail: Callable[[Exception], R]) -> R:
    try:
        return done(await pending)
    except JSONRPCError:
        raise
    except Exception as exc:
        return fail(exc)
