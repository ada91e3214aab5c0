"""Task records keep who may see them (owner: issuer, subject, client id) and their tool's scopes, in every
store, and a record written before scopes were kept is read the safe way (issue 23, defect 2).

The over-HTTP checks, with tokens from a real authorization server, are in
tests/auth/server/test_authorization.py; here the stores and the reading rule.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from wiremcp.jsonrpc import InvalidParams
from wiremcp.server import InsufficientScope
from wiremcp.server.tasks import MemoryTaskStore, TaskRecord
from wiremcp.server.transport import current_auth
from wiremcp.server._authorization import caller, check_task, task_visible

T0 = 1_000_000.0
ALICE_A = "https://as.example|sub:alice|client:console"
ALICE_B = "https://as.example|sub:alice|client:other-app"


class Token:
    """The fields of a verified ``AccessToken`` the checks read."""

    def __init__(self, client_id: str, scopes: set[str]) -> None:
        self.issuer = "https://as.example"
        self.subject = "alice"
        self.client_id = client_id
        self.scopes = frozenset(scopes)


def record(task_id: str = "t1", **fields: Any) -> TaskRecord:
    base: dict[str, Any] = dict(task_id=task_id, status="working", created_at=T0, updated_at=T0, ttl_ms=60_000, name="admin_job")
    base.update(fields)
    return TaskRecord(**base)


async def keeps_owner_and_scopes(store: Any) -> None:
    """The contract part: owner and scopes survive create, transitions and list (run on Redis by tests/scale)."""
    await store.create(record(owner=ALICE_A, scopes=["admin"]))
    await store.create(record("t2", owner=ALICE_B, scopes=[], created_at=T0 + 1))
    got = await store.get("t1")
    assert got is not None and got.owner == ALICE_A and got.scopes == ["admin"]
    parked = await store.set_status("t1", "input_required", now=T0 + 1, input_requests={"k": {"method": "elicitation/create"}})
    assert parked is not None and parked.scopes == ["admin"]
    done = await store.finish("t1", "completed", now=T0 + 2, result={"content": []})
    assert done is not None and done.owner == ALICE_A and done.scopes == ["admin"]
    assert [r.task_id for r in await store.list(ALICE_A, after=None, limit=10)] == ["t1"]
    assert [r.task_id for r in await store.list(ALICE_B, after=None, limit=10)] == ["t2"]
    assert await store.list("https://as.example|sub:alice", after=None, limit=10) == []  # the old owner form


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_stores_keep_owner_and_scopes(kind: str, tmp_path: Path) -> None:
    from wiremcp.server.tasks import SQLiteTaskStore

    async def main() -> None:
        store = MemoryTaskStore() if kind == "memory" else SQLiteTaskStore(tmp_path / "tasks.sqlite3")
        try:
            await keeps_owner_and_scopes(store)
        finally:
            await store.close()

    asyncio.run(main())


def test_the_caller_is_issuer_subject_and_client() -> None:
    assert caller() is None
    for client, expected in (("console", ALICE_A), ("other-app", ALICE_B)):
        reset = current_auth.set(Token(client, {"mcp"}))
        try:
            assert caller() == expected
        finally:
            current_auth.reset(reset)


def _as(token: Token | None, check: Any) -> Any:
    reset = current_auth.set(token)
    try:
        return check()
    finally:
        current_auth.reset(reset)


def test_check_task_owner_then_scopes() -> None:
    mine = record(owner=ALICE_A, scopes=["admin"])
    admin, low, other = Token("console", {"mcp", "admin"}), Token("console", {"mcp"}), Token("other-app", {"mcp", "admin"})
    _as(admin, lambda: check_task(mine, ALICE_A))
    with pytest.raises(InvalidParams) as foreign:
        _as(other, lambda: check_task(mine, ALICE_B))
    assert foreign.value.data == {"taskId": "t1", "reason": "foreign"}
    with pytest.raises(InsufficientScope) as refused:
        _as(low, lambda: check_task(mine, ALICE_A))
    assert refused.value.scopes == ("admin",)
    assert _as(admin, lambda: task_visible(mine, ALICE_A))
    assert not _as(low, lambda: task_visible(mine, ALICE_A))
    assert not _as(other, lambda: task_visible(mine, ALICE_B))


def test_a_record_from_before_the_upgrade_is_shown_to_no_authenticated_caller(tmp_path: Path) -> None:
    """An SQLite file written by the previous version: its row has no scopes and an owner without the client.
    The safe reading: no token sees it (not the owner's clients, not another's); unauthenticated records
    (a legacy session's) read as before."""
    from wiremcp.server.tasks import SQLiteTaskStore

    path = tmp_path / "tasks.sqlite3"
    old_owner = "https://as.example|sub:alice"  # the previous `_mrtr.caller()`: no client id
    store = SQLiteTaskStore(path)

    async def main() -> tuple[TaskRecord | None, TaskRecord | None]:
        await store.create(record("warm"))  # makes the file and its schema
        try:
            db = sqlite3.connect(str(path))
            for task_id, owner in (("old-auth", old_owner), ("old-session", "session:abc")):
                data = {k: v for k, v in record(task_id, owner=owner).to_json().items() if k != "scopes"}
                db.execute(
                    "INSERT INTO tasks (task_id, owner, created_at, expires_at, status, worker, data) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (task_id, owner, T0, None, "working", None, json.dumps(data)),
                )
            db.commit()
            db.close()
            return await store.get("old-auth"), await store.get("old-session")
        finally:
            await store.close()

    old, unauthenticated = asyncio.run(main())
    assert old is not None and old.scopes is None
    for token in (Token("console", {"mcp", "admin"}), Token("other-app", {"mcp", "admin"})):
        with pytest.raises(InvalidParams):
            _as(token, lambda: check_task(old, caller()))
        with pytest.raises(InvalidParams):  # even were the owner to match: no scopes kept, nothing shown
            _as(token, lambda: check_task(old, old_owner))
        assert not _as(token, lambda: task_visible(old, old_owner))
    assert unauthenticated is not None
    _as(None, lambda: check_task(unauthenticated, "session:abc"))
