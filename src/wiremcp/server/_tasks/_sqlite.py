"""`SQLiteTaskStore`: tasks in one SQLite file, the embedded durable default of ``wiremcp run``.

Rules it keeps (the file's own, mode 0600, WAL, one thread that owns the
connection, a ``close`` that joins it, are `.._sqlite_file.SQLiteFile`'s,
shared with the key-value store; task arguments and results may hold private
data, hence the mode):

* each read-modify-write (``set_status``, ``finish``, ``ask``, ``answer``,
  ``take_responses``) runs in one ``BEGIN IMMEDIATE`` transaction: it takes
  the write lock before it reads, so two processes cannot both win
  ``finish``, an answer is never lost, and a question answered by another
  process is never put back by ``ask``;
* ``create`` commits before it returns (tasks.md: the task is durably created
  before ``CreateTaskResult`` is sent);
* any ``sqlite3.Error`` becomes `TaskStoreError` naming the file and the
  cause.

The record is one JSON document per row, beside the columns the queries
filter on (owner, creation time, expiry, worker, status, lease, whether it
holds answers not taken); a file written before a column existed gets it
when opened. ``create_capped`` counts the live tasks and inserts in one
``BEGIN IMMEDIATE`` transaction; ``answered`` (the worker's one look per
second for answers, `_sweep`) reads an index of the tasks holding answers,
so its cost does not grow with the tasks waiting.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any, Callable, Literal

from .._sqlite_file import SQLiteFile, immediate, state_path
from ._memory import apply_answers, apply_ask, apply_finish, apply_status
from ._store import TERMINAL, TaskRecord, TaskStoreError, record_from_json, record_to_json

__all__ = ["SQLiteTaskStore", "default_task_db_path"]

#: The name (prefix) of the store's one thread.
THREAD_NAME = "wiremcp-tasks-sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
    task_id     TEXT PRIMARY KEY,
    owner       TEXT,
    created_at  REAL NOT NULL,
    expires_at  REAL,
    status      TEXT NOT NULL,
    worker      TEXT,
    data        TEXT NOT NULL,
    lease_until REAL,
    answered    INTEGER NOT NULL DEFAULT 0
);
"""
#: Columns added after the first files were written (`_migrate` adds them to an older file).
_ADDED = {"lease_until": "REAL", "answered": "INTEGER NOT NULL DEFAULT 0"}
_INDEXES = """
CREATE INDEX IF NOT EXISTS tasks_expiry ON tasks (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS tasks_owner ON tasks (owner, created_at, task_id);
CREATE INDEX IF NOT EXISTS tasks_worker ON tasks (worker) WHERE status IN ('working', 'input_required');
CREATE INDEX IF NOT EXISTS tasks_answered ON tasks (worker) WHERE answered = 1;
"""
#: A live task (counted against the caps, `_limits`): not terminal, TTL not elapsed, lease holding.
_LIVE = (
    "status IN ('working', 'input_required') AND (expires_at IS NULL OR expires_at > :now) "
    "AND (lease_until IS NULL OR lease_until >= :now)"
)


def default_task_db_path() -> Path:
    """``$XDG_STATE_HOME/wiremcp/tasks.sqlite3`` (``~/.local/state`` when the variable is unset or empty)."""
    return state_path("tasks.sqlite3")


class SQLiteTaskStore:
    """A `TaskStore` in an SQLite file (created, with its directory, on first use)."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_task_db_path()
        self._file = SQLiteFile(self.path, thread_name=THREAD_NAME, setup=_setup, error=TaskStoreError, what="the task store")

    async def _mutate(self, task_id: str, change: Callable[[TaskRecord], None]) -> TaskRecord | None:
        """Read, change and write one record in one write transaction."""

        def fn(db: sqlite3.Connection) -> TaskRecord | None:
            with immediate(db):
                row = db.execute("SELECT data FROM tasks WHERE task_id = ?", (task_id,)).fetchone()
                if row is None:
                    return None
                record = record_from_json(json.loads(row[0]))
                before = record_to_json(record)
                change(record)
                if record_to_json(record) != before:
                    _write(db, record, insert=False)
                return record

        return await self._file.run(fn)

    # -- the interface ----------------------------------------------------------

    async def create(self, record: TaskRecord) -> None:
        """Store a new record (``get`` finds it once this returns); TaskStoreError if the id exists."""
        def fn(db: sqlite3.Connection) -> None:
            try:
                _write(db, record, insert=True)
            except sqlite3.IntegrityError:
                raise TaskStoreError(f"a task with id {record.task_id!r} already exists") from None

        await self._file.run(fn)

    async def create_capped(self, record: TaskRecord, *, per_owner: int | None, total: int, now: float) -> None:
        """`create` unless a cap on live tasks is reached (`_limits.TaskCapReached`): counted and written in one
        write transaction, so processes sharing the file cannot both take the last place."""
        from ._limits import TaskCapReached

        def fn(db: sqlite3.Connection) -> None:
            try:
                with immediate(db):
                    if per_owner is not None:
                        (count,) = db.execute(f"SELECT count(*) FROM tasks WHERE owner = :owner AND {_LIVE}", {"owner": record.owner, "now": now}).fetchone()
                        if count >= per_owner:
                            raise TaskCapReached("owner", count, per_owner)
                    (count,) = db.execute(f"SELECT count(*) FROM tasks WHERE {_LIVE}", {"now": now}).fetchone()
                    if count >= total:
                        raise TaskCapReached("server", count, total)
                    _write(db, record, insert=True)
            except sqlite3.IntegrityError:
                raise TaskStoreError(f"a task with id {record.task_id!r} already exists") from None

        await self._file.run(fn)

    async def get(self, task_id: str) -> TaskRecord | None:
        """A copy of the record of ``task_id``, or None when there is no such task."""
        def fn(db: sqlite3.Connection) -> TaskRecord | None:
            row = db.execute("SELECT data FROM tasks WHERE task_id = ?", (task_id,)).fetchone()
            return None if row is None else record_from_json(json.loads(row[0]))

        return await self._file.run(fn)

    async def set_status(
        self,
        task_id: str,
        status: Literal["working", "input_required"],
        *,
        now: float,
        message: str | None = None,
        input_requests: dict[str, Any] | None = None,
    ) -> TaskRecord | None:
        """Set ``working`` / ``input_required`` (and ``input_requests``) unless terminal; the record after, or None."""
        def change(record: TaskRecord) -> None:
            if record.status not in TERMINAL:
                apply_status(record, status, now, message, input_requests)

        return await self._mutate(task_id, change)

    async def finish(
        self,
        task_id: str,
        status: Literal["completed", "failed", "cancelled"],
        *,
        now: float,
        message: str | None = None,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
    ) -> TaskRecord | None:
        """Move to a terminal status, only if not terminal yet (the first wins); the record after, or None."""
        def change(record: TaskRecord) -> None:
            if record.status not in TERMINAL:
                apply_finish(record, status, now, message, result, error)

        return await self._mutate(task_id, change)

    async def ask(self, task_id: str, requests: dict[str, Any], *, now: float, message: str | None = None) -> TaskRecord | None:
        """Add ``requests`` to the outstanding ones, go to ``input_required`` unless terminal; the record, or None."""
        def change(record: TaskRecord) -> None:
            if record.status not in TERMINAL:
                apply_ask(record, requests, now, message)

        return await self._mutate(task_id, change)

    async def answer(self, task_id: str, responses: dict[str, Any], *, now: float) -> TaskRecord | None:
        """``tasks/update``: keep the answers to outstanding keys (others ignored); the record after, or None."""
        def change(record: TaskRecord) -> None:
            if record.status not in TERMINAL:
                apply_answers(record, responses, now)

        return await self._mutate(task_id, change)

    async def take_responses(self, task_id: str) -> dict[str, Any]:
        """Pop the answers given so far (``{}`` when none, or no such task)."""
        taken: dict[str, Any] = {}

        def change(record: TaskRecord) -> None:
            taken.update(record.input_responses)
            record.input_responses = {}

        await self._mutate(task_id, change)
        return taken

    async def renew(self, worker: str, lease_until: float) -> None:
        """Extend to ``lease_until`` the lease of every non-terminal task ``worker`` runs (one statement)."""
        await self._file.run(
            lambda db: db.execute(
                "UPDATE tasks SET lease_until = :until, data = json_set(data, '$.lease_until', :until) "
                "WHERE worker = :worker AND status IN ('working', 'input_required')",
                {"until": lease_until, "worker": worker},
            )
            and None
        )

    async def answered(self, worker: str) -> list[str]:
        """The ids of ``worker``'s live tasks holding answers it has not taken: one query for all its waiters."""
        def fn(db: sqlite3.Connection) -> list[str]:
            rows = db.execute(
                "SELECT task_id FROM tasks WHERE worker = ? AND answered = 1 AND status IN ('working', 'input_required')", (worker,)
            ).fetchall()
            return [r[0] for r in rows]

        return await self._file.run(fn)

    async def live(self, worker: str) -> dict[str, float | None]:
        """``worker``'s non-terminal tasks: id -> when its TTL elapses (None: never)."""
        def fn(db: sqlite3.Connection) -> dict[str, float | None]:
            rows = db.execute(
                "SELECT task_id, expires_at FROM tasks WHERE worker = ? AND status IN ('working', 'input_required')", (worker,)
            ).fetchall()
            return {r[0]: r[1] for r in rows}

        return await self._file.run(fn)

    async def list_expired(self, now: float) -> list[str]:
        """The ids of the tasks whose TTL has fully elapsed at ``now``."""
        def fn(db: sqlite3.Connection) -> list[str]:
            rows = db.execute(
                "SELECT task_id FROM tasks WHERE expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at", (now,)
            ).fetchall()
            return [r[0] for r in rows]

        return await self._file.run(fn)

    async def delete(self, task_id: str) -> None:
        """Forget the task ``task_id`` (nothing happens when there is none)."""
        await self._file.run(lambda db: db.execute("DELETE FROM tasks WHERE task_id = ?", (task_id,)) and None)

    async def list(self, owner: str | None, *, after: str | None, limit: int) -> list[TaskRecord]:
        """Up to ``limit`` tasks of ``owner``, oldest first, after the task ``after`` (for ``tasks/list``)."""
        def fn(db: sqlite3.Connection) -> list[TaskRecord]:
            where, args = "owner IS ?", [owner]
            if after is not None:
                anchor = db.execute("SELECT created_at FROM tasks WHERE task_id = ?", (after,)).fetchone()
                if anchor is not None:
                    where += " AND (created_at, task_id) > (?, ?)"
                    args += [anchor[0], after]
            rows = db.execute(
                f"SELECT data FROM tasks WHERE {where} ORDER BY created_at, task_id LIMIT ?", (*args, limit)
            ).fetchall()
            return [record_from_json(json.loads(r[0])) for r in rows]

        return await self._file.run(fn)

    async def close(self) -> None:
        """Close the connection (on its thread), then end the thread; the next call opens both again."""
        await self._file.close()


def _setup(db: sqlite3.Connection) -> None:
    db.executescript(_SCHEMA)
    _migrate(db)
    db.executescript(_INDEXES)


def _migrate(db: sqlite3.Connection) -> None:
    """Add the columns a file written by an older version lacks, filled from each record's JSON."""
    have = {row[1] for row in db.execute("PRAGMA table_info(tasks)")}
    for column, kind in _ADDED.items():
        if column not in have:
            db.execute(f"ALTER TABLE tasks ADD COLUMN {column} {kind}")
    if "lease_until" not in have or "answered" not in have:
        db.execute(
            "UPDATE tasks SET lease_until = json_extract(data, '$.lease_until'), "
            "answered = (json_extract(data, '$.input_responses') <> '{}')"
        )


def _write(db: sqlite3.Connection, record: TaskRecord, *, insert: bool) -> None:
    data = json.dumps(record_to_json(record), separators=(",", ":"))
    values = (
        record.owner, record.created_at, record.expires_at(), record.status, record.worker, data,
        record.lease_until, 1 if record.input_responses else 0, record.task_id,
    )
    if insert:
        db.execute(
            "INSERT INTO tasks (owner, created_at, expires_at, status, worker, data, lease_until, answered, task_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            values,
        )
    else:
        db.execute(
            "UPDATE tasks SET owner = ?, created_at = ?, expires_at = ?, status = ?, worker = ?, data = ?, "
            "lease_until = ?, answered = ? WHERE task_id = ?",
            values,
        )
