"""A stdio server restarted under a client that follows tasks, with the SQLite task store.

Spec: extensions/tasks tasks.md (a task reaches a terminal status; clients
SHOULD persist task ids and resume them; a completed task's result stays
until its TTL elapses). Issue 14: "a task whose worker died is marked failed
with a clear status message, never left working". The server is
tests/server/tasks/task_server.py under ``wiremcp run`` with
``WIREMCP_TASK_STORE=sqlite:PATH``, a real subprocess; ``client.restart()``
starts the next one on the same file.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any, Awaitable

import pytest

from wiremcp.client import Client, RemoteError, TaskHandle

pytestmark = pytest.mark.slow

SERVER = str(Path(__file__).resolve().parents[2] / "server" / "tasks" / "task_server.py")
WORKER_DIED = "The server process running this task stopped before it finished (it was restarted or crashed)"
STOPPED = "The server stopped before the task finished"


def run(coro: Awaitable[Any]) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


def stdio(db: Path) -> Client:
    return Client.stdio(sys.executable, ["-m", "wiremcp", "run", SERVER], env={"WIREMCP_TASK_STORE": f"sqlite:{db}"}, tasks=True)


async def started(handle: TaskHandle) -> None:
    """Until the task reported its first progress (its body is running): a state the server must reach."""
    while (await handle.refresh()).status_message != "started":
        await asyncio.sleep(0.02)


def test_a_server_killed_mid_task_fails_the_task_and_keeps_finished_results(tmp_path: Path) -> None:
    async def main() -> None:
        async with stdio(tmp_path / "tasks.sqlite3") as client:
            done = await client.call_tool("quick", {"x": "kept"}, task=True)
            assert isinstance(done, TaskHandle)
            assert (await done.result()).text == "done kept"
            running = await client.call_tool("hang", {}, task=True)
            assert isinstance(running, TaskHandle)
            await started(running)
            first_pid = client.transport.pid  # type: ignore[attr-defined]  # a StdioTransport
            os.kill(first_pid, signal.SIGKILL)  # no chance to record anything
            await client.restart()
            assert client.transport.pid != first_pid  # type: ignore[attr-defined]
            with pytest.raises(RemoteError) as failed:  # the same handle, on the new server
                await running.result()
            assert running.status == "failed" and running.status_message == WORKER_DIED
            assert failed.value.code == -32603 and failed.value.message == WORKER_DIED
            kept = client.task(done.id)  # by id alone, as after a client restart
            assert (await kept.result()).text == "done kept"
            assert kept.status == "completed"

    run(main())


def test_a_server_stopped_gracefully_mid_task_records_it_stopped(tmp_path: Path) -> None:
    """client.restart() closes stdin: the server's lifespan ends and records its running task failed itself."""

    async def main() -> None:
        async with stdio(tmp_path / "tasks.sqlite3") as client:
            running = await client.call_tool("hang", {}, task=True)
            assert isinstance(running, TaskHandle)
            await started(running)
            await client.restart()
            with pytest.raises(RemoteError) as failed:
                await running.result()
            assert running.status == "failed" and running.status_message == STOPPED
            assert failed.value.message == STOPPED

    run(main())
