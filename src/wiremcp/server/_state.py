"""Session state on the server's store (``ctx.session_state``), and the choice of that store (``server.storage``).

Loaded on first use of either: a server that uses neither never imports it.

What a "session" is (docs/state.md, "What a session is"):

* **2025-11-25** (legacy): the session the client opened with ``initialize``:
  over HTTP its ``Mcp-Session-Id`` (the same on every worker when sessions
  are kept in Redis), over stdio the connection. Behind authorization the
  verified principal is part of the scope too, so a session id presented
  with another principal's token finds nothing;
* **2026-07-28** (modern, no sessions on the wire): behind authorization,
  the verified principal (issuer, subject, OAuth client): every request of
  that principal and client shares the state, on every worker, across
  reconnections; off HTTP without authorization (stdio, the in-memory
  transport), the connection; over HTTP without authorization nothing
  identifies the caller (any header would be the client's own claim), so
  ``ctx.session_state`` raises `StateUnavailable` rather than share one
  state between strangers.

Each scope is a digest (SHA-256) in the key, ``session:{digest}:{key}``: no
scope reads another's keys, and the store never holds a session id or a
subject in clear. Every ``set`` (re)starts the key's TTL
(`DEFAULT_SESSION_TTL`, or the ``ttl`` given).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from ._context import current_headers, current_peer
from ._storage import MAX_LIST, KeyValueStore, MemoryStore, check_key

if TYPE_CHECKING:
    from ._context import Context
    from ._server import Server

__all__ = ["SessionState", "StateUnavailable", "DEFAULT_SESSION_TTL", "session_scope", "choose_storage"]

#: Seconds a session state key lives after its last ``set`` (a day).
DEFAULT_SESSION_TTL = 24 * 3600.0


class StateUnavailable(RuntimeError):
    """``ctx.session_state`` where nothing identifies a session (2026-07-28 over HTTP without authorization)."""


def session_scope(ctx: Context) -> str:
    """The string naming the request's session (see the module docs); StateUnavailable when there is none."""
    who = None if ctx.auth is None else _principal(ctx.auth)
    session = ctx.meta.session or getattr(ctx.meta, "origin_session", None)  # a task's: its request's session
    if session is not None:
        sid = getattr(session, "id", None)
        if sid is None:  # stdio: the session is the connection
            peer = current_peer.get()
            sid = f"connection:{peer.id}" if peer is not None else f"object:{id(session)}"
        return f"legacy|{who or '-'}|{sid}"
    if who is not None:
        return f"principal|{who}"
    peer = current_peer.get()
    if peer is not None and current_headers.get() is None:
        return f"connection|{peer.id}"
    raise StateUnavailable(
        "ctx.session_state: a 2026-07-28 request over HTTP without authorization has no session "
        "(nothing identifies its caller); serve with Server(auth=...) so the state is the principal's, "
        "or keep state under keys of your own in server.storage (docs/state.md)"
    )


def _principal(token: Any) -> str:
    return f"{getattr(token, 'issuer', None)}|sub:{getattr(token, 'subject', None)}|client:{getattr(token, 'client_id', None)}"


class SessionState:
    """One session's keys on the server's store (``ctx.session_state``); see the module docs."""

    __slots__ = ("store", "namespace", "ttl")

    def __init__(self, store: KeyValueStore, scope: str, ttl: float = DEFAULT_SESSION_TTL) -> None:
        self.store = store
        self.namespace = f"session:{hashlib.sha256(scope.encode('utf-8', 'surrogatepass')).hexdigest()[:32]}:"
        self.ttl = ttl

    def __repr__(self) -> str:
        return f"<SessionState {self.namespace[:-1]} on {self.store!r}>"

    def _key(self, key: str) -> str:
        return self.namespace + check_key(key)

    async def get(self, key: str, default: Any = None) -> Any:
        """The session's value of ``key``, or ``default``."""
        return await self.store.get(self._key(key), default)

    async def set(self, key: str, value: Any, *, ttl: float | None = None) -> None:
        """Store ``value`` (JSON) for this session; it expires ``ttl`` seconds (default a day) after this set."""
        await self.store.set(self._key(key), value, ttl=self.ttl if ttl is None else ttl)

    async def delete(self, key: str) -> bool:
        """Remove the session's ``key``; whether it was there."""
        return await self.store.delete(self._key(key))

    async def keys(self, prefix: str = "", *, limit: int = MAX_LIST) -> list[str]:
        """The session's keys starting with ``prefix`` (without the namespace), sorted."""
        cut = len(self.namespace)
        return [k[cut:] for k in await self.store.keys(self.namespace + prefix, limit=limit)]

    async def clear(self) -> int:
        """Remove every key of the session; how many were removed."""
        removed = 0
        while True:
            batch = await self.store.keys(self.namespace)
            for key in batch:
                removed += await self.store.delete(key)
            if len(batch) < MAX_LIST:
                return removed


def session_state(ctx: Context) -> SessionState:
    """``ctx.session_state``: the request's session scope on ``ctx.server.storage``."""
    return SessionState(ctx.server.storage, session_scope(ctx))


def choose_storage(server: Server, spec: Any) -> KeyValueStore:
    """The store ``Server(storage=spec)`` names: an instance; ``"memory"``; ``"sqlite"`` or ``"sqlite:PATH"``;
    ``"redis"`` (the backend's Redis) or a ``redis://`` URL. None: Redis on a Redis backend, else memory."""
    if spec is None:
        if getattr(server.backend, "shared", False):
            from ..backends.redis import RedisBackend

            if isinstance(server.backend, RedisBackend):
                from ._storage_redis import RedisStore

                return RedisStore(server.backend)
        return MemoryStore()
    if not isinstance(spec, str):
        if not isinstance(spec, KeyValueStore):
            raise TypeError(f"storage= is a KeyValueStore or a name (memory, sqlite[:PATH], redis[://...]), not {spec!r}")
        return spec
    return _named(server, spec)


def _named(server: Server, spec: str) -> KeyValueStore:
    kind, _, rest = spec.partition(":")
    if spec == "memory":
        return MemoryStore()
    if kind == "sqlite":
        from ._storage_sqlite import SQLiteStore

        return SQLiteStore(rest or None)
    if spec == "redis":
        from ..backends.redis import RedisBackend
        from ._storage_redis import RedisStore

        if not isinstance(server.backend, RedisBackend):
            raise ValueError("storage='redis' needs a Redis backend (WIREMCP_REDIS_URL); or give a redis:// URL")
        return RedisStore(server.backend)
    if kind in ("redis", "rediss", "unix"):
        from ._storage_redis import RedisStore

        return RedisStore(spec)
    raise ValueError(f"storage={spec!r}: say memory, sqlite, sqlite:PATH, redis or a redis:// URL")
