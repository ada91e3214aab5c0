"""`SQLiteFile`: one SQLite file served by one thread, the ground both SQLite stores stand on.

The key-value store (`_storage_sqlite.SQLiteStore`) and the task store
(`_tasks._sqlite.SQLiteTaskStore`) keep the same rules, kept here once:

* the file is the user's alone: mode 0600 (its directory, when created,
  0700), set on a file made before this rule or under another umask too; the
  ``-wal`` and ``-shm`` files SQLite makes take the database file's mode;
* stdlib ``sqlite3`` only, in WAL mode so readers never wait for the writer,
  ``synchronous=NORMAL`` (durable across a process crash; WAL's documented
  trade-off for an OS crash) and ``busy_timeout`` so processes sharing the
  file wait for each other instead of failing;
* the blocking work never runs on the event loop: every call goes to one
  dedicated thread that owns the connection (opened there on first use,
  never shared between threads);
* ``close`` closes the connection on its thread and joins the thread (none
  is left behind); a file used again after ``close`` opens both anew;
* a ``sqlite3.Error`` or an ``OSError`` becomes the store's own error type,
  naming the file and the cause;
* `immediate` is a ``BEGIN IMMEDIATE`` transaction (the write lock taken
  before the first read): committed when its block ends, rolled back when
  anything is raised in it.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import sqlite3
from pathlib import Path
from typing import Callable, Iterator, TypeVar

__all__ = ["SQLiteFile", "immediate", "state_path", "BUSY_TIMEOUT_MS"]

T = TypeVar("T")

#: Milliseconds a writer waits for another process's lock before failing.
BUSY_TIMEOUT_MS = 5_000


def state_path(filename: str) -> Path:
    """``$XDG_STATE_HOME/wiremcp/FILENAME`` (``~/.local/state`` when the variable is unset or empty)."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "wiremcp" / filename


@contextlib.contextmanager
def immediate(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A write transaction around the block: committed when it ends, rolled back on any exception."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


class SQLiteFile:
    """The file at ``path``, its connection and the one thread that owns it (see the module docs).

    ``setup`` runs once on each new connection (schema, migrations); ``error``
    makes the store's error from a message; ``what`` names the store in it
    ("the task store").
    """

    __slots__ = ("path", "_thread_name", "_setup", "_error", "_what", "_thread", "_db")

    def __init__(
        self,
        path: Path,
        *,
        thread_name: str,
        setup: Callable[[sqlite3.Connection], object],
        error: Callable[[str], Exception],
        what: str,
    ) -> None:
        self.path = path
        self._thread_name = thread_name
        self._setup = setup
        self._error = error
        self._what = what
        self._thread: concurrent.futures.ThreadPoolExecutor | None = None
        self._db: sqlite3.Connection | None = None

    @property
    def is_open(self) -> bool:
        """Whether a connection is open (between the first call and `close`)."""
        return self._db is not None

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # an existing one keeps its mode
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
            try:
                os.fchmod(fd, 0o600)
            finally:
                os.close(fd)
            db = sqlite3.connect(str(self.path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            self._setup(db)
            self._db = db
        return self._db

    async def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``fn(connection)`` on the file's thread; its ``sqlite3.Error`` or ``OSError`` as the store's error."""

        def job() -> T:
            try:
                return fn(self._connect())
            except sqlite3.Error as exc:
                raise self._error(f"{self._what} {str(self.path)!r} failed: {exc}") from exc
            except OSError as exc:
                raise self._error(f"{self._what} {str(self.path)!r} cannot be opened: {exc}") from exc

        if self._thread is None:
            self._thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix=self._thread_name)
        import asyncio  # loaded by then: a store is used on the event loop

        return await asyncio.get_running_loop().run_in_executor(self._thread, job)

    async def close(self) -> None:
        """Close the connection (on its thread), then end the thread; the next `run` opens both again."""
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
            thread.shutdown(wait=True)  # the thread is idle now: joining it takes no time
