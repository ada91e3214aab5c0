"""The deployment tutorial (docs/tutorials/deploy.md) for real: redis-server, nginx, ``wiremcp run --workers 2``.

redis-server and nginx run on free loopback ports (tests/scale/services.py;
nginx with the configuration of docs/deploy.md), and
``wiremcp run examples/tutorials/deploy.py --http --workers 2`` with
``WIREMCP_REDIS_URL`` and ``WIREMCP_STATE_KEY``, as the tutorial says. A
client through nginx calls a tool; a listener through nginx gets the changes
made through both workers, so at least one made on the worker that does not
hold its stream.

Spec: basic/patterns/subscriptions.mdx (a listener gets the changes it asked
for), basic/transports/streamable-http (any instance may answer a 2026-07-28
request).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Iterator

import pytest

from wiremcp.client import Client

# tests/scale is the package ``scale`` (tests/ has no __init__.py), as pytest imports it for its own tests
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scale.conftest import STATE_KEY, needs_services, sync  # noqa: E402
from scale.services import Nginx, RedisServer, Worker  # noqa: E402

pytest.importorskip("redis", reason="the Redis backend needs the [redis] extra")
pytest.importorskip("uvicorn", reason="the HTTP transport needs the [http] extra")

pytestmark = [pytest.mark.slow, needs_services]

TUTORIAL = "examples/tutorials/deploy.py"


@pytest.fixture
def nginx() -> Iterator[Nginx]:
    redis = RedisServer()
    env = {"WIREMCP_REDIS_URL": redis.url, "WIREMCP_STATE_KEY": STATE_KEY}
    workers = nginx = None
    try:
        workers = Worker(TUTORIAL, env, "--workers", "2", "--host", "127.0.0.1")
        nginx = Nginx([workers.port])
        yield nginx
    finally:
        if nginx is not None:
            nginx.stop()
        if workers is not None:
            workers.stop()
        redis.kill()


def client(url: str) -> Client:
    return Client.http(url, era="modern", timeout=20)


@sync
async def test_a_listener_through_nginx_gets_changes_made_through_either_worker(nginx: Nginx):
    # the port accepts as soon as the supervisor binds it: wait until both workers answer through nginx
    # (8 at a time: one after another, nginx would reuse its one idle connection to a worker)
    seen: set[str] = set()

    async def probe() -> str:
        async with client(nginx.url) as prober:
            return (await prober.call_tool("worker")).text

    async with asyncio.timeout(60):
        while len(seen) < 2:
            seen.update(await asyncio.gather(*(probe() for _ in range(8))))
    async with client(nginx.url) as listener:
        items = [f"apples{i}" for i in range(256)]  # (under load, the kernel may give many in a row to one)
        async with listener.listen(resources=[f"stock://{item}" for item in items]) as sub:

            async def restock(item: str) -> str:
                async with client(nginx.url) as caller:
                    return (await caller.call_tool("restock", {"item": item})).text

            # nginx reuses an idle connection to the workers (keepalive): calls made at the same time
            # need connections of their own, which the kernel spreads over the two workers
            pids: list[str] = []
            for batch in range(0, len(items), 16):
                pids += await asyncio.gather(*(restock(item) for item in items[batch : batch + 16]))
                if len(set(pids)) == 2:
                    break
            assert set(pids) == seen, f"every call reached one worker: {pids}"
            got = []
            async with asyncio.timeout(10):
                async for method, params in sub:
                    assert method == "notifications/resources/updated"
                    got.append(params["uri"])
                    if len(got) == len(pids):
                        break
            # each change once, whichever worker made it (across workers, in the order Redis got them)
            assert sorted(got) == sorted(f"stock://{item}" for item in items[: len(pids)])
            async with client(nginx.url) as reader:
                assert (await reader.read_resource("stock://apples0")).text == "apples0: in stock"
