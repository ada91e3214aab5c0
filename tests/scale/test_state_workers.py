"""Issue 27, state across workers: two real ``wiremcp run --http`` processes share one real redis-server.

tests/servers/kvstate.py on ``WIREMCP_REDIS_URL``: ``server.storage`` is a
`RedisStore` on the backend, so a 2025-11-25 session (kept in Redis, any
worker serves any of its requests) reads on one worker what it set on the
other; a 2026-07-28 principal (behind authorization) likewise, while another
principal reads nothing of it; ``server.storage`` keys set on one worker are
read on the other. Redis holds the session keys under digests, never a
session id or a subject in clear. `RedisStore` keeps the store contract.
"""

from __future__ import annotations

from typing import Any, Iterator

import orjson
import pytest

from wiremcp import Client

from .conftest import STATE_KEY, needs_services, sync
from .services import RedisServer, Worker, free_port
from .test_legacy_sessions import Peer as _Peer
from .test_legacy_sessions import call, initialize, text


class Peer(_Peer):
    def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        status, _, body = self.post(message)
        assert status == 200, body
        reply: dict[str, Any] = orjson.loads(body)
        return reply

pytest.importorskip("redis", reason="the Redis backend needs the [redis] extra")
pytest.importorskip("aiohttp", reason="the HTTP client needs the [http] extra")

pytestmark = [pytest.mark.slow, needs_services]

SERVER = "tests/servers/kvstate.py"


def _keys(redis_server: RedisServer) -> list[str]:
    import redis

    client = redis.Redis.from_url(redis_server.url)
    try:
        return sorted(k.decode() for k in client.keys("wiremcp:kv:*"))
    finally:
        client.close()


def _workers(redis_server: RedisServer, env: dict[str, str], ports: tuple[int, int] | None = None) -> tuple[Worker, Worker]:
    env = {"WIREMCP_REDIS_URL": redis_server.url, "WIREMCP_STATE_KEY": STATE_KEY, **env}
    first = Worker(SERVER, env, port=ports[0] if ports else None)
    try:
        return first, Worker(SERVER, env, port=ports[1] if ports else None)
    except BaseException:
        first.stop()
        raise


@pytest.fixture
def two_workers(redis_server: RedisServer) -> Iterator[tuple[Worker, Worker]]:
    a, b = _workers(redis_server, {})
    yield a, b
    b.stop()
    a.stop()


async def _text(client: Client, tool: str, arguments: dict[str, Any]) -> str:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.text
    return result.text


def test_a_legacy_session_reads_on_one_worker_what_it_set_on_the_other(
    two_workers: tuple[Worker, Worker], redis_server: RedisServer
) -> None:
    a, b = two_workers
    on_a = Peer(a.port)
    initialize(on_a)
    on_b = Peer(b.port, on_a.session)  # the same session, sent to the other worker
    assert text(on_a.ask(call(1, "remember", {"key": "colour", "value": "green"}))) == "ok"
    assert text(on_a.ask(call(2, "pid"))) == str(a.proc.pid)
    assert text(on_b.ask(call(3, "pid"))) == str(b.proc.pid)
    assert text(on_b.ask(call(4, "recall", {"key": "colour"}))) == "green"
    assert text(on_b.ask(call(5, "stamped"))) == "middleware saw stamped"
    other = Peer(b.port)  # another session, on either worker
    initialize(other)
    assert text(other.ask(call(6, "recall", {"key": "colour"}))) == "(none)"
    assert text(other.ask(call(7, "put", {"key": "greeting", "value": "hello"}))) == "ok"
    assert text(on_a.ask(call(8, "fetch", {"key": "greeting"}))) == "hello"  # server.storage: one for every worker
    keys = _keys(redis_server)
    assert "wiremcp:kv:greeting" in keys and sum(k.startswith("wiremcp:kv:session:") for k in keys) == 1
    assert not any(str(on_a.session) in k for k in keys)  # session keys are digests


@sync
async def test_a_modern_principal_on_two_workers(redis_server: RedisServer) -> None:
    ports = (free_port(), free_port())
    a, b = None, None
    try:
        a = Worker(SERVER, {"WIREMCP_REDIS_URL": redis_server.url, "WIREMCP_STATE_KEY": STATE_KEY, "KV_AUTH": "1",
                            "KV_RESOURCE": f"http://127.0.0.1:{ports[0]}/mcp"}, port=ports[0])
        b = Worker(SERVER, {"WIREMCP_REDIS_URL": redis_server.url, "WIREMCP_STATE_KEY": STATE_KEY, "KV_AUTH": "1",
                            "KV_RESOURCE": f"http://127.0.0.1:{ports[1]}/mcp"}, port=ports[1])

        def as_(worker: Worker, token: str) -> Client:
            return Client.http(worker.url, headers={"Authorization": f"Bearer {token}"}, era="modern")

        async with as_(a, "t-ann") as ann_a, as_(b, "t-ann") as ann_b, as_(b, "t-bob") as bob_b:
            assert await _text(ann_a, "remember", {"key": "plan", "value": "pro"}) == "ok"
            assert await _text(ann_b, "recall", {"key": "plan"}) == "pro"
            assert await _text(bob_b, "recall", {"key": "plan"}) == "(none)"
            assert await _text(ann_b, "forget", {"key": "plan"}) == "True"
            assert await _text(ann_a, "recall", {"key": "plan"}) == "(none)"
            assert await _text(ann_a, "remember", {"key": "plan", "value": "team"}) == "ok"
        keys = _keys(redis_server)
        assert len(keys) == 1 and keys[0].startswith("wiremcp:kv:session:") and "ann" not in keys[0]
    finally:
        for worker in (b, a):
            if worker is not None:
                worker.stop()


@sync
async def test_the_store_contract_on_redis(redis_server: RedisServer) -> None:
    """`RedisStore` keeps the contract of the other adapters (tests/server/test_session_state.py), with Redis's own expiry."""
    import redis

    from wiremcp.server.storage import InvalidKey, RedisStore, ValueTooLarge

    store = RedisStore(redis_server.url, prefix="t", max_value_bytes=64)
    try:
        assert await store.get("a") is None and await store.get("a", 5) == 5
        await store.set("a", {"x": [1, 2.5, "three", None, True]})
        assert await store.get("a") == {"x": [1, 2.5, "three", None, True]}
        await store.set("a/b", 1)
        await store.set("a*c", 2, ttl=30)  # a glob character in a key: the prefix is matched exactly
        await store.set("ab", 3)
        assert await store.keys("a") == ["a", "a*c", "a/b", "ab"]
        assert await store.keys("a*") == ["a*c"]
        assert await store.keys(limit=2) == ["a", "a*c"]
        assert await store.delete("ab") is True and await store.delete("ab") is False
        client = redis.Redis.from_url(redis_server.url)
        try:
            assert 0 < client.pttl("t:kv:a*c") <= 30_000 and client.pttl("t:kv:a") == -1
        finally:
            client.close()
        with pytest.raises(ValueTooLarge):
            await store.set("big", "x" * 100)
        with pytest.raises(InvalidKey):
            await store.set("", 1)
        with pytest.raises(TypeError):
            await store.set("k", {1, 2})
    finally:
        await store.close()
