"""State (issue 27) end to end: ``ctx.session_state``, ``ctx.request_state`` and ``server.storage`` over real transports.

* examples/state.py (the docs' example) over a real stdio subprocess and real
  HTTP on loopback, both eras: a cart per session, the middleware's stamp
  read by the tool, a counter shared by every session;
* isolation: two stdio processes sharing one SQLite file share
  ``server.storage`` but never each other's session keys; two 2025-11-25
  HTTP sessions, and two principals of 2026-07-28 HTTP behind
  authorization, never read each other's state; a 2026-07-28 request over
  HTTP without authorization has no session (`StateUnavailable`, logged);
* the SQLite store keeps ``server.storage`` across a process restart (a new
  process is a new stdio connection, so a new session: the old session's
  keys stay unreachable under their digest);
* in process: two in-memory connections are two sessions; the store a server
  picks from ``storage=``; the store's contract on the memory and SQLite
  adapters (bounds, TTL on a clock the test moves, prefixes). The Redis
  adapter's is in tests/scale/test_state_workers.py.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from _http_process import HTTPServer
from conftest import ROOT, SERVERS
from wiremcp import Client
from wiremcp.server import Context, Server
from wiremcp.server.storage import InvalidKey, MemoryStore, SQLiteStore, StorageFull, ValueTooLarge

EXAMPLE = str(ROOT / "examples" / "state.py")
KV = str(SERVERS / "kvstate.py")


def _stdio(path: str, era: str, env: dict[str, str] | None = None) -> Client:
    return Client.stdio(
        sys.executable, ["-m", "wiremcp", "run", path], env={**os.environ, **(env or {})}, era=era,  # type: ignore[arg-type]
    )


async def _shop(first: Client, second: Client) -> None:
    async with first as a, second as b:
        assert (await a.call_tool("add_to_cart", {"item": "milk"})).structured_content == {"result": ["milk"]}
        assert (await a.call_tool("add_to_cart", {"item": "eggs"})).structured_content == {"result": ["milk", "eggs"]}
        assert (await b.call_tool("cart", {})).structured_content == {"result": []}  # another session: its own cart
        assert (await b.call_tool("add_to_cart", {"item": "tea"})).structured_content == {"result": ["tea"]}
        assert (await a.call_tool("cart", {})).structured_content == {"result": ["milk", "eggs"]}
        first_visit = (await a.call_tool("count_visit", {})).text
        second_visit = (await b.call_tool("count_visit", {})).text
        assert first_visit.startswith("visit ") and "(request " in first_visit
        assert int(second_visit.split()[1]) == int(first_visit.split()[1]) + 1


@pytest.mark.slow
@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_the_example_over_stdio(era: str, tmp_path: Path) -> None:
    env = {"STATE_STORE": f"sqlite:{tmp_path / 'shop.sqlite3'}"}  # two processes, one file: the counter is shared
    asyncio.run(asyncio.wait_for(_shop(_stdio(EXAMPLE, era, env), _stdio(EXAMPLE, era, env)), 60))


@pytest.mark.slow
def test_the_example_over_http_in_the_legacy_era() -> None:
    pytest.importorskip("uvicorn")
    served = HTTPServer(EXAMPLE)
    try:
        asyncio.run(asyncio.wait_for(_shop(Client.http(served.url, era="legacy"), Client.http(served.url, era="legacy")), 60))
    finally:
        served.stop()


@pytest.mark.slow
@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_principals_never_share_state_over_http(era: str) -> None:
    pytest.importorskip("uvicorn")
    served = HTTPServer(KV, env={"KV_AUTH": "1"})

    def as_(token: str) -> Client:
        return Client.http(served.url, headers={"Authorization": f"Bearer {token}"}, era=era)  # type: ignore[arg-type]

    async def main() -> None:
        async with as_("t-ann") as ann, as_("t-bob") as bob:
            assert (await ann.call_tool("remember", {"key": "colour", "value": "green"})).text == "ok"
            assert (await ann.call_tool("recall", {"key": "colour"})).text == "green"
            assert (await bob.call_tool("recall", {"key": "colour"})).text == "(none)"
            assert (await bob.call_tool("mine", {})).text == ""
            assert (await ann.call_tool("stamped", {})).text == "middleware saw stamped"
        async with as_("t-ann") as again:  # a new connection: in 2026-07-28 the principal's state; in 2025-11-25 a new session
            expected = "green" if era == "modern" else "(none)"
            assert (await again.call_tool("recall", {"key": "colour"})).text == expected

    try:
        asyncio.run(asyncio.wait_for(main(), 60))
    finally:
        served.stop()


@pytest.mark.slow
def test_a_modern_http_request_without_auth_has_no_session_but_storage_works() -> None:
    pytest.importorskip("uvicorn")
    served = HTTPServer(KV)

    async def main() -> None:
        async with Client.http(served.url, era="modern") as c:
            refused = await c.call_tool("remember", {"key": "k", "value": "v"})
            assert refused.is_error
            assert (await c.call_tool("put", {"key": "k", "value": "v"})).text == "ok"
            assert (await c.call_tool("fetch", {"key": "k"})).text == "v"
            assert (await c.call_tool("stamped", {})).text == "middleware saw stamped"

    try:
        asyncio.run(asyncio.wait_for(main(), 60))
        log = served.log_path.read_text(errors="replace")
        assert "StateUnavailable" in log and "has no session" in log
    finally:
        served.stop()


@pytest.mark.slow
@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_sqlite_keeps_storage_across_a_restart_and_sessions_apart(era: str, tmp_path: Path) -> None:
    env = {"KV_STORAGE": f"sqlite:{tmp_path / 'kv.sqlite3'}"}

    async def first() -> None:
        async with _stdio(KV, era, env) as c:
            assert (await c.call_tool("put", {"key": "shared", "value": "kept"})).text == "ok"
            assert (await c.call_tool("remember", {"key": "mine", "value": "first process"})).text == "ok"
            assert (await c.call_tool("mine", {})).text == "mine"
            assert (await c.call_tool("stamped", {})).text == "middleware saw stamped"

    async def second() -> None:
        async with _stdio(KV, era, env) as c:
            assert (await c.call_tool("fetch", {"key": "shared"})).text == "kept"  # the file outlived the process
            assert (await c.call_tool("recall", {"key": "mine"})).text == "(none)"  # another connection, another session
            assert (await c.call_tool("fetch", {"key": "mine"})).text == "(none)"  # session keys are namespaced

    asyncio.run(asyncio.wait_for(first(), 60))
    asyncio.run(asyncio.wait_for(second(), 60))


# -- the store's contract, in process ----------------------------------------------


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_the_store_contract(kind: str, tmp_path: Path) -> None:
    store: Any = MemoryStore(max_keys=3, max_value_bytes=64) if kind == "memory" else SQLiteStore(tmp_path / "s.db", max_value_bytes=64)

    async def main() -> None:
        assert await store.get("a") is None and await store.get("a", 5) == 5
        await store.set("a", {"x": [1, 2.5, "three", None, True]})
        assert await store.get("a") == {"x": [1, 2.5, "three", None, True]}
        await store.set("a/b", 1)
        await store.set("a_c", 2)
        assert await store.keys("a") == ["a", "a/b", "a_c"]
        assert await store.keys("a/") == ["a/b"]
        assert await store.keys("A") == []  # prefixes are exact (case too)
        assert await store.keys(limit=2) == ["a", "a/b"]
        assert await store.delete("a_c") is True and await store.delete("a_c") is False
        with pytest.raises(ValueTooLarge):
            await store.set("big", "x" * 100)
        with pytest.raises(InvalidKey):
            await store.set("", 1)
        with pytest.raises(InvalidKey):
            await store.set("x" * 600, 1)
        with pytest.raises(InvalidKey):
            await store.get("bad\nkey")
        with pytest.raises(TypeError):
            await store.set("k", {1, 2})
        with pytest.raises(ValueError):
            await store.set("k", 1, ttl=0)
        if kind == "memory":
            await store.set("c", 3)
            with pytest.raises(StorageFull):
                await store.set("d", 4)
        await store.close()

    asyncio.run(main())


def test_an_expired_key_is_never_read(tmp_path: Path) -> None:
    """The stores read their clock through ``clock``: the test moves it, nothing sleeps."""
    now = [1000.0]

    async def main() -> None:
        for store in (MemoryStore(clock=lambda: now[0]), SQLiteStore(tmp_path / "t.db", clock=lambda: now[0])):
            await store.set("gone", 1, ttl=10)
            await store.set("kept", 2, ttl=3600)
            assert await store.get("gone") == 1
            now[0] += 10
            assert await store.get("gone") is None and await store.delete("gone") is False
            assert await store.keys() == ["kept"]
            await store.set("gone", 3)  # set again without a TTL: kept
            now[0] += 3600
            assert await store.keys() == ["gone"]
            await store.close()
            now[0] = 1000.0

    asyncio.run(main())


# -- in process: the in-memory transport, the choice of store ------------------------


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_two_in_memory_connections_are_two_sessions(era: str) -> None:
    import runpy

    server = runpy.run_path(EXAMPLE)["server"]

    async def main() -> None:
        async with Client.memory(server, era=era) as a, Client.memory(server, era=era) as b:  # type: ignore[arg-type]
            assert (await a.call_tool("add_to_cart", {"item": "milk"})).structured_content == {"result": ["milk"]}
            assert (await b.call_tool("cart", {})).structured_content == {"result": []}
            assert (await a.call_tool("cart", {})).structured_content == {"result": ["milk"]}
            assert (await a.call_tool("count_visit", {})).text == "visit 1 (request 4)"
        assert len(await server.storage.keys("session:")) == 1  # the one session that set a key

    asyncio.run(main())


def test_the_store_a_server_uses(tmp_path: Path) -> None:
    from wiremcp.server.storage import KeyValueStore

    assert isinstance(Server("a").storage, MemoryStore)
    assert isinstance(Server("b", storage="memory").storage, MemoryStore)
    chosen = Server("c", storage=f"sqlite:{tmp_path / 'c.db'}").storage
    assert isinstance(chosen, SQLiteStore) and chosen.path == tmp_path / "c.db"
    mine = MemoryStore(max_keys=5)
    assert Server("d", storage=mine).storage is mine and isinstance(mine, KeyValueStore)
    with pytest.raises(TypeError):
        Server("e", storage=42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs a Redis backend"):
        Server("f", storage="redis").storage
    with pytest.raises(ValueError, match="say memory"):
        Server("g", storage="postgres://x").storage


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_a_task_body_has_its_request_session(era: str) -> None:
    server = Server("tasked")

    @server.tool
    async def remember(value: str, ctx: Context) -> str:
        await ctx.session_state.set("v", value)
        return "ok"

    @server.tool(task="always")
    async def recall_later(ctx: Context) -> str:
        return str(await ctx.session_state.get("v"))

    async def main() -> None:
        async with Client.memory(server, era=era, tasks=True) as c:  # type: ignore[arg-type]
            assert (await c.call_tool("remember", {"value": "kept"})).text == "ok"
            assert (await c.call_tool("recall_later", {})).text == "kept"

    asyncio.run(main())
