"""The task caps (docs/limits.md, "Tasks") over real transports, and the cost of tasks waiting for input.

Issue 23, defect 4: no cap on live tasks, and each task waiting for input
read the store once a second. Here:

* over stdio (``wiremcp run`` in a subprocess): past ``--max-tasks`` a
  2026-07-28 ``tools/call`` gets -32000 ("Server busy"), past
  ``--max-tasks-per-owner`` a 2025-11-25 session's ``params.task`` call gets
  -32000 ("Too many tasks"); a finished or cancelled task frees its place;
  a 2025-11-25 ``task.ttl`` above ``--task-max-ttl`` is clamped, and the
  reply says the TTL granted;
* over HTTP (uvicorn on loopback, bearer tokens naming two callers): the
  caller past its share gets **429**, the server past its cap **503**, both
  with ``Retry-After`` and the same -32000;
* the store calls per second of an idle server with N tasks waiting for
  input do not grow with N (counted by the store itself, `counted_server`).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

import wiremcp
from _servers import uvicorn_app
from conftest import wiremcp_cmd

from test_tasks_legacy import Session
from test_tasks_stdio import EXT, Rpc

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``wiremcp run`` keeps tasks in SQLite under $XDG_STATE_HOME: a fresh one per test."""
    home = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(home))
    return home


def capped(spawn: Any, *flags: str) -> Any:
    return spawn(*wiremcp_cmd("run", str(HERE / "task_server.py"), *flags))


def test_stdio_past_the_server_cap_a_task_is_32000_until_one_ends(spawn):
    rpc = Rpc(capped(spawn, "--max-tasks", "3"))
    held = [rpc.call("hang")["result"]["taskId"] for _ in range(3)]
    refused = rpc.call("hang")
    assert refused["error"]["code"] == -32000, refused
    assert refused["error"]["message"] == "Server busy: 3 live tasks, the most this server keeps (3); try again later"
    assert rpc.call("quick", {"x": "1"})["error"]["code"] == -32000  # whatever the tool
    assert rpc.call("plain", {"x": "1"})["result"]["content"][0]["text"] == "plain 1"  # not a task: not capped
    rpc.result("tasks/cancel", {"taskId": held[0]})
    assert rpc.call("hang")["result"]["resultType"] == "task"
    assert rpc.call("hang")["error"]["code"] == -32000


def test_stdio_legacy_session_past_its_share_is_32000_and_the_ttl_is_clamped(spawn):
    session = Session(capped(spawn, "--max-tasks-per-owner", "2", "--task-max-ttl", "5000"), {"elicitation": {}})
    week = 7 * 24 * 3_600_000
    first = session.result("tools/call", {"name": "hang", "arguments": {}, "task": {"ttl": week}})["task"]
    assert first["ttl"] == 5000  # tasks.mdx: the receiver may override the requested ttl, and says so
    assert session.result("tasks/get", {"taskId": first["taskId"]})["ttl"] == 5000
    second = session.result("tools/call", {"name": "hang", "arguments": {}, "task": {}})["task"]
    assert second["ttl"] == 5000  # the server's default TTL (1 h) is above the cap too
    refused = session("tools/call", {"name": "hang", "arguments": {}, "task": {}})["error"]
    assert refused["code"] == -32000
    assert refused["message"].startswith("Too many tasks: this caller holds 2 live tasks, the most one caller may (2)")
    session.result("tasks/cancel", {"taskId": first["taskId"]})
    assert session.result("tools/call", {"name": "quick", "arguments": {}, "task": {}})["task"]["status"] == "working"


def test_the_cap_counts_the_tasks_of_every_process_sharing_the_store(spawn, tmp_path):
    """Two ``wiremcp run`` processes on one SQLite file: the count is the store's, not each process's."""
    env = {"WIREMCP_TASK_STORE": f"sqlite:{tmp_path / 'shared.sqlite3'}", "WIREMCP_MAX_TASKS": "3"}
    one = Rpc(spawn(*wiremcp_cmd("run", str(HERE / "task_server.py")), env=env))
    two = Rpc(spawn(*wiremcp_cmd("run", str(HERE / "task_server.py")), env=env))
    held = [one.call("hang")["result"]["taskId"], one.call("hang")["result"]["taskId"], two.call("hang")["result"]["taskId"]]
    assert two.call("hang")["error"]["code"] == -32000
    assert one.call("hang")["error"]["code"] == -32000
    two.result("tasks/cancel", {"taskId": held[0]})  # a task of the other process, cancelled through the store
    assert two.call("hang")["result"]["resultType"] == "task"


def test_a_malformed_cap_setting_is_an_error_naming_it(spawn, tmp_path):
    done = subprocess.run(
        wiremcp_cmd("run", str(HERE / "task_server.py")), input=b"", capture_output=True, timeout=60,
        env={**os.environ, "WIREMCP_MAX_TASKS": "lots"},
    )
    assert done.returncode != 0 and b"WIREMCP_MAX_TASKS='lots'" in done.stderr, done.stderr[-2000:]


# -- HTTP: 429 for the caller's share, 503 for the server's cap ---------------------------------


@pytest.fixture
def http_url(tmp_path: Path) -> Iterator[str]:
    env = {"WIREMCP_MAX_TASKS": "3", "WIREMCP_MAX_OWNER_TASKS": "2", "WIREMCP_TASK_STORE": f"sqlite:{tmp_path / 'tasks.sqlite3'}"}
    with uvicorn_app("capped_app:app", HERE, env, url_env="CAPPED_RESOURCE") as url:
        yield url


def post(url: str, token: str, method: str, params: dict[str, Any]) -> Any:
    import httpx

    headers = {
        "content-type": "application/json", "accept": "application/json, text/event-stream",
        "authorization": f"Bearer {token}", "mcp-protocol-version": "2026-07-28", "mcp-method": method,
    }
    name = params.get("name") if method == "tools/call" else params.get("taskId")
    if name is not None:
        headers["mcp-name"] = name
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": EXT}}
    return httpx.post(url, json=message, headers=headers, timeout=15)


def test_http_the_callers_share_is_429_the_servers_cap_503_both_with_retry_after(http_url):
    def start(token: str) -> Any:
        return post(http_url, token, "tools/call", {"name": "hang", "arguments": {}})

    alice = [start("t-alice").json()["result"]["taskId"] for _ in range(2)]
    over = start("t-alice")
    assert over.status_code == 429 and over.headers["retry-after"] == "1", (over.status_code, over.text)
    assert over.json()["error"]["code"] == -32000 and over.json()["error"]["message"].startswith("Too many tasks")
    assert start("t-bob").status_code == 200  # bob has a share of his own: 3 live tasks now
    full = start("t-bob")
    assert full.status_code == 503 and full.headers["retry-after"] == "1", (full.status_code, full.text)
    assert full.json()["error"] == {"code": -32000, "message": "Server busy: 3 live tasks, the most this server keeps (3); try again later"}
    assert post(http_url, "t-alice", "tasks/cancel", {"taskId": alice[0]}).status_code == 200
    assert start("t-alice").status_code == 200  # the cancelled task freed its place


def test_http_a_legacy_session_of_a_caller_past_its_share_gets_32000(http_url):
    """2025-11-25 over HTTP: the same caller's share (the owner is the token's caller, whatever the era);
    inside a session the -32000 comes with HTTP 429 and ``Retry-After``, as in 2026-07-28 (a refusal of the
    caller's share answered alone; every other answer in a session is a 200)."""
    import httpx

    base = {"content-type": "application/json", "accept": "application/json, text/event-stream", "authorization": "Bearer t-alice"}

    def send(message: dict[str, Any], session: str | None = None) -> httpx.Response:
        headers = dict(base, **({"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"} if session else {}))
        return httpx.post(http_url, json=message, headers=headers, timeout=15)

    def body(response: httpx.Response) -> Any:
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            return next(json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:") and line[5:].strip())
        return response.json()

    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}
    opened = send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
    session = opened.headers["mcp-session-id"]
    send({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    task = {"name": "hang", "arguments": {}, "task": {}}
    for n in (1, 2):
        assert "task" in body(send({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": task}, session))["result"]
    over = send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": task}, session)
    assert over.status_code == 429 and over.headers["retry-after"] == "1", (over.status_code, over.text)
    assert body(over)["error"]["code"] == -32000, over.text
    assert body(over)["error"]["message"].startswith("Too many tasks: this caller holds 2 live tasks")


# -- the cost of waiting: store calls per second do not grow with the tasks waiting -----------------


def test_tasks_waiting_for_input_cost_no_store_calls_per_task(spawn, tmp_path):
    """N tasks parked in input_required on SQLite: the store calls per second of the idle server, for two N.

    Before (each waiting task read the store every second): about N calls a
    second. After (one look per worker, `_sweep`): about one, whatever N.
    """
    rpc = Rpc(spawn(*wiremcp_cmd("run", str(HERE / "counted_server.py")), env={"COUNTED_DB": str(tmp_path / "c.sqlite3")}))

    def calls() -> dict[str, int]:
        counted: dict[str, int] = json.loads(rpc.call("store_calls")["result"]["content"][0]["text"])
        return counted

    def park(total: int) -> None:
        for _ in range(total - parked[0]):
            assert rpc.call("gate")["result"]["resultType"] == "task"
        parked[0] = total
        end = time.monotonic() + 60
        while calls().get("ask", 0) < total:  # every task has asked its question: all are waiting
            assert time.monotonic() < end, calls()
            time.sleep(0.05)

    def rate(window: float = 3.0) -> float:
        before, start = sum(calls().values()), time.monotonic()
        time.sleep(window)
        return (sum(calls().values()) - before) / (time.monotonic() - start)

    parked = [0]
    park(20)
    few = rate()
    park(200)
    many = rate()
    print(f"store calls per second, idle: {few:.1f} with 20 tasks waiting, {many:.1f} with 200")
    assert few <= 3 and many <= 3, (few, many)


# -- a store written before the caps and the sweep (no create_capped, answered, live, ask) ---------------


class OldStore:
    """Only the first `TaskStore` methods, as a third party's store written before these rules."""

    def __init__(self) -> None:
        from wiremcp.server.tasks import MemoryTaskStore

        self._real = MemoryTaskStore()
        for name in ("create", "get", "set_status", "finish", "answer", "take_responses", "renew", "list_expired",
                     "delete", "list", "close"):
            setattr(self, name, getattr(self._real, name))


def test_a_store_without_the_new_methods_still_answers_and_caps_this_process(caplog):
    """Its waiting tasks look for answers themselves; the caps count this process's tasks (and say so)."""
    import asyncio

    from wiremcp.client import RemoteError

    server = wiremcp.Server("old-store", task_store=OldStore(), max_tasks=2)  # type: ignore[arg-type]  # a duck-typed store

    @server.tool(task="always")
    async def gate(ctx: wiremcp.Context) -> str:
        answer = await ctx.elicit("Go on?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}, key="ok")
        return f"ok={answer['content']['ok']}"

    async def until(client: wiremcp.Client, task_id: str, status: str) -> dict[str, Any]:
        while (task := await client.request("tasks/get", {"taskId": task_id}))["status"] != status:
            await asyncio.sleep(0.01)
        return task

    async def can_answer(params: dict[str, Any]) -> dict[str, Any]:  # declares elicitation; answers go by tasks/update
        return {"action": "decline"}

    async def main() -> None:
        async with wiremcp.Client.memory(server, tasks=True, elicitation=can_answer) as client:
            first = (await client.call_tool("gate", {}, task=True)).id
            await until(client, first, "input_required")
            second = (await client.call_tool("gate", {}, task=True)).id
            with pytest.raises(RemoteError) as refused:
                await client.call_tool("gate", {}, task=True)
            assert refused.value.code == -32000
            await client.request("tasks/update", {"taskId": first, "inputResponses": {"ok": {"action": "accept", "content": {"ok": True}}}})
            done = await until(client, first, "completed")
            assert done["result"]["content"][0]["text"] == "ok=True"
            assert (await client.call_tool("gate", {}, task=True)).id  # the finished task freed its place
            await client.request("tasks/cancel", {"taskId": second})

    asyncio.run(main())
    assert "has no create_capped" in caplog.text
