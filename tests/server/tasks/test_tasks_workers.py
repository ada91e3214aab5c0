"""A task whose worker died is marked failed at the next look, never left working (issue 14, item 2).

In process, on a `MemoryTaskStore` shared the way several server processes
share a SQLite file or a Redis: the records name workers of other hosts and
processes, with leases in the past or the future.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time

from conftest import META
from wiremcp import Server
from wiremcp.jsonrpc import Request
from wiremcp.server.tasks import MemoryTaskStore, TaskRecord

TASKS = "io.modelcontextprotocol/tasks"
EXT = {**META, "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}}}


def served(store: MemoryTaskStore) -> Server:
    server = Server("w", task_store=store)

    @server.tool(task="auto")
    async def job() -> str:
        return "ok"

    return server


async def get(server: Server, task_id: str) -> dict:
    out = server.handle(Request(1, "tasks/get", {"taskId": task_id, "_meta": EXT}))
    return out if isinstance(out, dict) else await out  # type: ignore[return-value]


def record(task_id: str, worker: str, lease_until: float | None) -> TaskRecord:
    now = time.time()
    return TaskRecord(task_id=task_id, status="working", created_at=now, updated_at=now, ttl_ms=60_000, worker=worker, lease_until=lease_until)


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_lapsed_lease_of_another_host_fails_the_task():
    async def main():
        store = MemoryTaskStore()
        await store.create(record("lapsed", "elsewhere:123:abcd", time.time() - 1))
        await store.create(record("alive", "elsewhere:123:abcd", time.time() + 60))
        server = served(store)
        lapsed = await get(server, "lapsed")
        assert lapsed["status"] == "failed"
        assert lapsed["statusMessage"].startswith("The server process running this task stopped before it finished")
        assert lapsed["error"]["code"] == -32603
        assert (await get(server, "alive"))["status"] == "working"  # its worker is renewing: leave it

    asyncio.run(main())


def test_a_gone_process_on_this_host_fails_the_task_at_once():
    async def main():
        import socket

        store = MemoryTaskStore()
        host = socket.gethostname()
        await store.create(record("gone", f"{host}:{dead_pid()}:abcd", time.time() + 60))
        await store.create(record("me", f"{host}:{os.getpid()}:older", time.time() + 60))  # this pid, an earlier boot
        server = served(store)
        assert (await get(server, "gone"))["status"] == "failed"
        assert (await get(server, "me"))["status"] == "failed"
        # the outcome is stored: a second look sees the same, and nothing changes it any more
        again = await store.get("gone")
        assert again.status == "failed" and again.terminal

    asyncio.run(main())
