"""Task tools of a mounted server are tasks of the parent (server/_mount.py), end to end over stdio.

Spec: extensions/tasks/tasks.md (the server decides per request whether a
call becomes a task; ``tasks/get`` and ``tasks/update`` reach the server that
created the task, here the parent) and 2025-11-25 basic/utilities/tasks.mdx
(``execution.taskSupport`` in ``tools/list``). The server is
tests/server/tasks/mounted_server.py under ``wiremcp run``, a real process.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any, Awaitable

import pytest

from wiremcp.client import CallToolResult, Client, RemoteError, TaskHandle
from wiremcp.protocol import Era

pytestmark = pytest.mark.slow

SERVER = str(Path(__file__).resolve().parent / "mounted_server.py")
TASKS = "io.modelcontextprotocol/tasks"


def run(coro: Awaitable[Any]) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


def stdio(tasks: bool = True, **options: Any) -> Client:
    return Client.stdio(sys.executable, ["-m", "wiremcp", "run", SERVER], env={"WIREMCP_TASK_STORE": "memory"}, tasks=tasks, **options)


async def ok(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"ok": True}}


def test_a_mounted_task_tool_is_a_task_of_the_parent():
    async def main() -> None:
        async with stdio(elicitation=ok) as client:
            assert client.era is Era.MODERN
            discovered = await client.request("server/discover", {})
            assert TASKS in discovered["capabilities"]["extensions"]
            handle = await client.call_tool("jobs_build", {"target": "docs"}, task=True)
            assert isinstance(handle, TaskHandle)  # the parent made a task: resultType "task"
            assert (await handle.result()).text == "built docs"
            asked = await client.call_tool("jobs_approve", {}, task=True)
            assert isinstance(asked, TaskHandle)
            assert (await asked.result()).text == "approved=True"  # answered by tasks/update on the parent
            plain = await client.call_tool("jobs_plain", {}, task=True)
            assert isinstance(plain, CallToolResult) and plain.text == "plain"

    run(main())


def test_without_the_extension_an_always_task_of_a_mounted_server_is_32021():
    async def main() -> None:
        async with stdio(tasks=False) as client:
            with pytest.raises(RemoteError) as refused:
                await client.call_tool("jobs_build", {"target": "x"})
            assert refused.value.code == -32021 and TASKS in str(refused.value.data)

    run(main())


def test_a_legacy_session_sees_the_mounted_tools_task_support_and_runs_them_as_tasks():
    async def main() -> None:
        async with stdio(era="legacy", elicitation=ok) as client:
            assert client.era is Era.LEGACY
            tools = {t["name"]: t for t in (await client.request("tools/list", {}))["tools"]}
            assert tools["jobs_build"]["execution"] == {"taskSupport": "required"}
            assert tools["jobs_approve"]["execution"] == {"taskSupport": "optional"}
            handle = await client.call_tool("jobs_build", {"target": "site"}, task=True)
            assert isinstance(handle, TaskHandle)
            assert (await handle.result()).text == "built site"

    run(main())
