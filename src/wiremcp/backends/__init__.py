"""Where a server keeps what several processes must share (docs/deploy.md).

A `Backend` holds the state that ties a client to one process unless it is
shared: today the change bus of ``subscriptions/listen`` (and of legacy
sessions' resource subscriptions). `InProcessBackend` is the default and
keeps everything in this process; `RedisBackend` (the ``[redis]`` extra,
`wiremcp.backends.redis`) shares it through one Redis server, so a
deployment scales by adding worker processes behind a load balancer.

Rules:

* one setting chooses the backend: ``Server(backend=...)``, else
  ``WIREMCP_REDIS_URL`` (a ``redis://`` or ``rediss://`` URL), else the
  in-process default;
* without Redis configured nothing imports redis-py: ``import wiremcp``, a
  stdio server and a single-process HTTP server never load it;
* a backend with ``shared = True`` is used by several processes, so every
  ``requestState`` must be sealed with a key they all hold: building a
  `Server` on a shared backend without ``state_keys`` or
  ``WIREMCP_STATE_KEY`` is a `ValueError` at start-up;
* ``start()`` runs when the server's lifespan is entered (the transport
  starts serving) and raises `BackendUnavailable` when the shared store
  cannot be reached: a server does not start half-connected; ``stop()``
  runs when the lifespan exits;
* a bus delivers the event ``None`` (``server.close_subscriptions()``, a
  worker shutting down) to this process's listeners only: one worker
  stopping never ends the streams the others keep open.

This package sits between ``protocol`` and ``server`` in the layers: the
server imports it, it imports nothing of the server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Literal, Optional, Protocol

if TYPE_CHECKING:
    from .redis import RedisBackend

__all__ = ["Backend", "BackendUnavailable", "ChangeBus", "Event", "InProcessBackend", "LocalBus", "RedisBackend", "from_url"]

#: What changed: ``(kind, uri or None)``; ``None`` ends every stream of this process.
Event = Optional[tuple[Literal["tools", "prompts", "resources", "updated"], Optional[str]]]


class BackendUnavailable(RuntimeError):
    """The shared store cannot be reached (at start-up, or while serving for what needs it)."""


class ChangeBus(Protocol):
    """Where list changes and resource updates travel to the subscribers: `LocalBus` in one process, `RedisBus` across workers."""

    def publish(self, event: Event) -> None:
        """Deliver ``event`` to every subscriber (on every worker, for a shared bus)."""
        ...

    def subscribe(self, deliver: Callable[[Event], None]) -> Callable[[], None]:
        """Register a callback for every event; returns the function that unregisters it."""
        ...


class LocalBus:
    """Fan-out within one process."""

    def __init__(self) -> None:
        self._listeners: set[Callable[[Event], None]] = set()

    def publish(self, event: Event) -> None:
        """Deliver ``event`` to every subscriber, in this process."""
        for deliver in list(self._listeners):
            deliver(event)

    def subscribe(self, deliver: Callable[[Event], None]) -> Callable[[], None]:
        """Call ``deliver`` with each event published; returns the function that unsubscribes it."""
        self._listeners.add(deliver)
        return lambda: self._listeners.discard(deliver)

    def __len__(self) -> int:
        return len(self._listeners)


class Backend(Protocol):
    """The shared state of a deployment; see the module docs for the rules."""

    #: True when several processes use this backend (they then need a shared requestState key).
    shared: bool

    @property
    def bus(self) -> ChangeBus:
        """The bus carrying the change events (`Server.notify_*`) to every listener."""

    async def start(self) -> None:
        """Connect; `BackendUnavailable` when the store cannot be reached."""
        ...

    async def stop(self) -> None:
        """Disconnect and release what `start` took."""


class InProcessBackend:
    """Everything in this process: the default, and what one worker needs."""

    shared = False

    def __init__(self, bus: ChangeBus | None = None) -> None:
        self._bus: ChangeBus = bus if bus is not None else LocalBus()

    @property
    def bus(self) -> ChangeBus:
        """The in-process bus: events reach the listeners of this process."""
        return self._bus

    async def start(self) -> None:
        """Nothing to connect to."""
        return None

    async def stop(self) -> None:
        """Nothing to release."""
        return None

    def __repr__(self) -> str:
        return "InProcessBackend()"


def from_url(url: str) -> Backend:
    """The backend a ``WIREMCP_REDIS_URL`` names (imports redis-py, the ``[redis]`` extra)."""
    from .redis import RedisBackend

    return RedisBackend(url)


def __getattr__(name: str) -> Any:
    # `wiremcp.backends.RedisBackend` without importing redis-py until it is asked for.
    if name == "RedisBackend":
        from .redis import RedisBackend

        return RedisBackend
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
