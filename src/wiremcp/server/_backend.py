"""The server's backend (`wiremcp.backends`): chosen from the settings, started with the lifespan.

Rules:

* ``Server(backend=...)`` wins; else ``WIREMCP_REDIS_URL`` builds a
  `RedisBackend` (the only place redis-py is imported from, and only then);
  else `InProcessBackend`, around the ``bus`` given to `Server` if any;
* a shared backend (several processes) needs a configured requestState key:
  without one each process would seal with its own random key and a retry
  reaching another worker would fail verification, so it is a `ValueError`
  when the `Server` is built, naming ``WIREMCP_STATE_KEY``;
* the backend starts when the server's lifespan is entered, before the
  user's lifespan, and stops after it (`with_backend`): a server whose
  backend cannot be reached does not start serving;
* on a Redis backend the task store is Redis too (`default_task_store`,
  `_backend_tasks.RedisTaskStore`), unless ``task_store=`` or
  ``WIREMCP_TASK_STORE`` names another: every worker sees every task.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable

from ..backends import Backend, ChangeBus, InProcessBackend, from_url
from ._settings import ENV_TASK_STORE, setting

if TYPE_CHECKING:
    from ._lifespan import LifespanFactory
    from ._server import Server
    from ._tasks import TaskStore

__all__ = ["choose_backend", "with_backend", "default_task_store"]


def choose_backend(backend: Backend | None, bus: ChangeBus | None, keys_configured: bool) -> Backend:
    """The backend a `Server` uses (see the module docs)."""
    if backend is None:
        url = setting("backend", None, "", str)
        backend = from_url(url) if url else InProcessBackend(bus)
    elif bus is not None:
        raise ValueError("give either backend= or bus= (the backend carries its own bus)")
    if backend.shared and not keys_configured:
        raise ValueError(
            f"{backend!r} is shared by several worker processes: set WIREMCP_STATE_KEY (or Server(state_keys=...)) "
            "to the same key on every worker, or a requestState sealed on one worker fails on another"
        )
    return backend


def with_backend(backend: Backend, factory: LifespanFactory | None) -> LifespanFactory | None:
    """The lifespan factory that starts ``backend`` around ``factory`` (unchanged for an in-process one)."""
    if isinstance(backend, InProcessBackend):
        return factory

    @asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[Any]:
        await backend.start()
        try:
            if factory is None:
                yield None
            else:
                async with factory(server) as value:
                    yield value
        finally:
            await backend.stop()

    return lifespan


def default_task_store(backend: Backend) -> Callable[[], TaskStore] | None:
    """The task store of a `Server` built without ``task_store=`` (None: in-process memory).

    ``WIREMCP_TASK_STORE``, when set, names it (``memory`` included); else a
    Redis backend's store; else None.
    """
    import os

    if os.environ.get(ENV_TASK_STORE, "").strip():
        from ._tasks import store_from_env

        return store_from_env()
    if not backend.shared:  # (wiremcp.backends.redis stays unimported without a shared backend)
        return None
    from ..backends.redis import RedisBackend
    from ._backend_tasks import RedisTaskStore

    if not isinstance(backend, RedisBackend):
        return None
    return lambda: RedisTaskStore(backend)
