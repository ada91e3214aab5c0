"""Issue 27, rate limiting across workers: two real ``wiremcp run --http`` processes share one real redis-server.

tests/servers/middleware_kit.py limits ``tools/call`` to 3 per minute per
caller. With ``KIT_REDIS_URL`` its `RateLimit` keeps the buckets in Redis
(`wiremcp.backends.redis.rate.RedisRateStore`), so a client that spreads its
calls over both workers still gets 3 in all, and the fourth is HTTP 429 with
``Retry-After`` and -32000 ``data.retryAfterMs``, whichever worker it
reaches. Without Redis (the memory store) each worker counts alone: the same
client gets 3 from each (the "before"). Redis lost: the limit is not lifted,
the request is refused with 503. A 2025-11-25 session kept in Redis gets the same 429 on whichever
worker its refused request reaches.
"""

from __future__ import annotations

import http.client
from typing import Any, Iterator

import orjson
import pytest

from .conftest import needs_services
from .services import RedisServer, Worker

pytestmark = [pytest.mark.slow, needs_services]

SERVER = "tests/servers/middleware_kit.py"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "0"},
}


def echo(port: int, id_: int, source: str = "127.0.0.1") -> tuple[int, dict[str, str], dict[str, Any]]:
    message = {"jsonrpc": "2.0", "id": id_, "method": "tools/call",
               "params": {"name": "echo", "arguments": {"text": str(id_)}, "_meta": META}}
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15, source_address=(source, 0))
    try:
        conn.request("POST", "/mcp", orjson.dumps(message), {
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo",
        })
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, orjson.loads(resp.read())
    finally:
        conn.close()


@pytest.fixture
def two_workers(redis_server: RedisServer) -> Iterator[tuple[Worker, Worker]]:
    env = {"KIT_REDIS_URL": redis_server.url, "KIT_RATE": "3"}
    first = Worker(SERVER, env)
    try:
        second = Worker(SERVER, env)
    except BaseException:
        first.stop()
        raise
    yield first, second
    second.stop()
    first.stop()


def test_one_limit_across_two_workers_on_redis(two_workers: tuple[Worker, Worker], redis_server: RedisServer) -> None:
    a, b = two_workers
    statuses = [echo(worker.port, i, "127.0.0.2")[0] for i, worker in enumerate([a, b, a])]
    assert statuses == [200, 200, 200]
    for worker in (b, a):  # the fourth and fifth, on either worker
        status, headers, body = echo(worker.port, 9, "127.0.0.2")
        assert status == 429, body
        assert body["error"]["code"] == -32000 and 0 < body["error"]["data"]["retryAfterMs"] <= 20_000
        assert int(headers["retry-after"]) == -(-body["error"]["data"]["retryAfterMs"] // 1000)
    # another client (address) has its own share, on both workers
    assert [echo(worker.port, 20, "127.0.0.3")[0] for worker in (b, a)] == [200, 200]
    assert redis_server.command("KEYS", "kit:rate:*") == "*2"  # one bucket per client, nothing else


def test_without_redis_each_worker_counts_alone() -> None:
    a, b = Worker(SERVER, {"KIT_RATE": "3"}), None
    try:
        b = Worker(SERVER, {"KIT_RATE": "3"})
        statuses = [echo(worker.port, i)[0] for i, worker in enumerate([a, b] * 4)]
        assert statuses == [200] * 6 + [429] * 2  # 3 per worker: the memory store is per process
    finally:
        a.stop()
        if b is not None:
            b.stop()


def test_redis_lost_refuses_rather_than_lifting_the_limit(two_workers: tuple[Worker, Worker], redis_server: RedisServer) -> None:
    a, _ = two_workers
    assert echo(a.port, 1)[0] == 200
    redis_server.kill()
    status, headers, body = echo(a.port, 2)
    assert status == 503 and headers["retry-after"] == "1"  # the transport's own figure: no wait is known
    assert body["error"]["code"] == -32000 and "rate limit cannot be checked" in body["error"]["message"]
    assert "rate limit store" in a.log()


def test_a_legacy_session_on_redis_gets_429_from_either_worker(redis_server: RedisServer) -> None:
    """A 2025-11-25 session kept in Redis (``WIREMCP_REDIS_URL``: any worker serves any of its messages): the
    POST carrying only the refused request is 429 with ``Retry-After``, as on one worker and as in 2026-07-28."""
    env = {"KIT_REDIS_URL": redis_server.url, "WIREMCP_REDIS_URL": redis_server.url, "WIREMCP_STATE_KEY": "k" * 32, "KIT_RATE": "3"}
    a, b = Worker(SERVER, env), None
    try:
        b = Worker(SERVER, env)
        base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

        def post(port: int, message: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
            try:
                conn.request("POST", "/mcp", orjson.dumps(message), headers)
                resp = conn.getresponse()
                return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
            finally:
                conn.close()

        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
        status, got, _ = post(a.port, init, base)
        assert status == 200, got
        headers = {**base, "Mcp-Session-Id": got["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
        assert post(b.port, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)[0] == 202
        replies = [
            post(worker.port, {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                               "params": {"name": "echo", "arguments": {"text": "x"}}}, headers)
            for i, worker in enumerate([a, b, a, b], start=1)
        ]
        assert [r[0] for r in replies] == [200, 200, 200, 429], replies
        _, refused, body = replies[-1]
        error = orjson.loads(body)["error"]
        assert error["code"] == -32000 and error["data"]["retryAfterMs"] > 0
        assert int(refused["retry-after"]) == -(-error["data"]["retryAfterMs"] // 1000)
    finally:
        a.stop()
        if b is not None:
            b.stop()
