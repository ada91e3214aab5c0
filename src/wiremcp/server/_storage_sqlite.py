"""`SQLiteStore`: the key-value store (`_storage.KeyValueStore`) in one SQLite file, kept across restarts.

The same rules as the task store's file (`_tasks._sqlite`): stdlib ``sqlite3``
only; the file mode 0600 (its directory, when made, 0700); WAL,
``synchronous=NORMAL`` and ``busy_timeout`` so several processes may share the
file; every call runs on one dedicated thread that owns the connection, never
on the event loop; ``close`` closes the connection and joins the thread.
Expiry is an absolute wall-clock time (seconds since the epoch) so that a TTL
keeps counting across a restart; an expired row is never read and is deleted
by the next write. Any ``sqlite3.Error`` becomes `StorageError` naming the file.
"""

from __future__ import annotations

import concurrent.futures
import os
import sqlite3
import time
from pathlib import Path
from typing import Any, Callable, TypeVar

from ._storage import MAX_LIST, MAX_VALUE_BYTES, StorageError, check_key, check_limit, check_prefix, check_ttl, decode, encode

__all__ = ["SQLiteStore", "default_storage_path"]

T = TypeVar("T")

THREAD_NAME = "wiremcp-storage-sqlite"
BUSY_TIMEOUT_MS = 5_000

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
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "wiremcp" / "storage.sqlite3"


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
        self._thread: concurrent.futures.ThreadPoolExecutor | None = None
        self._db: sqlite3.Connection | None = None

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self.path)!r})"

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
            try:
                os.fchmod(fd, 0o600)
            finally:
                os.close(fd)
            db = sqlite3.connect(str(self.path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            db.executescript(_SCHEMA)
            self._db = db
        return self._db

    async def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        def job() -> T:
            try:
                return fn(self._connect())
            except sqlite3.Error as exc:
                raise StorageError(f"the store {str(self.path)!r} failed: {exc}") from exc
            except OSError as exc:
                raise StorageError(f"the store {str(self.path)!r} cannot be opened: {exc}") from exc

        if self._thread is None:
            self._thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix=THREAD_NAME)
        import asyncio

        return await asyncio.get_running_loop().run_in_executor(self._thread, job)

    async def get(self, key: str, default: Any = None) -> Any:
        """See `KeyValueStore.get`."""
        check_key(key)
        now = self._clock()
        row = await self._run(
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
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute("DELETE FROM kv WHERE expires_at IS NOT NULL AND expires_at <= ?", (now,))
                db.execute(
                    "INSERT INTO kv (key, value, expires_at) VALUES (?, ?, ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at",
                    (key, data, None if seconds is None else now + seconds),
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

        await self._run(fn)

    async def delete(self, key: str) -> bool:
        """See `KeyValueStore.delete`."""
        check_key(key)
        now = self._clock()

        def fn(db: sqlite3.Connection) -> bool:
            rows = db.execute("DELETE FROM kv WHERE key = ? RETURNING expires_at", (key,)).fetchall()
            return bool(rows) and (rows[0][0] is None or rows[0][0] > now)

        return await self._run(fn)

    async def keys(self, prefix: str = "", *, limit: int = MAX_LIST) -> list[str]:
        """See `KeyValueStore.keys`."""
        check_prefix(prefix)
        check_limit(limit)
        now = self._clock()
        rows = await self._run(
            lambda db: db.execute(
                "SELECT key FROM kv WHERE substr(key, 1, ?) = ? AND (expires_at IS NULL OR expires_at > ?) "
                "ORDER BY key LIMIT ?",
                (len(prefix), prefix, now, limit),
            ).fetchall()
        )
        return [r[0] for r in rows]

    async def close(self) -> None:
        """Close the connection (on its thread), then end the thread; the next call opens both again."""
        thread, self._thread = self._thread, None
        if thread is None:
            return

        def fn() -> None:
            db, self._db = self._db, None
            if db is not None:
                db.close()

        try:
            import asyncio

            await asyncio.get_running_loop().run_in_executor(thread, fn)
        finally:
            thread.shutdown(wait=True)
