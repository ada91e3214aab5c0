"""Worker threads for synchronous handlers, so a blocking ``def`` never stalls the event loop.

Rules:

* a plain ``def`` tool, resource, prompt or completer runs in a bounded
  thread pool (`Workers`, ``threads`` workers, started on first use); its
  arguments are checked and converted on the loop first, its result is
  turned into the reply on the loop afterwards;
* ``inline=True`` at registration keeps a microsecond-scale pure function on
  the loop (no thread hop: about 20 µs less per call, see bench/sync_tools.py);
* the call runs in a copy of the caller's `contextvars` context (so
  ``current_auth`` and other context variables are what the request set), and
  its `Context` sends progress and log notifications through the loop
  (`Context.from_thread`);
* cancelling the awaiting request (``notifications/cancelled``, a closed
  connection) cancels the asyncio future at once: the transport sends no
  reply, and the thread, which Python cannot interrupt, runs to its end
  while its late result or exception is dropped. A call still queued for a
  thread when it is cancelled never starts.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Awaitable, Callable, TypeVar

from ..jsonrpc import JSONRPCError

if TYPE_CHECKING:
    from ._context import Context

__all__ = ["Workers", "run_handler"]

R = TypeVar("R")


class Workers:
    """A bounded pool of ``size`` threads, created on the first call."""

    __slots__ = ("size", "_executor", "_lock")

    def __init__(self, size: int) -> None:
        if type(size) is not int or size < 1:
            raise ValueError(f"the worker thread pool needs at least one thread, not {size!r}")
        self.size = size
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def _start(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(self.size, thread_name_prefix="wiremcp-worker")
            return self._executor

    async def run(self, fn: Callable[..., Any], arguments: dict[str, Any], ctx: Context | None = None) -> Any:
        """Call ``fn(**arguments)`` in a worker thread and return its result (or raise its exception).

        A coroutine, so that nothing needs a running loop before it is awaited.
        """
        loop = asyncio.get_running_loop()
        if ctx is not None:
            ctx.from_thread(loop)
        executor = self._executor or self._start()
        call = functools.partial(contextvars.copy_context().run, fn, **arguments)
        return await loop.run_in_executor(executor, call)

    def shutdown(self, wait: bool = False) -> None:
        """Stop the threads (queued calls are cancelled); the pool starts again on the next call."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=wait, cancel_futures=True)


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
