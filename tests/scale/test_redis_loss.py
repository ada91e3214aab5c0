"""Redis lost while a worker serves, then back: what keeps working, what says so, what recovers by itself.

Spec: none for the failure itself (docs/deploy.md, "When Redis goes away"
states the behaviour); the requests are 2026-07-28 (stateless) and
2025-11-25 (sessions, basic/transports.mdx).
"""

from __future__ import annotations

import asyncio
import time

import orjson
import pytest

from wiremcp.client import Client

from .conftest import STATE_KEY, needs_services, sync
from .services import RedisServer, Worker
from .test_legacy_sessions import Peer, call, initialize, text

pytest.importorskip("redis", reason="the Redis backend needs the [redis] extra")
pytestmark = [pytest.mark.slow, needs_services]


@sync
async def test_modern_requests_go_on_legacy_ones_say_503_and_everything_recovers(redis_server: RedisServer):
    worker = Worker("tests/scale/worker.py", {"WIREMCP_REDIS_URL": redis_server.url, "WIREMCP_STATE_KEY": STATE_KEY}, "--log-level", "INFO")
    try:
        legacy = Peer(worker.port)
        initialize(legacy)
        async with Client.http(worker.url, era="modern", timeout=20) as c:
            redis_server.kill()
            # stateless requests never touch Redis
            assert (await c.call_tool("whoami")).text == str(worker.proc.pid)
            # a legacy message: 503, saying why
            status, headers, body = await asyncio.to_thread(legacy.post, call(1, "whoami"))
            assert status == 503 and headers["retry-after"]
            assert "the legacy session store (Redis) cannot be reached" in orjson.loads(body)["error"]["message"]
            # a change made meanwhile stays on this worker (logged), and the loss is logged once
            assert (await c.call_tool("touch", {"uri": "file:///during"})).text == str(worker.proc.pid)
            deadline = time.monotonic() + 10
            while "delivered to this worker's listeners only" not in worker.log():
                assert time.monotonic() < deadline, worker.log()
                await asyncio.sleep(0.05)
            assert worker.log().count("lost Redis (") == 1
            redis_server.restart()
            # back by itself: a listener gets a change again
            while "Redis is back" not in worker.log():
                assert time.monotonic() < deadline + 20, worker.log()
                await asyncio.sleep(0.05)
            async with c.listen(resources=["file:///after"]) as sub:
                await c.call_tool("touch", {"uri": "file:///after"})
                async with asyncio.timeout(10):
                    async for method, params in sub:
                        assert (method, params["uri"]) == ("notifications/resources/updated", "file:///after")
                        break
        # the restarted Redis kept nothing (no persistence): the old session is gone (404), a new one works
        status, _, _ = await asyncio.to_thread(legacy.post, call(2, "whoami"))
        assert status == 404
        fresh = Peer(worker.port)
        await asyncio.to_thread(initialize, fresh)
        status, _, body = await asyncio.to_thread(fresh.post, call(3, "whoami"))
        assert status == 200 and text(orjson.loads(body)) == str(worker.proc.pid)
    finally:
        worker.stop()
