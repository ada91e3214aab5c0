"""`MCPApp`'s lifespan: the server's lifespan around serving, and a shutdown that never hangs.

Rules:

* ``lifespan`` ASGI events (the app run alone: ``uvicorn module:app``,
  `serve_http`): ``lifespan.startup`` enters the server's lifespan
  (``lifespan.startup.failed`` with the exception's text if it raises);
  ``lifespan.shutdown`` runs `Shutdown.finish` and leaves it;
* a host application (Starlette, FastAPI) does not pass ``lifespan`` events to
  a mounted app, so it runs ``MCPApp.lifespan`` as (or inside) its own:
  ``Starlette(routes=[Mount("/", app=mcp)], lifespan=mcp.lifespan)``. Both
  ways may be used at once: the server's lifespan counts its users and runs
  once;
* ASGI servers (uvicorn, hypercorn) send ``lifespan.shutdown`` only after the
  open connections have finished, and a ``subscriptions/listen`` stream (or a
  legacy session's GET stream) finishes only when the server ends it. So
  while the lifespan runs, SIGINT and SIGTERM are watched: the handler the
  ASGI server installed is kept and called after ours, which (on the event
  loop) ends the listen streams with their ``complete`` result, closes the
  legacy sessions and gives the requests in flight ``shutdown_grace``
  seconds before cancelling them (`Shutdown.begin`). Signals are watched only
  from the main thread and only where a Python handler is installed;
* `Shutdown.finish` does the same if no signal came first, waits for the
  drain, then the server's lifespan is left (which shuts the worker threads
  down).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from typing import TYPE_CHECKING, Any, Callable

from ...server.transport import drain
from ._asgi import Receive, Send

if TYPE_CHECKING:
    from ...server import Server

__all__ = ["Shutdown", "run_lifespan"]

log = logging.getLogger("wiremcp.transport")

_SIGNALS = tuple(s for s in (getattr(signal, "SIGINT", None), getattr(signal, "SIGTERM", None)) if s is not None)


class Shutdown:
    """One app's shutdown: its requests in flight, the signal hook, the drain (see the module docs)."""

    __slots__ = ("server", "close_sessions", "running", "_draining", "_saved", "_users")

    def __init__(self, server: Server, close_sessions: Callable[[], None]) -> None:
        self.server = server
        self.close_sessions = close_sessions
        #: The tasks of the requests in flight (modern requests; sessions keep their own).
        self.running: set[asyncio.Task[Any]] = set()
        self._draining: asyncio.Task[int] | None = None
        self._saved: dict[int, Any] = {}
        self._users = 0

    @property
    def draining(self) -> bool:
        """Whether the shutdown began: a request cancelled now was cancelled by the drain."""
        return self._draining is not None

    def track(self, task: asyncio.Task[Any]) -> None:
        self.running.add(task)
        task.add_done_callback(self.running.discard)

    async def start(self) -> None:
        """Enter the server's lifespan and watch the signals."""
        await self.server.lifespan.__aenter__()
        self._users += 1
        self._draining = None
        if self._users == 1:
            self._hook()

    def begin(self) -> asyncio.Task[int]:
        """End the listen streams and sessions, and start draining the requests in flight (once)."""
        if self._draining is None:
            self.server.close_subscriptions()
            self.close_sessions()
            self._draining = asyncio.get_running_loop().create_task(
                drain(list(self.running), self.server.shutdown_grace)
            )
        return self._draining

    async def finish(self) -> None:
        """`begin` (unless a signal did), wait for the drain, then leave the server's lifespan."""
        self._users -= 1
        try:
            if self._users == 0:
                self._unhook()
                await self.begin()
        finally:
            await self.server.lifespan.__aexit__(None, None, None)

    # -- signals ---------------------------------------------------------------

    def _hook(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        loop = asyncio.get_running_loop()
        for sig in _SIGNALS:
            previous = signal.getsignal(sig)
            if not callable(previous):
                continue  # SIG_DFL / SIG_IGN / set outside Python: nobody to chain to

            def hook(signum: int, frame: Any, previous: Any = previous) -> None:
                try:
                    loop.call_soon_threadsafe(self.begin)
                except RuntimeError:  # the loop is closed
                    pass
                previous(signum, frame)

            try:
                signal.signal(sig, hook)
            except (ValueError, OSError):
                continue
            self._saved[sig] = previous

    def _unhook(self) -> None:
        saved, self._saved = self._saved, {}
        for sig, previous in saved.items():
            try:
                signal.signal(sig, previous)
            except (ValueError, OSError):
                pass


async def run_lifespan(shutdown: Shutdown, receive: Receive, send: Send) -> None:
    """Answer the ASGI ``lifespan`` events (see the module docs)."""
    while True:
        msg = await receive()
        if msg["type"] == "lifespan.startup":
            try:
                await shutdown.start()
            except BaseException as exc:  # noqa: BLE001 - reported to the ASGI server, which stops
                log.exception("the server's lifespan failed to start")
                await send({"type": "lifespan.startup.failed", "message": f"{type(exc).__name__}: {exc}"})
                return
            await send({"type": "lifespan.startup.complete"})
        elif msg["type"] == "lifespan.shutdown":
            try:
                await shutdown.finish()
            except BaseException as exc:  # noqa: BLE001 - reported to the ASGI server
                log.exception("the server's lifespan failed to shut down")
                await send({"type": "lifespan.shutdown.failed", "message": f"{type(exc).__name__}: {exc}"})
                return
            await send({"type": "lifespan.shutdown.complete"})
            return
