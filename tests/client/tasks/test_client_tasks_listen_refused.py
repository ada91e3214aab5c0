"""``handle.watch(listen=True)`` against a server that will not listen: the handle falls back to polling.

Spec: extensions/tasks tasks.md, "Task Status Notifications" (notifications
are an optimisation; a client MUST NOT rely on them and polls ``tasks/get``)
and patterns/subscriptions.mdx (the acknowledgment names what the server
agreed to). The choice (docs/client-tasks.md): a refused subscription is not
an error for the caller; the task is followed by polling at the server's
interval, and its result is the same. The server is
tests/client/tasks/refusing_server.py under ``wiremcp run``, over stdio.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any, Awaitable

import orjson
import pytest

from wiremcp.client import Client, TaskHandle

pytestmark = pytest.mark.slow

SERVER = str(Path(__file__).resolve().parent / "refusing_server.py")


def run(coro: Awaitable[Any]) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


class Wire:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.received: list[dict[str, Any]] = []

    def __call__(self, direction: str, data: bytes) -> None:
        for line in data.splitlines():
            if line.strip():
                (self.sent if direction == "send" else self.received).append(orjson.loads(line))

    def requests(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.sent if m.get("method") == method and "id" in m]


def stdio(mode: str, wire: Wire) -> Client:
    return Client.stdio(sys.executable, ["-m", "wiremcp", "run", SERVER], env={"LISTEN": mode, "WIREMCP_TASK_STORE": "memory"},
                        tasks=True, on_wire=wire)


@pytest.mark.parametrize("mode", ["refuse", "none"])
def test_a_refused_subscription_falls_back_to_polling(mode: str) -> None:
    wire = Wire()

    async def main() -> None:
        async with stdio(mode, wire) as client:
            handle = await client.call_tool("slow", {"seconds": 0.3}, task=True)
            assert isinstance(handle, TaskHandle)
            statuses = [state.status async for state in handle.watch(listen=True)]
            assert statuses[0] == "working" and statuses[-1] == "completed"
            assert (await handle.result()).text == "slept 0.3s"
        (listen,) = wire.requests("subscriptions/listen")
        assert listen["params"]["notifications"] == {"taskIds": [handle.id]}
        reply = [m for m in wire.received if m.get("id") == listen["id"]]
        if mode == "refuse":
            assert reply and reply[0]["error"]["code"] == -32601
        else:
            (ack,) = [m for m in wire.received if m.get("method") == "notifications/subscriptions/acknowledged"]
            assert ack["params"]["notifications"]["taskIds"] == []
        # followed by polling instead: several tasks/get, at the server's interval, up to the terminal one
        gets = wire.requests("tasks/get")
        assert len(gets) >= 2 and all(g["params"]["taskId"] == handle.id for g in gets)
        assert not [m for m in wire.received if m.get("method") == "notifications/tasks"]

    run(main())


def test_result_with_listen_on_a_refusing_server_returns_the_result() -> None:
    wire = Wire()

    async def main() -> None:
        async with stdio("refuse", wire) as client:
            handle = await client.call_tool("slow", {"seconds": 0.1}, task=True)
            assert isinstance(handle, TaskHandle)
            assert (await handle.result(listen=True)).text == "slept 0.1s"

    run(main())
