"""`SQLiteStore`: the key-value store (`_storage.KeyValueStore`) in one SQLite file, kept across restarts.

The file's rules (mode 0600, WAL, one thread that owns the connection, a
``close`` that joins it, ``sqlite3.Error`` turned into the store's error) are
`_sqlite_file.SQLiteFile`'s, shared with the task store. Expiry is an absolute wall-clock time (seconds since the epoch) so that a TTL
keeps counting across a restart; an expired row is never read and is deleted
by the next write. Any ``sqlite3.Error`` becomes `StorageError` naming the file.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any, Callable

from ._sqlite_file import SQLiteFile, immediate, state_path
from ._storage import MAX_LIST, MAX_VALUE_BYTES, StorageError, check_key, check_limit, check_prefix, check_ttl, decode, encode

__all__ = ["SQLiteStore", "default_storage_path"]

#: The name (prefix) of the store's one thread.
THREAD_NAME = "wiremcp-storage-sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS kv (
    key        TEXT PRIMARY KEY,
    value      BLOB NOT NULL,
    expires_at REAL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS kv_expiry ON kv (expires_at) WHERE expires_at IS NOT NULL;
"""


def default_storage_path() -> Path:
    """``$XDG_STATE_HOME/wiremcp/storage.sqlite3`` (``~/.local/state`` when the variable is unset or empty)."""
    return state_path("storage.sqlite3")


class SQLiteStore:
    """A `KeyValueStore` in an SQLite file (created, with its directory, on first use)."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        max_value_bytes: int = MAX_VALUE_BYTES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = Path(path) if path is not None else default_storage_path()
        self.max_value_bytes = max_value_bytes
        self._clock = clock  # wall-clock seconds: an expiry outlives the process
        self._file = SQLiteFile(
            self.path, thread_name=THREAD_NAME, setup=lambda db: db.executescript(_SCHEMA), error=StorageError, what="the store"
        )

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self.path)!r})"

    async def get(self, key: str, default: Any = None) -> Any:
        """See `KeyValueStore.get`."""
        check_key(key)
        now = self._clock()
        row = await self._file.run(
            lambda db: db.execute(
                "SELECT value FROM kv WHERE key = ? AND (expires_at IS NULL OR expires_at > ?)", (key, now)
            ).fetchone()
        )
        return default if row is None else decode(row[0])

    async def set(self, key: str, value: Any, *, ttl: float | None = None) -> None:
        """See `KeyValueStore.set`."""
        check_key(key)
        seconds = check_ttl(ttl)
        data = encode(value, self.max_value_bytes)

        def fn(db: sqlite3.Connection) -> None:
            now = self._clock()
            with immediate(db):
                db.execute("DELETE FROM kv WHERE expires_at IS NOT NULL AND expires_at <= ?", (now,))
                db.execute(
                    "INSERT INTO kv (key, value, expires_at) VALUES (?, ?, ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at",
                    (key, data, None if seconds is None else now + seconds),
                )

        await self._file.run(fn)

    async def delete(self, key: str) -> bool:
        """See `KeyValueStore.delete`."""
        check_key(key)
        now = self._clock()

        def fn(db: sqlite3.Connection) -> bool:
            rows = db.execute("DELETE FROM kv WHERE key = ? RETURNING expires_at", (key,)).fetchall()
            return bool(rows) and (rows[0][0] is None or rows[0][0] > now)

        return await self._file.run(fn)

    async def keys(self, prefix: str = "", *, limit: int = MAX_LIST) -> list[str]:
        """See `KeyValueStore.keys`."""
        check_prefix(prefix)
        check_limit(limit)
        now = self._clock()
        rows = await self._file.run(
            lambda db: db.execute(
                "SELECT key FROM kv WHERE substr(key, 1, ?) = ? AND (expires_at IS NULL OR expires_at > ?) "
                "ORDER BY key LIMIT ?",
                (len(prefix), prefix, now, limit),
            ).fetchall()
        )
        return [r[0] for r in rows]

    async def close(self) -> None:
        """Close the connection (on its thread), then end the thread; the next call opens both again."""
        await self._file.close()
