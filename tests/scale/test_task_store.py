"""The Redis task store: the TaskStore contract (tests/server/tasks/test_tasks_store.py, run here on Redis),
and two server processes on one redis-server that see each other's tasks.

Spec: extensions/tasks/tasks.md (the task is durably created before
``CreateTaskResult``; ``tasks/get`` and ``tasks/update`` may reach any
instance of a deployment; the first terminal status wins).
"""

from __future__ import annotations

import asyncio
import http.client
import importlib.util
import itertools
import time
from pathlib import Path
from typing import Any, Iterator

import orjson
import pytest

from .conftest import STATE_KEY, needs_services
from .services import ROOT, RedisServer, Worker

pytest.importorskip("redis", reason="the Redis backend needs the [redis] extra")
from wiremcp.backends.redis import RedisBackend  # noqa: E402

pytestmark = [pytest.mark.slow, needs_services]

_spec = importlib.util.spec_from_file_location("tasks_store_contract", ROOT / "tests" / "server" / "tasks" / "test_tasks_store.py")
assert _spec is not None and _spec.loader is not None
contract = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(contract)
#: The contract: the store tests parametrized over the stores (``kind``), not the file's other tests.
CONTRACT = sorted(
    name
    for name, test in vars(contract).items()
    if name.startswith("test_") and any(mark.args and mark.args[0] == "kind" for mark in getattr(test, "pytestmark", []))
)
_prefixes = itertools.count()


@pytest.fixture(scope="module")
def shared_redis() -> Iterator[RedisServer]:
    server = RedisServer()
    yield server
    server.kill()


@pytest.mark.parametrize("name", CONTRACT)
def test_the_redis_store_keeps_the_task_store_contract(name, shared_redis, tmp_path, monkeypatch):
    from wiremcp.server._backend_tasks import RedisTaskStore

    def make_store(kind: str, path: Path) -> Any:
        assert kind == "redis"
        return RedisTaskStore(RedisBackend(shared_redis.url, prefix=f"contract{next(_prefixes)}"))

    monkeypatch.setattr(contract, "make_store", make_store)
    getattr(contract, name)("redis", tmp_path)


def test_ask_is_one_transaction_across_connections(shared_redis):
    """A worker's questions and another worker's answers, interleaved on two connections: an answered
    key is never put back as outstanding (the race `add_input_requests`' get-then-set fallback has)."""
    from wiremcp.server._backend_tasks import RedisTaskStore
    from wiremcp.server._tasks._store import add_input_requests

    assert "ask" in vars(RedisTaskStore)
    prefix = f"race{next(_prefixes)}"
    q = {"method": "elicitation/create", "params": {}}

    async def body() -> None:
        asker = RedisTaskStore(RedisBackend(shared_redis.url, prefix=prefix))
        answerer = RedisTaskStore(RedisBackend(shared_redis.url, prefix=prefix))
        try:
            await asker.create(contract.record())
            await add_input_requests(asker, "t1", {"first": q}, now=contract.T0, message="waiting")
            asks = [add_input_requests(asker, "t1", {f"k{i}": q}, now=contract.T0 + i, message="waiting") for i in range(40)]
            answers = [answerer.answer("t1", {"first": {"action": "accept"}}, now=contract.T0 + 20)]
            await asyncio.gather(*asks[:20], *answers, *asks[20:])
            record = await answerer.get("t1")
            assert record is not None
            assert "first" not in record.input_requests and record.input_responses == {"first": {"action": "accept"}}
            assert set(record.input_requests) == {f"k{i}" for i in range(40)} and record.status == "input_required"
        finally:
            await asker.close()
            await answerer.close()

    asyncio.run(body())


def test_the_redis_store_keeps_owner_and_scopes(shared_redis):
    """Owner (issuer, subject, client id) and the tool's scopes survive create, transitions and the
    owner's index on Redis too (tests/server/tasks/test_tasks_authorization.py; issue 23, defect 2)."""
    from wiremcp.server._backend_tasks import RedisTaskStore

    spec = importlib.util.spec_from_file_location("tasks_authz", ROOT / "tests" / "server" / "tasks" / "test_tasks_authorization.py")
    assert spec is not None and spec.loader is not None
    authz = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(authz)

    async def body() -> None:
        store = RedisTaskStore(RedisBackend(shared_redis.url, prefix=f"authz{next(_prefixes)}"))
        try:
            await authz.keeps_owner_and_scopes(store)
        finally:
            await store.close()

    asyncio.run(body())


def test_a_server_on_redis_keeps_its_tasks_in_redis(monkeypatch):
    import wiremcp
    from wiremcp.server._backend_tasks import RedisTaskStore

    monkeypatch.delenv("WIREMCP_TASK_STORE", raising=False)
    server = wiremcp.Server("x", backend=RedisBackend("redis://127.0.0.1:1/0"), state_keys=[STATE_KEY])
    store = server._task_options["store"]
    assert callable(store) and isinstance(store(), RedisTaskStore)
    monkeypatch.setenv("WIREMCP_TASK_STORE", "memory")
    store = wiremcp.Server("x", backend=RedisBackend("redis://127.0.0.1:1/0"), state_keys=[STATE_KEY])._task_options["store"]
    assert store is None or not isinstance(store(), RedisTaskStore)  # the setting names the store: memory


# -- two processes ------------------------------------------------------------------------------

EXT = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}, "elicitation": {}},
    "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "0"},
}


def rpc(port: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
    name = params.get("name", params.get("taskId"))
    if isinstance(name, str):
        headers["Mcp-Name"] = name
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
    try:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": EXT}}
        conn.request("POST", "/mcp", orjson.dumps(body), headers)
        resp = conn.getresponse()
        raw = resp.read()
    finally:
        conn.close()
    if resp.getheader("content-type", "").startswith("text/event-stream"):
        events = [orjson.loads(line[5:]) for line in raw.split(b"\n") if line.startswith(b"data:") and line[5:].strip()]
        reply = next(e for e in events if "id" in e and "method" not in e)
    else:
        reply = orjson.loads(raw)
    assert "result" in reply, reply
    return reply["result"]


def poll(port: int, task_id: str, until: Any) -> dict[str, Any]:
    end = time.monotonic() + 20
    while True:
        task = rpc(port, "tasks/get", {"taskId": task_id})
        if until(task) or time.monotonic() > end:
            return task
        time.sleep(0.05)


def test_two_processes_on_one_redis_see_each_others_tasks(redis_server: RedisServer):
    env = {"WIREMCP_REDIS_URL": redis_server.url, "WIREMCP_STATE_KEY": STATE_KEY}
    target = "tests/server/tasks/task_server.py"
    a, b = Worker(target, env), Worker(target, env)
    try:
        task_id = rpc(a.port, "tools/call", {"name": "gate", "arguments": {}})["taskId"]  # runs on a
        parked = poll(b.port, task_id, lambda t: t["status"] == "input_required")  # seen from b
        assert list(parked["inputRequests"]) == ["confirm"]
        answer = {"confirm": {"action": "accept", "content": {"confirm": True}}}
        rpc(b.port, "tasks/update", {"taskId": task_id, "inputResponses": answer})  # answered on b
        done = poll(a.port, task_id, lambda t: t["status"] == "completed")
        assert done["result"]["content"][0]["text"] == "confirmed=True action=accept"
        assert rpc(b.port, "tasks/get", {"taskId": task_id})["status"] == "completed"
        # the first terminal transition wins across processes: cancelling the finished task changes nothing
        quick = rpc(b.port, "tools/call", {"name": "quick", "arguments": {"x": "1"}})["taskId"]
        finished = poll(a.port, quick, lambda t: t["status"] == "completed")
        assert finished["result"]["content"][0]["text"] == "done 1"
    finally:
        a.stop()
        b.stop()


def test_the_task_cap_counts_in_redis_across_processes(redis_server: RedisServer):
    """docs/limits.md, "Tasks": the live tasks are counted in Redis, so two workers share one cap (503 past it)."""
    env = {"WIREMCP_REDIS_URL": redis_server.url, "WIREMCP_STATE_KEY": STATE_KEY, "WIREMCP_MAX_TASKS": "3"}
    target = "tests/server/tasks/task_server.py"
    a, b = Worker(target, env), Worker(target, env)

    def start(port: int) -> tuple[int, str | None, dict[str, Any]]:
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                   "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "hang"}
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
        try:
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "hang", "arguments": {}, "_meta": EXT}}
            conn.request("POST", "/mcp", orjson.dumps(body), headers)
            resp = conn.getresponse()
            return resp.status, resp.getheader("retry-after"), orjson.loads(resp.read())
        finally:
            conn.close()

    try:
        held = [start(a.port)[2]["result"]["taskId"], start(a.port)[2]["result"]["taskId"], start(b.port)[2]["result"]["taskId"]]
        status, retry, reply = start(b.port)
        assert (status, retry, reply["error"]["code"]) == (503, "1", -32000), reply
        assert start(a.port)[0] == 503
        rpc(a.port, "tasks/cancel", {"taskId": held[2]})  # b's task, cancelled through a: its place is free
        assert start(b.port)[0] == 200
    finally:
        a.stop()
        b.stop()
