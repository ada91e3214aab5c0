"""The task store is closed when the server's lifespan ends (server/_lifespan.py, server/_tasks/_runtime.py).

Rules tested: at the end of the lifespan the SQLite store's connection is
closed and its thread ended (none left behind); a task still running then is
recorded ``failed`` with a message saying the server stopped, never left
``working`` (extensions/tasks/tasks.md: a task reaches a terminal status);
a server that serves again opens the store again and finds its tasks.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import wiremcp
from wiremcp.server.tasks import SQLiteTaskStore

TASKS = "io.modelcontextprotocol/tasks"


def store_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("wiremcp-tasks-sqlite")]


def make_server(store: SQLiteTaskStore) -> wiremcp.Server:
    server = wiremcp.Server("lifespan-tasks", task_store=store, task_poll_interval_ms=10)

    @server.tool(task="always")
    async def quick(x: str) -> str:
        return f"done {x}"

    @server.tool(task="always")
    async def hang() -> str:
        await asyncio.Event().wait()
        return "never"

    return server


async def until(client: wiremcp.Client, task_id: str, statuses: tuple[str, ...]) -> dict[str, Any]:
    while (task := await client.request("tasks/get", {"taskId": task_id}))["status"] not in statuses:
        await asyncio.sleep(0.01)
    return task


def test_the_lifespan_end_closes_the_sqlite_store_and_leaves_no_thread(tmp_path: Path) -> None:
    before = store_threads()
    store = SQLiteTaskStore(tmp_path / "tasks.sqlite3")
    server = make_server(store)

    async def main() -> tuple[str, str]:
        async with wiremcp.Client.memory(server, tasks=True) as client:
            done = (await client.call_tool("quick", {"x": "kept"}, task=True)).id
            await until(client, done, ("completed",))
            running = (await client.call_tool("hang", {}, task=True)).id
            assert store_threads() != before  # the store's thread runs while the server serves
        # the lifespan has ended: the connection closed, the thread joined
        assert not store._file.is_open
        assert store_threads() == before
        return done, running

    done, running = asyncio.run(main())
    assert store_threads() == before

    async def again() -> None:  # serving again reopens the store; the tasks are there
        async with wiremcp.Client.memory(server, tasks=True) as client:
            kept = await client.request("tasks/get", {"taskId": done})
            assert kept["status"] == "completed" and kept["result"]["content"][0]["text"] == "done kept"
            stopped = await client.request("tasks/get", {"taskId": running})
            assert stopped["status"] == "failed"
            assert stopped["statusMessage"] == "The server stopped before the task finished"
            assert stopped["error"]["code"] == -32603
        assert not store._file.is_open and store_threads() == before

    asyncio.run(again())
