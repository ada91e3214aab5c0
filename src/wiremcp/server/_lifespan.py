"""The server's lifespan: setup that runs once per process around serving, and an orderly shutdown.

Rules:

* ``Server(lifespan=factory)``: ``factory(server)`` returns an async context
  manager (an ``@asynccontextmanager`` function taking the server is the
  usual one). It is entered when the first transport starts serving and
  exited when the last one stops: `Lifespan` counts its users, so a process
  that serves stdio, or an `MCPApp` whose ASGI lifespan is run both by the
  ASGI server and by a host application, enters it exactly once;
* what it yields is ``server.lifespan.value``, reached from a handler as
  ``ctx.lifespan``; asking for it while no lifespan is running is a
  `RuntimeError` naming the fix (a handler reached without a transport, e.g.
  ``server.handle`` called directly). A server without a lifespan gives None;
* a lifespan that fails on entry stops the transport from serving: the
  exception propagates (the ASGI lifespan answers ``lifespan.startup.failed``).
  So does a tool linked to a ``ui://`` resource the server does not have
  (`_apps.check_links`, run before the factory);
* shutdown runs in this order: the transport stops taking requests, ends the
  open ``subscriptions/listen`` streams with their ``complete`` result
  (``server.close_subscriptions()``), gives the requests in flight
  ``shutdown_grace`` seconds to finish and cancels the rest (`drain`); then
  the lifespan exits; then the server's tasks stop and its task store is
  closed (``server.tasks.aclose()``: a task still running is recorded
  ``failed``, SQLite's connection and thread are closed; the store reopens
  if the server serves again); then the worker thread pool is shut down
  (its threads finish the calls they run; the pool starts again if the
  server serves again). Mounted servers (``server.mount``) are entered and
  exited inside their parent's lifespan.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, AsyncContextManager, Callable, Iterable

from ._apps import check_links

if TYPE_CHECKING:
    import asyncio
    from ._server import Server

__all__ = ["Lifespan", "LifespanFactory", "DEFAULT_SHUTDOWN_GRACE", "drain"]

log = logging.getLogger("wiremcp.server")

#: Seconds the requests in flight get to finish on shutdown before they are cancelled.
DEFAULT_SHUTDOWN_GRACE = 5.0

#: ``Server(lifespan=...)``: called with the server, returns the async context manager to enter.
LifespanFactory = Callable[["Server"], AsyncContextManager[Any]]

_NOT_RUNNING = object()


class Lifespan:
    """The server's lifespan as a reusable, counted async context manager (see the module docs).

    ``async with server.lifespan as value:`` is what every transport does
    around serving; a host application that runs `MCPApp` does it through
    ``MCPApp.lifespan``.
    """

    __slots__ = ("server", "factory", "users", "_value", "_manager", "_children", "_entering")

    def __init__(self, server: Server, factory: LifespanFactory | None) -> None:
        if factory is not None and not callable(factory):
            raise TypeError(f"lifespan must be a function taking the server, not {factory!r}")
        self.server = server
        self.factory = factory
        #: How many transports (or hosts) are inside the lifespan now.
        self.users = 0
        self._value: Any = _NOT_RUNNING
        self._manager: AsyncContextManager[Any] | None = None
        self._children: list[AsyncContextManager[Any]] = []
        self._entering: asyncio.Future[None] | None = None

    @property
    def running(self) -> bool:
        """Whether the lifespan has been entered and not yet left."""
        return self._value is not _NOT_RUNNING

    @property
    def value(self) -> Any:
        """What the lifespan yielded (None without a lifespan); RuntimeError while none runs."""
        if self._value is _NOT_RUNNING:
            if self.factory is None:
                return None
            raise RuntimeError(
                f"the lifespan of server {self.server.name!r} is not running: serve the server with a "
                "transport (stdio, MCPApp with its ASGI lifespan, wiremcp.testing), or enter it yourself "
                "with `async with server.lifespan:`"
            )
        return self._value

    def include(self, child: AsyncContextManager[Any]) -> None:
        """Enter ``child`` (a mounted server's lifespan, lifespan-scoped dependencies) inside this one, before the factory."""
        self._children.append(child)

    def exclude(self, child: Lifespan) -> None:
        """Stop entering ``child`` (a server that was unmounted)."""
        self._children.remove(child)

    async def __aenter__(self) -> Any:
        import asyncio  # imported by then: on first use, not at start-up
        self.users += 1
        if self.users > 1:
            entering = self._entering
            if entering is not None:  # another user is starting it: wait for the same outcome
                try:
                    await asyncio.shield(entering)
                except BaseException:
                    self.users -= 1
                    raise
            return self._value
        entering = self._entering = asyncio.get_running_loop().create_future()
        try:
            entered: list[AsyncContextManager[Any]] = []
            try:
                check_links(self.server)  # a tool linked to a ui:// resource that is not registered (_apps)
                for child in self._children:
                    await child.__aenter__()
                    entered.append(child)
                if self.factory is not None:
                    manager = self.factory(self.server)
                    value = await manager.__aenter__()
                    self._manager = manager
                else:
                    value = None
            except BaseException:
                for child in reversed(entered):
                    await child.__aexit__(None, None, None)
                raise
        except BaseException as exc:
            self.users -= 1
            entering.set_exception(exc)
            entering.exception()  # retrieved: no "never retrieved" warning when nobody else waits
            self._entering = None
            raise
        self._value = value
        entering.set_result(None)
        self._entering = None
        return value

    async def __aexit__(self, kind: Any, exc: Any, tb: Any) -> bool:
        self.users -= 1
        if self.users > 0:
            return False
        manager, self._manager = self._manager, None
        self._value = _NOT_RUNNING
        try:
            if manager is not None:
                await manager.__aexit__(kind, exc, tb)
        finally:
            try:
                for child in reversed(self._children):
                    await child.__aexit__(None, None, None)
            finally:
                try:
                    tasks = self.server.tasks
                    if tasks is not None:
                        await tasks.aclose()
                finally:
                    self.server.workers.shutdown()
        return False


async def drain(tasks: Iterable[asyncio.Task[Any]], grace: float) -> int:
    """Wait up to ``grace`` seconds for ``tasks``, then cancel the rest; returns how many were cancelled."""
    import asyncio  # imported by then: on first use, not at start-up
    pending = {t for t in tasks if not t.done()}
    if not pending:
        return 0
    _, late = await asyncio.wait(pending, timeout=grace)
    for task in late:
        task.cancel()
    if late:
        log.warning("shutdown: %d request(s) still running after %g s were cancelled", len(late), grace)
        await asyncio.wait(late)
    return len(late)
