"""2025-11-25 experimental tasks against the reference server (server-everything), over stdio and HTTP.

Spec: 2025-11-25 basic/utilities/tasks.mdx (Creating Tasks, Tool-Level
Negotiation, Getting Tasks, Retrieving Task Results, Input Required Status,
Task Status Notification, Listing Tasks, Cancelling Tasks). The server is
a real Node process (tests/client/tasks/_task_servers.py).
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable

import pytest
from _task_servers import RESEARCH, Wire, everything, everything_url  # noqa: F401 - fixtures

from wiremcp.client import CallToolResult, Client, RemoteError, TaskCancelled, TaskHandle, TaskState
from wiremcp.protocol import Era


def run(coro: Awaitable[Any]) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 90))


async def clarify(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"interpretation": "technical"}}


def test_call_tool_follows_a_required_task_to_its_result_over_stdio(everything: list[str]) -> None:
    """A tool whose taskSupport is required is augmented, polled and fetched; call_tool returns the result."""
    wire = Wire()

    async def main() -> None:
        async with Client.stdio(everything[0], [everything[1], "stdio"], tasks=True, on_wire=wire) as client:
            assert client.era is Era.LEGACY
            result = await client.call_tool(RESEARCH, {"topic": "tides"})
            assert result.text.startswith("# Research Report: tides")
            call = next(m for m in wire.sent if m.get("method") == "tools/call")
            assert call["params"]["task"] == {}
            methods = wire.methods()
            assert "tasks/get" in methods and methods[-1] in ("tasks/result", "tasks/get")
            assert "tasks/result" in methods

    run(main())


def test_watch_shows_each_status_and_answers_input_through_tasks_result_over_stdio(everything: list[str]) -> None:
    asked: list[str] = []

    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return await clarify(params)

    wire = Wire()

    async def main() -> None:
        async with Client.stdio(everything[0], [everything[1], "stdio"], tasks=True, elicitation=elicit, on_wire=wire) as client:
            handle = await client.call_tool(RESEARCH, {"topic": "python", "ambiguous": True}, task=True, task_ttl_ms=120000)
            assert isinstance(handle, TaskHandle)
            assert handle.status == "working"
            call = next(m for m in wire.sent if m.get("method") == "tools/call")
            assert call["params"]["task"] == {"ttl": 120000}  # the server may keep its own ttl
            seen: list[TaskState] = [state async for state in handle.watch()]
            statuses = [s.status for s in seen]
            assert statuses[0] == "working" and statuses[-1] == "completed"
            assert "input_required" in statuses
            assert asked == ['The research query "python" could have multiple interpretations. Please clarify what you\'re looking for:']
            result = await handle.result()  # already known: no new request
            assert result.text.startswith("# Research Report: python (technical)")
            listed = await client.list_tasks()
            assert [(t.id, t.status) for t in listed] == [(handle.id, "completed")]

    run(main())


def test_cancel_then_result_raises_task_cancelled_and_a_second_cancel_is_refused(everything: list[str]) -> None:
    async def main() -> None:
        async with Client.stdio(everything[0], [everything[1], "stdio"], tasks=True) as client:
            handle = await client.call_tool(RESEARCH, {"topic": "eels"}, task=True)
            assert isinstance(handle, TaskHandle)
            await handle.cancel()
            assert handle.status == "cancelled"  # 2025-11-25: the reply is the cancelled task
            with pytest.raises(TaskCancelled, match=f"task {handle.id} was cancelled"):
                await handle.result()
            state = await client.task(handle.id).refresh()
            assert state.status == "cancelled"
            # tasks.mdx: cancelling a task in a terminal status is -32602
            with pytest.raises(RemoteError) as refused:
                await handle.cancel()
            assert refused.value.code == -32602

    run(main())


def test_a_handle_made_from_the_id_alone_follows_the_task_over_http(everything_url: str) -> None:
    """client.task(id): nothing but the id (server-everything keeps tasks per HTTP session, so the same session)."""

    async def main() -> None:
        async with Client.http(everything_url, tasks=True) as client:
            assert client.era is Era.LEGACY
            handle = await client.call_tool(RESEARCH, {"topic": "moss"}, task=True)
            assert isinstance(handle, TaskHandle)
            resumed = client.task(handle.id)
            assert resumed.state is None and resumed.status is None
            state = await resumed.refresh()
            assert state.id == handle.id and state.status in ("working", "completed")
            result = await resumed.result()
            assert result.text.startswith("# Research Report: moss")
            assert resumed.status == "completed"

    run(main())


def test_input_is_answered_while_tasks_result_is_open_over_http(everything_url: str) -> None:
    wire = Wire()

    async def main() -> None:
        async with Client.http(everything_url, tasks=True, elicitation=clarify, on_wire=wire) as client:
            handle = await client.call_tool(RESEARCH, {"topic": "lichen", "ambiguous": True}, task=True)
            assert isinstance(handle, TaskHandle)
            result = await handle.result()
            assert result.text.startswith("# Research Report: lichen (technical)")
            # the elicitation came while tasks/result was open, and was answered
            assert "tasks/result" in wire.methods()
            assert any("result" in m and m["result"].get("action") == "accept" for m in wire.sent)

    run(main())


def test_without_tasks_the_client_never_augments(everything: list[str]) -> None:
    """tasks=False (the default): no params.task, and the result is whatever the server answers at once."""
    wire = Wire()

    async def main() -> None:
        async with Client.stdio(everything[0], [everything[1], "stdio"], on_wire=wire) as client:
            result = await client.call_tool(RESEARCH, {"topic": "x"})  # this server runs it anyway
            assert isinstance(result, CallToolResult)
            call = next(m for m in wire.sent if m.get("method") == "tools/call")
            assert "task" not in call["params"]

    run(main())


def test_on_progress_with_a_task_of_server_everything_over_stdio(everything: list[str]) -> None:
    """The augmented call carries a progressToken (tasks.mdx: valid for the task's life). server-everything's
    task tool reports its stages as statusMessage and sends no progress notification, so on_progress hears
    nothing, and the call ends with its result (the routing itself: test_client_tasks_legacy_wiremcp.py)."""
    wire = Wire()
    heard: list[Any] = []

    async def main() -> None:
        async with Client.stdio(everything[0], [everything[1], "stdio"], tasks=True, on_wire=wire) as client:
            result = await client.call_tool(RESEARCH, {"topic": "moss"}, on_progress=lambda *a: heard.append(a))
            assert result.text.startswith("# Research Report: moss")
            call = next(m for m in wire.sent if m.get("method") == "tools/call")
            assert call["params"]["task"] == {} and "progressToken" in call["params"]["_meta"]
            assert heard == []

    run(main())
