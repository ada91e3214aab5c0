"""The `TaskStore` contract (src/wiremcp/server/_tasks/_store.py), run against every store we ship.

Each store must keep the same rules: create-then-get (tasks.md, "MUST NOT
return CreateTaskResult until the task is durably created"), the first
terminal transition wins (a cancel racing a completion), answers only to
outstanding keys (tasks.md, Task Update Requests: SHOULD ignore others;
MAY accept a partial set), TTL never early (tasks.md, Task Polling).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Awaitable, Callable

import pytest

from wiremcp.server.tasks import MemoryTaskStore, TaskRecord, TaskStore, TaskStoreError
from wiremcp.server._tasks._store import add_input_requests

T0 = 1_000_000.0


def make_store(kind: str, tmp_path: Path) -> Any:
    if kind == "memory":
        return MemoryTaskStore()
    from wiremcp.server.tasks import SQLiteTaskStore

    return SQLiteTaskStore(tmp_path / "tasks.sqlite3")


STORES = ["memory", "sqlite"]


def run(kind: str, tmp_path: Path, body: Callable[[Any], Awaitable[None]]) -> None:
    async def main() -> None:
        store = make_store(kind, tmp_path)
        try:
            await body(store)
        finally:
            await store.close()

    asyncio.run(main())


def record(task_id: str = "t1", **fields: Any) -> TaskRecord:
    base: dict[str, Any] = dict(task_id=task_id, status="working", created_at=T0, updated_at=T0, ttl_ms=60_000, poll_interval_ms=500)
    base.update(fields)
    return TaskRecord(**base)


@pytest.mark.parametrize("kind", STORES)
def test_create_then_get(kind, tmp_path):
    async def body(store):
        assert isinstance(store, TaskStore)
        await store.create(record(name="slow"))
        got = await store.get("t1")
        assert got is not None and got.status == "working" and got.name == "slow" and got.ttl_ms == 60_000
        assert await store.get("nope") is None
        with pytest.raises(TaskStoreError):
            await store.create(record())

    run(kind, tmp_path, body)


@pytest.mark.parametrize("kind", STORES)
def test_records_are_copies(kind, tmp_path):
    async def body(store):
        mine = record(input_requests={"a": {"method": "elicitation/create", "params": {}}})
        await store.create(mine)
        mine.input_requests["b"] = {}
        got = await store.get("t1")
        got.status = "completed"
        again = await store.get("t1")
        assert again.status == "working" and list(again.input_requests) == ["a"]

    run(kind, tmp_path, body)


@pytest.mark.parametrize("kind", STORES)
def test_first_terminal_transition_wins(kind, tmp_path):
    async def body(store):
        await store.create(record())
        done = await store.finish("t1", "completed", now=T0 + 1, result={"content": []})
        assert done.status == "completed" and done.result == {"content": []}
        late = await store.finish("t1", "cancelled", now=T0 + 2, message="cancelled")
        assert late.status == "completed" and late.result == {"content": []} and late.updated_at == T0 + 1
        still = await store.set_status("t1", "working", now=T0 + 3)
        assert still.status == "completed"
        assert await store.finish("nope", "cancelled", now=T0) is None

    run(kind, tmp_path, body)


@pytest.mark.parametrize("kind", STORES)
def test_answers_only_outstanding_keys_partial_then_all(kind, tmp_path):
    async def body(store):
        await store.create(record())
        asks = {"a": {"method": "elicitation/create", "params": {}}, "b": {"method": "elicitation/create", "params": {}}}
        parked = await store.set_status("t1", "input_required", now=T0 + 1, input_requests=asks)
        assert parked.status == "input_required" and set(parked.input_requests) == {"a", "b"}
        partial = await store.answer("t1", {"a": {"action": "accept"}, "zzz": {"ignored": True}}, now=T0 + 2)
        assert partial.status == "input_required" and list(partial.input_requests) == ["b"]
        assert partial.input_responses == {"a": {"action": "accept"}}
        again = await store.answer("t1", {"a": {"action": "decline"}}, now=T0 + 3)  # already answered: ignored
        assert again.input_responses == {"a": {"action": "accept"}}
        assert await store.take_responses("t1") == {"a": {"action": "accept"}}
        assert await store.take_responses("t1") == {}
        last = await store.answer("t1", {"b": {"action": "cancel"}}, now=T0 + 4)
        assert last.status == "working" and last.input_requests == {}
        assert await store.take_responses("t1") == {"b": {"action": "cancel"}}

    run(kind, tmp_path, body)


@pytest.mark.parametrize("kind", STORES)
def test_asking_adds_to_the_outstanding_keys_and_never_puts_an_answered_one_back(kind, tmp_path):
    """Two questions of one task asked at different times: the second ask keeps the first if it is
    unanswered, and does not bring it back once it is answered (the task then waits for the second only)."""

    async def body(store):
        await store.create(record())
        q = {"method": "elicitation/create", "params": {}}
        first = await add_input_requests(store, "t1", {"a": q}, now=T0 + 1, message="waiting")
        assert first.status == "input_required" and list(first.input_requests) == ["a"] and first.status_message == "waiting"
        both = await add_input_requests(store, "t1", {"b": q}, now=T0 + 2, message="waiting")
        assert set(both.input_requests) == {"a", "b"}
        await store.answer("t1", {"a": {"action": "accept"}}, now=T0 + 3)  # another worker's tasks/update
        third = await add_input_requests(store, "t1", {"c": q}, now=T0 + 4, message="waiting")
        assert set(third.input_requests) == {"b", "c"} and third.input_responses == {"a": {"action": "accept"}}
        await store.answer("t1", {"b": {"action": "accept"}, "c": {"action": "accept"}}, now=T0 + 5)
        done = await store.get("t1")
        assert done.status == "working" and done.input_requests == {}
        await store.finish("t1", "cancelled", now=T0 + 6)
        late = await add_input_requests(store, "t1", {"d": q}, now=T0 + 7, message="waiting")
        assert late.status == "cancelled" and late.input_requests == {}
        assert await add_input_requests(store, "nope", {"d": q}, now=T0, message=None) is None

    run(kind, tmp_path, body)


@pytest.mark.parametrize("kind", STORES)
def test_ttl_never_expires_early(kind, tmp_path):
    async def body(store):
        await store.create(record("short", ttl_ms=1_000))
        await store.create(record("forever", ttl_ms=None))
        assert await store.list_expired(T0 + 0.999) == []
        assert not (await store.get("short")).expired(T0 + 0.999)
        assert await store.list_expired(T0 + 1.0) == ["short"]
        assert (await store.get("short")).expired(T0 + 1.0)
        await store.delete("short")
        assert await store.get("short") is None
        assert await store.list_expired(T0 + 10**9) == []

    run(kind, tmp_path, body)


@pytest.mark.parametrize("kind", STORES)
def test_renew_and_list_by_owner(kind, tmp_path):
    async def body(store):
        await store.create(record("a", owner="alice", worker="w1", lease_until=T0 + 5))
        await store.create(record("b", owner="alice", worker="w2", lease_until=T0 + 5, created_at=T0 + 1))
        await store.create(record("c", owner="bob", worker="w1", lease_until=T0 + 5, created_at=T0 + 2))
        await store.renew("w1", T0 + 50)
        assert (await store.get("a")).lease_until == T0 + 50
        assert (await store.get("b")).lease_until == T0 + 5
        assert [r.task_id for r in await store.list("alice", after=None, limit=10)] == ["a", "b"]
        assert [r.task_id for r in await store.list("alice", after="a", limit=10)] == ["b"]
        assert [r.task_id for r in await store.list("alice", after=None, limit=1)] == ["a"]
        assert [r.task_id for r in await store.list(None, after=None, limit=10)] == []

    run(kind, tmp_path, body)


@pytest.mark.parametrize("kind", STORES)
def test_create_capped_counts_the_live_tasks_in_the_store(kind, tmp_path):
    """The caps of _limits: live = not terminal, TTL not elapsed, lease holding; counted per owner and in all."""
    from wiremcp.server._tasks._limits import TaskCapReached

    async def body(store):
        now = T0 + 10
        live = dict(worker="w1", lease_until=now + 30)
        await store.create_capped(record("a1", owner="alice", **live), per_owner=2, total=4, now=now)
        await store.create_capped(record("a2", owner="alice", **live), per_owner=2, total=4, now=now)
        with pytest.raises(TaskCapReached) as refused:
            await store.create_capped(record("a3", owner="alice", **live), per_owner=2, total=4, now=now)
        assert (refused.value.scope, refused.value.count, refused.value.limit) == ("owner", 2, 2)
        assert await store.get("a3") is None
        await store.create_capped(record("b1", owner="bob", **live), per_owner=2, total=4, now=now)
        await store.create_capped(record("n1", owner=None, **live), per_owner=None, total=4, now=now)
        with pytest.raises(TaskCapReached) as refused:
            await store.create_capped(record("b2", owner="bob", **live), per_owner=2, total=4, now=now)
        assert (refused.value.scope, refused.value.count, refused.value.limit) == ("server", 4, 4)
        # Not live any more: finished, TTL elapsed, worker's lease lapsed. Each frees its place.
        await store.finish("a1", "completed", now=now, result={"content": []})
        await store.create_capped(record("a3", owner="alice", **live), per_owner=2, total=4, now=now)
        await store.create(record("old", owner="bob", worker="w1", lease_until=now + 30, ttl_ms=1_000))
        await store.create(record("dead", owner="bob", worker="w0", lease_until=now - 1))
        await store.delete("b1")
        await store.create_capped(record("b2", owner="bob", **live), per_owner=2, total=4, now=now)
        with pytest.raises(TaskCapReached):
            await store.create_capped(record("b3", owner="bob", **live), per_owner=5, total=4, now=now)
        with pytest.raises(TaskStoreError):
            await store.create_capped(record("a2", owner="alice", **live), per_owner=9, total=9, now=now)

    run(kind, tmp_path, body)


@pytest.mark.parametrize("kind", STORES)
def test_answered_and_live_are_one_look_for_all_of_a_workers_tasks(kind, tmp_path):
    """_sweep: which of a worker's tasks hold answers not taken; which are still live, and until when."""
    async def body(store):
        asked = {"k": {"method": "elicitation/create", "params": {}}}
        for task_id, worker in (("x", "w1"), ("y", "w1"), ("z", "w2")):
            await store.create(record(task_id, worker=worker, lease_until=T0 + 30))
            await store.ask(task_id, asked, now=T0)
        assert await store.answered("w1") == []
        await store.answer("y", {"k": {"action": "accept"}}, now=T0)
        await store.answer("z", {"k": {"action": "accept"}}, now=T0)
        assert await store.answered("w1") == ["y"] and await store.answered("w2") == ["z"]
        assert await store.take_responses("y") == {"k": {"action": "accept"}}
        assert await store.answered("w1") == []
        assert await store.live("w1") == {"x": T0 + 60, "y": T0 + 60}
        await store.finish("x", "cancelled", now=T0)
        assert await store.live("w1") == {"y": T0 + 60}
        await store.renew("w1", T0 + 90)
        assert (await store.get("y")).lease_until == T0 + 90
        assert (await store.get("y")).input_requests == {} and (await store.get("y")).status == "working"

    run(kind, tmp_path, body)


def test_an_sqlite_file_from_before_the_caps_is_migrated(tmp_path):
    """A file written without the lease/answered columns gets them, filled from each record, when opened."""
    import json
    import sqlite3

    from wiremcp.server.tasks import SQLiteTaskStore

    path = tmp_path / "old.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE tasks (task_id TEXT PRIMARY KEY, owner TEXT, created_at REAL NOT NULL, expires_at REAL,"
        " status TEXT NOT NULL, worker TEXT, data TEXT NOT NULL);"
    )
    old = record("old", worker="w1", lease_until=T0 + 30, input_responses={"k": {"action": "accept"}})
    db.execute("INSERT INTO tasks VALUES (?, ?, ?, ?, ?, ?, ?)",
               ("old", None, T0, T0 + 60, "working", "w1", json.dumps(old.to_json())))
    db.commit()
    db.close()

    async def main() -> None:
        store = SQLiteTaskStore(path)
        try:
            assert await store.answered("w1") == ["old"]
            assert await store.get("old") == old
        finally:
            await store.close()

    asyncio.run(main())


@pytest.mark.slow
def test_the_tasks_bench_runs(tmp_path):
    """bench/tasks_bench.py --tiny completes and prints its table (no timing asserted)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[3]
    done = subprocess.run([sys.executable, str(root / "bench" / "tasks_bench.py"), "--tiny"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| store") or line.startswith("| server")]
    assert [r.split("|")[1:3] for r in rows] == [[" store ", " memory "], [" store ", " sqlite "], [" server ", " memory "], [" server ", " sqlite "]]


def test_records_round_trip_through_json():
    import json

    full = record(owner="o", worker="h:1:b", lease_until=T0 + 30, result={"content": [{"type": "text", "text": "x"}]},
                  error=None, input_requests={"k": {"method": "elicitation/create", "params": {}}}, input_responses={"j": {"action": "accept"}},
                  status_message="m", name="tool", era="legacy")
    again = TaskRecord.from_json(json.loads(json.dumps(full.to_json())))
    assert again == full and again is not full
