"""Key-value storage for servers (docs/state.md): ``server.storage`` and ``ctx.session_state`` sit on it.

`KeyValueStore` is the port (async ``get``, ``set`` with a ``ttl``,
``delete``, ``keys`` by prefix, ``close``; JSON values, bounded sizes);
`MemoryStore` (this process, bounded), `SQLiteStore` (a file, kept across
restarts; sqlite3 loads on first use) and `RedisStore` (shared by every
worker; the ``[redis]`` extra) are its adapters. `SessionState` is what
``ctx.session_state`` returns; `StateUnavailable` is raised where a request
has no session. A server picks its store with ``Server(storage=...)``: a
store, ``"memory"``, ``"sqlite"``, ``"sqlite:PATH"``, ``"redis"`` or a
``redis://`` URL; unset, Redis on a Redis backend, else memory.

Each name loads its module on first use, as in `wiremcp.server`.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._state import DEFAULT_SESSION_TTL, SessionState, StateUnavailable
    from ._storage import (
        MAX_KEY_BYTES, MAX_LIST, MAX_VALUE_BYTES, InvalidKey, KeyValueStore, MemoryStore, StorageError, StorageFull,
        ValueTooLarge,
    )
    from ._storage_redis import RedisStore
    from ._storage_sqlite import SQLiteStore, default_storage_path
else:
    from ._lazy import lazy_names

    __getattr__, __dir__ = lazy_names(
        globals(),
        {
            **dict.fromkeys(
                ("KeyValueStore", "MemoryStore", "StorageError", "StorageFull", "InvalidKey", "ValueTooLarge",
                 "MAX_KEY_BYTES", "MAX_VALUE_BYTES", "MAX_LIST"),
                "_storage",
            ),
            **dict.fromkeys(("SQLiteStore", "default_storage_path"), "_storage_sqlite"),
            "RedisStore": "_storage_redis",
            **dict.fromkeys(("SessionState", "StateUnavailable", "DEFAULT_SESSION_TTL"), "_state"),
        },
    )

__all__ = [
    "KeyValueStore",
    "MemoryStore",
    "SQLiteStore",
    "RedisStore",
    "default_storage_path",
    "SessionState",
    "StateUnavailable",
    "StorageError",
    "StorageFull",
    "InvalidKey",
    "ValueTooLarge",
    "DEFAULT_SESSION_TTL",
    "MAX_KEY_BYTES",
    "MAX_VALUE_BYTES",
    "MAX_LIST",
]
