"""The deployment of docs/deploy.md, for real: redis-server, nginx (round robin, no stickiness), two wiremcp workers.

Each worker is a ``wiremcp run tests/scale/worker.py --http`` process with
the same ``WIREMCP_REDIS_URL`` and ``WIREMCP_STATE_KEY``; nginx runs the
configuration of docs/deploy.md. With one nginx worker process and two
upstreams, round robin alternates: consecutive requests land on different
workers, and each tool says which process ran it, so the tests check where
each request went instead of assuming it.

Spec: basic/patterns/subscriptions.mdx (a listener gets the changes it asked
for, wherever they happen), basic/patterns/mrtr.mdx (Server Requirements:
the retry may reach another instance, which verifies the state).
"""

from __future__ import annotations

import asyncio
from typing import Any, Iterator

import pytest

from wiremcp.client import Client

from .conftest import STATE_KEY, needs_services, sync
from .services import Nginx, RedisServer, Worker, stop_deployment

pytest.importorskip("redis", reason="the Redis backend needs the [redis] extra")
pytest.importorskip("aiohttp", reason="the HTTP client needs the [http] extra")

pytestmark = [pytest.mark.slow, needs_services]

WORKER = "tests/scale/worker.py"


class Deployment:
    def __init__(self, redis: RedisServer, workers: list[Worker], nginx: Nginx) -> None:
        self.redis = redis
        self.workers = workers
        self.nginx = nginx


@pytest.fixture(scope="module")
def deployment() -> Iterator[Deployment]:
    redis = RedisServer()
    env = {"WIREMCP_REDIS_URL": redis.url, "WIREMCP_STATE_KEY": STATE_KEY}
    workers: list[Worker] = []
    nginx = None
    try:
        workers = [Worker(WORKER, env), Worker(WORKER, env)]
        nginx = Nginx([w.port for w in workers])
        yield Deployment(redis, workers, nginx)
    finally:
        stop_deployment(nginx, workers, redis)


def client(url: str, **options: Any) -> Client:
    return Client.http(url, era="modern", timeout=20, **options)


async def _until_marker(sub: Any, marker: str) -> list[str]:
    """The URIs ``sub`` got, in order, up to and including ``marker``'s (the synchronisation point)."""
    got: list[str] = []
    async with asyncio.timeout(10):
        async for method, params in sub:
            assert method == "notifications/resources/updated", (method, params)
            got.append(params["uri"])
            if params["uri"] == marker:
                return got
    raise AssertionError(f"the stream ended before the marker: {got}")


@sync
async def test_a_listener_on_one_worker_gets_a_change_made_on_the_other(deployment: Deployment):
    async with client(deployment.nginx.url) as listener, client(deployment.nginx.url) as caller:
        async with listener.listen(resources=["file:///a", "file:///b", "file:///marker"]) as sub:
            assert sub.acknowledged == {"resourceSubscriptions": ["file:///a", "file:///b", "file:///marker"]}
            # two changes, on two consecutive requests: round robin sends them to the two workers,
            # so one of them is made on a worker that does not hold the listener's stream
            first = (await caller.call_tool("touch", {"uri": "file:///a"})).text
            second = (await caller.call_tool("touch", {"uri": "file:///b"})).text
            assert first != second and {first, second} == {str(w.proc.pid) for w in deployment.workers}
            # then a marker change on each worker: a second delivery of a change arrives before the
            # marker of the worker that made it, so what came before both markers is everything
            markers = [(await caller.call_tool("touch", {"uri": "file:///marker"})).text for _ in range(2)]
            assert sorted(markers) == sorted([first, second])
            got: list[str] = []
            while got.count("file:///marker") < 2:
                got += await _until_marker(sub, "file:///marker")
            assert sorted(got) == ["file:///a", "file:///b", "file:///marker", "file:///marker"], got


@sync
async def test_each_worker_listener_gets_each_change_once(deployment: Deployment):
    """Counted exactly: the changes, then a marker change made after them on the same worker.

    One worker's changes reach every listener in the order that worker made them
    (backends/redis/__init__.py), so a second delivery of any change would arrive before
    the marker's: what came before the marker is everything that ever will.
    """
    a, b = deployment.workers
    uris = ["file:///once", "file:///marker"]
    async with client(a.url) as on_a, client(b.url) as on_b, client(b.url) as caller:
        async with on_a.listen(resources=uris) as sub_a, on_b.listen(resources=uris) as sub_b:
            for uri in ("file:///once", "file:///other", "file:///once", "file:///marker"):
                assert (await caller.call_tool("touch", {"uri": uri})).text == str(b.proc.pid)
            for sub in (sub_a, sub_b):
                # the filter applied where the listener is; each change once, nothing else
                assert await _until_marker(sub, "file:///marker") == ["file:///once", "file:///once", "file:///marker"]
            assert sub_a.dropped == sub_b.dropped == 0


@sync
async def test_an_mrtr_retry_that_lands_on_the_other_worker_completes(deployment: Deployment):
    asked_by: list[str] = []

    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        asked_by.append(params["message"].split(":")[0].removeprefix("asked by "))
        return {"action": "accept", "content": {"name": "Ada"}}

    async with client(deployment.nginx.url, elicitation=elicit) as c:
        answer = (await c.call_tool("greet")).text
    answered_by = answer.rsplit(" ", 1)[1]
    assert answer == f"hello Ada, answered by {answered_by}"
    assert len(asked_by) == 1 and asked_by[0] != answered_by  # sealed on one worker, opened on the other
    assert {asked_by[0], answered_by} == {str(w.proc.pid) for w in deployment.workers}


@sync
async def test_a_retry_sealed_by_a_worker_with_another_key_is_refused(deployment: Deployment):
    # the control: a worker that does not share the key cannot open the other workers' states
    other = Worker(WORKER, {"WIREMCP_REDIS_URL": deployment.redis.url, "WIREMCP_STATE_KEY": "another-key-0123456789"})
    try:
        first = deployment.workers[0]
        decline = {"elicitation": lambda params: {"action": "decline"}}  # declares the capability
        async with client(first.url, **decline) as c:
            raw = await c.request("tools/call", {"name": "greet", "arguments": {}})
        assert raw["resultType"] == "input_required"
        key = next(iter(raw["inputRequests"]))
        async with client(other.url, **decline) as c:
            with pytest.raises(Exception, match="requestState failed verification"):
                await c.request(
                    "tools/call",
                    {
                        "name": "greet",
                        "arguments": {},
                        "requestState": raw["requestState"],
                        "inputResponses": {key: {"action": "accept", "content": {"name": "Ada"}}},
                    },
                )
    finally:
        other.stop()
