"""The tasks extension (io.modelcontextprotocol/tasks) end to end against wiremcp's own server, over stdio and HTTP.

Spec: extensions/tasks tasks.md (Polymorphic Results, Task Polling, Task
Update Requests, Task Cancellation, Task Status Notifications, Streamable
HTTP: Routing Headers, Error Handling). The server is
``wiremcp run examples/everything.py`` as a real process; its task tools:
``slow_compute`` (a task when ``seconds`` > 0), ``confirm_delete`` (asks
through inputRequests), ``multi_input`` (two keys at once),
``failing_job`` (completed with isError) and ``protocol_error_job``
(failed with a JSON-RPC error).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any, Awaitable, Iterator

import pytest
from _servers import wiremcp_http
from _task_servers import Wire

from wiremcp.client import CallToolResult, Client, RemoteError, TaskCancelled, TaskHandle, TaskState
from wiremcp.protocol import Era

EVERYTHING = str(Path(__file__).resolve().parents[3] / "src" / "wiremcp" / "examples" / "everything.py")
TASKS = "io.modelcontextprotocol/tasks"


def run(coro: Awaitable[Any]) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


def stdio(**options: Any) -> Client:
    return Client.stdio(sys.executable, ["-m", "wiremcp", "run", EVERYTHING], tasks=True, **options)


@pytest.fixture
def http_url() -> Iterator[str]:
    """examples/everything.py over Streamable HTTP on a free loopback port: one process, many clients."""
    with wiremcp_http(EVERYTHING, {"WIREMCP_TASK_STORE": "memory"}) as url:
        yield url


async def confirm(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"confirm": True}}


def test_call_tool_follows_a_task_and_returns_the_tool_result_over_stdio() -> None:
    wire = Wire()

    async def main() -> None:
        async with stdio(on_wire=wire) as client:
            assert client.era is Era.MODERN
            result = await client.call_tool("slow_compute", {"seconds": 0.3, "label": "sum"})
            assert isinstance(result, CallToolResult)
            assert result.text == "computed sum after 0.3s"
            (call,) = wire.requests("tools/call")
            assert call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"] == {TASKS: {}}
            gets = wire.requests("tasks/get")
            assert gets and all(g["params"]["taskId"] == gets[0]["params"]["taskId"] for g in gets)
            # the same tool with nothing to wait for is answered at once: no task
            assert (await client.call_tool("slow_compute", {"seconds": 0})).text == "computed result after 0s"

    run(main())


def test_task_true_returns_the_handle_and_watch_ends_completed_over_stdio() -> None:
    async def main() -> None:
        async with stdio() as client:
            handle = await client.call_tool("slow_compute", {"seconds": 0.3}, task=True)
            assert isinstance(handle, TaskHandle)
            assert handle.status == "working" and handle.state is not None and handle.state.poll_interval_ms is not None
            seen: list[TaskState] = [state async for state in handle.watch()]
            assert seen[0].status == "working" and seen[-1].status == "completed"
            assert seen[-1].result is not None
            assert (await handle.result()).text == "computed result after 0.3s"

    run(main())


def test_input_required_is_answered_through_tasks_update_once_per_key_over_stdio() -> None:
    wire = Wire()
    asked: list[str] = []

    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return await confirm(params)

    async def main() -> None:
        async with stdio(elicitation=elicit, on_wire=wire) as client:
            result = await client.call_tool("confirm_delete", {"filename": "notes.txt"})
            assert result.text == "Deleted notes.txt."
            assert asked == ["Delete notes.txt?"]
            (update,) = wire.requests("tasks/update")
            assert update["params"]["inputResponses"] == {"confirm": {"action": "accept", "content": {"confirm": True}}}

    run(main())


def test_two_input_requests_at_once_over_stdio() -> None:
    answers = iter(["Ada", "Grace"])

    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": next(answers)}}

    async def main() -> None:
        async with stdio(elicitation=elicit) as client:
            result = await client.call_tool("multi_input", {})
            assert result.text == "Got Ada and Grace"

    run(main())


def test_a_tool_error_completes_the_task_and_a_protocol_error_fails_it_over_stdio() -> None:
    async def main() -> None:
        async with stdio() as client:
            result = await client.call_tool("failing_job", {})
            assert result.is_error and "the job failed" in result.text
            handle = await client.call_tool("protocol_error_job", {}, task=True)
            assert isinstance(handle, TaskHandle)
            with pytest.raises(RemoteError) as failed:
                await handle.result()
            assert failed.value.code == -32603
            assert handle.status == "failed"

    run(main())


def test_without_the_extension_the_server_answers_at_once() -> None:
    async def main() -> None:
        async with Client.stdio(sys.executable, ["-m", "wiremcp", "run", EVERYTHING]) as client:
            result = await client.call_tool("slow_compute", {"seconds": 0.1})
            assert result.text == "computed result after 0.1s"

    run(main())


def test_cancel_a_long_task_then_result_raises_task_cancelled_over_stdio() -> None:
    async def main() -> None:
        async with stdio() as client:
            handle = await client.call_tool("slow_compute", {"seconds": 30}, task=True)
            assert isinstance(handle, TaskHandle)
            await handle.cancel()
            with pytest.raises(TaskCancelled, match=f"task {handle.id} was cancelled"):
                await handle.result()
            assert handle.status == "cancelled"

    run(main())


def test_cancellation_racing_completion_reports_whichever_end_the_server_reached() -> None:
    """tasks.md: cancellation is cooperative; a task that finished first stays completed."""

    async def main() -> None:
        async with stdio() as client:
            ends: set[str] = set()
            for _ in range(6):
                handle = await client.call_tool("slow_compute", {"seconds": 0.05}, task=True)
                assert isinstance(handle, TaskHandle)
                following = asyncio.ensure_future(handle.raw_result())
                await handle.cancel()
                try:
                    raw = await following
                except TaskCancelled:
                    ends.add("cancelled")
                    assert (await handle.refresh()).status == "cancelled"
                else:
                    ends.add("completed")
                    assert raw["content"][0]["text"] == "computed result after 0.05s"
                    assert (await handle.refresh()).status == "completed"
            assert ends <= {"cancelled", "completed"} and ends

    run(main())


def test_a_new_client_resumes_the_task_by_id_over_http(http_url: str) -> None:
    """The id outlives the client: a new Client object (new connection) follows the same task to its end."""
    wire = Wire()

    async def main() -> None:
        async with Client.http(http_url, tasks=True) as first:
            handle = await first.call_tool("slow_compute", {"seconds": 0.5, "label": "kept"}, task=True)
            assert isinstance(handle, TaskHandle)
            task_id = handle.id
        async with Client.http(http_url, tasks=True, on_wire=wire) as second:
            resumed = second.task(task_id)
            assert (await resumed.result()).text == "computed kept after 0.5s"
            assert resumed.status == "completed"
        assert {g["params"]["taskId"] for g in wire.requests("tasks/get")} == {task_id}

    run(main())


def test_resume_after_the_same_client_restarts_over_http(http_url: str) -> None:
    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"confirm": False}}

    async def main() -> None:
        async with Client.http(http_url, tasks=True, elicitation=elicit) as client:
            handle = await client.call_tool("confirm_delete", {"filename": "a.txt"}, task=True)
            assert isinstance(handle, TaskHandle)
            await client.restart()
            assert (await client.task(handle.id).result()).text == "Kept a.txt."

    run(main())


def test_listening_replaces_polling_over_http(http_url: str) -> None:
    wire = Wire()

    async def main() -> None:
        async with Client.http(http_url, tasks=True, elicitation=confirm, on_wire=wire) as client:
            handle = await client.call_tool("slow_compute", {"seconds": 0.5}, task=True)
            assert isinstance(handle, TaskHandle)
            statuses = [s.status async for s in handle.watch(listen=True)]
            assert statuses[-1] == "completed"
            (listen,) = wire.requests("subscriptions/listen")
            assert listen["params"]["notifications"] == {"taskIds": [handle.id]}
            assert wire.requests("tasks/get") == []  # every state after the first came as a notification
            assert (await handle.result()).text == "computed result after 0.5s"

    run(main())


def test_input_and_failures_over_http(http_url: str) -> None:
    async def main() -> None:
        async with Client.http(http_url, tasks=True, elicitation=confirm) as client:
            assert (await client.call_tool("confirm_delete", {"filename": "b.txt"})).text == "Deleted b.txt."
            with pytest.raises(RemoteError) as failed:
                await client.call_tool("protocol_error_job", {})
            assert failed.value.code == -32603
            with pytest.raises(RemoteError) as unknown:
                await client.task("no-such-task").refresh()
            assert unknown.value.code == -32602

    run(main())
