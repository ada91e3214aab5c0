"""2025-11-25 tasks between wiremcp's client and wiremcp's server, over stdio and loopback Streamable HTTP.

Spec: 2025-11-25 basic/utilities/tasks.mdx: "Task Progress Notifications"
(the ``progressToken`` of the task-augmented request stays valid for the
task's whole life), "Input Required Status" (the receiver moves the task to
``input_required`` and sends its requests, tagged with ``related-task``; the
requestor calls ``tasks/result`` and answers them). The server is
tests/client/tasks/legacy_task_server.py under ``wiremcp run``, a real process.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any, Awaitable, Iterator

import orjson
import pytest
from _servers import wiremcp_http

from wiremcp.client import CallToolResult, Client, TaskHandle
from wiremcp.protocol import Era

pytestmark = pytest.mark.slow

SERVER = str(Path(__file__).resolve().parent / "legacy_task_server.py")
RELATED = "io.modelcontextprotocol/related-task"


def run(coro: Awaitable[Any]) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


class Wire:
    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, direction: str, data: bytes) -> None:
        for line in data.splitlines():
            if line.strip():
                self.seen.append((direction, orjson.loads(line)))

    def sent(self) -> list[dict[str, Any]]:
        return [m for d, m in self.seen if d == "send"]

    def received(self) -> list[dict[str, Any]]:
        return [m for d, m in self.seen if d != "send"]


def stdio(**options: Any) -> Client:
    return Client.stdio(sys.executable, ["-m", "wiremcp", "run", SERVER], env={"WIREMCP_TASK_STORE": "memory"},
                        era="legacy", tasks=True, **options)


@pytest.fixture
def http_url() -> Iterator[str]:
    """legacy_task_server.py over Streamable HTTP on a free loopback port."""
    with wiremcp_http(SERVER, {"WIREMCP_TASK_STORE": "memory"}) as url:
        yield url


def http(url: str, **options: Any) -> Client:
    return Client.http(url, era="legacy", tasks=True, **options)


def test_a_legacy_tasks_progress_reaches_on_progress_over_stdio() -> None:
    async def main() -> None:
        seen: list[tuple[Any, Any, Any]] = []
        async with stdio() as client:
            assert client.era is Era.LEGACY
            result = await client.call_tool("steps", {"n": 3}, on_progress=lambda p, t, m: seen.append((p, t, m)))
            assert isinstance(result, CallToolResult) and result.text == "3 steps done"
        assert seen == [(1, 3, "step 1 of 3"), (2, 3, "step 2 of 3"), (3, 3, "step 3 of 3")]

    run(main())


def test_a_legacy_tasks_progress_reaches_on_progress_over_http(http_url: str) -> None:
    wire = Wire()

    async def main() -> None:
        seen: list[tuple[Any, Any, Any]] = []
        async with http(http_url, on_wire=wire) as client:
            assert client.era is Era.LEGACY
            handle = await client.call_tool("steps", {"n": 4}, task=True, on_progress=lambda p, t, m: seen.append((p, t, m)))
            assert isinstance(handle, TaskHandle)
            assert (await handle.result()).text == "4 steps done"
            while len(seen) < 4:  # the last notification may trail the result on the session's GET stream
                await asyncio.sleep(0.01)
        assert seen == [(i, 4, f"step {i} of 4") for i in range(1, 5)]
        (call,) = [m for m in wire.sent() if m.get("method") == "tools/call"]
        token = call["params"]["_meta"]["progressToken"]
        notes = [m for m in wire.received() if m.get("method") == "notifications/progress"]
        assert notes and all(n["params"]["progressToken"] == token for n in notes)

    run(main())


def test_without_on_progress_a_legacy_task_sends_no_progress(http_url: str) -> None:
    wire = Wire()

    async def main() -> None:
        async with http(http_url, on_wire=wire) as client:
            assert (await client.call_tool("steps", {"n": 2})).text == "2 steps done"
        assert not [m for m in wire.received() if m.get("method") == "notifications/progress"]

    run(main())


def test_legacy_task_input_over_http_is_asked_through_tasks_result_and_answered(http_url: str) -> None:
    """A legacy session over loopback HTTP: while the task's question is open the task is input_required;
    the server's elicitation/create (tagged with related-task; on any SSE stream, tasks.mdx) is answered by
    the client's callback, and tasks/result gives the tool's result, tagged with the task."""
    wire = Wire()
    asked: list[dict[str, Any]] = []
    during: list[str] = []
    clients: list[Client] = []

    async def approve(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        task_id = params["_meta"][RELATED]["taskId"]
        during.append((await clients[0].request("tasks/get", {"taskId": task_id}))["status"])
        return {"action": "accept", "content": {"ok": True}}

    async def main() -> None:
        async with http(http_url, on_wire=wire, elicitation=approve) as client:
            clients.append(client)
            assert client.era is Era.LEGACY
            handle = await client.call_tool("deploy", {"target": "prod"}, task=True)
            assert isinstance(handle, TaskHandle)
            statuses = [state.status async for state in handle.watch()]
            assert statuses[-1] == "completed"
            assert (await handle.result()).text == "prod deployed"
        assert during == ["input_required"]
        (question,) = asked
        assert question["message"] == "Deploy prod?"
        assert question["_meta"][RELATED] == {"taskId": handle.id}
        (request,) = [m for m in wire.received() if m.get("method") == "elicitation/create"]
        (answer,) = [m for m in wire.sent() if m.get("id") == request["id"] and "result" in m]
        assert answer["result"] == {"action": "accept", "content": {"ok": True}}
        (fetch,) = [m for m in wire.sent() if m.get("method") == "tasks/result"]
        assert fetch["params"]["taskId"] == handle.id
        (fetched,) = [m for m in wire.received() if m.get("id") == fetch["id"] and "result" in m]
        assert fetched["result"]["content"][0]["text"] == "prod deployed"
        assert fetched["result"]["_meta"][RELATED] == {"taskId": handle.id}

    run(main())


def test_legacy_task_input_declined_over_http(http_url: str) -> None:
    async def decline(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "decline"}

    async def main() -> None:
        async with http(http_url, elicitation=decline) as client:
            handle = await client.call_tool("deploy", {"target": "staging"}, task=True)
            assert isinstance(handle, TaskHandle)
            assert (await handle.result()).text == "staging kept"
            (task,) = await client.list_tasks()
            assert (task.id, task.status) == (handle.id, "completed")

    run(main())
