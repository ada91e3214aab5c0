"""A task server whose store can be taken down and brought back by a tool, for the store-outage tests.

The store is the SQLite store (``STORE_PATH``) behind `Flaky`: while it is
"down" every call raises `TaskStoreError`, as a Redis that stopped
answering does. ``store_down`` and ``store_up`` (plain tools, no store)
switch it; ``gated`` is a task that runs until ``release`` is called.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import wiremcp
from wiremcp import Context
from wiremcp.server.tasks import SQLiteTaskStore, TaskStoreError


METHODS = ("create", "get", "set_status", "finish", "ask", "answer", "take_responses", "renew", "list_expired", "delete", "list")


def _forward(name: str) -> Any:
    async def call(self: Flaky, *args: Any, **kwargs: Any) -> Any:
        if self.down:
            raise TaskStoreError("the task store is unreachable (taken down by the test)")
        return await getattr(self.inner, name)(*args, **kwargs)

    call.__name__ = name
    return call


class Flaky:
    """A `TaskStore` that forwards to another one, or fails every call while ``down``."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.down = False

    async def close(self) -> None:
        await self.inner.close()


for _name in METHODS:
    setattr(Flaky, _name, _forward(_name))


store = Flaky(SQLiteTaskStore(os.environ["STORE_PATH"]))
server = wiremcp.Server("flaky", version="1.0.0", task_store=store, task_poll_interval_ms=20)
released = asyncio.Event()


@server.tool()
async def store_down() -> str:
    store.down = True
    return "down"


@server.tool()
async def store_up() -> str:
    store.down = False
    return "up"


@server.tool()
async def release() -> str:
    released.set()
    return "released"


@server.tool(task="always")
async def gated(ctx: Context) -> str:
    """Runs until ``release``."""
    ctx.report_progress(1, 2, "waiting for release")
    await released.wait()
    ctx.report_progress(2, 2, "released")  # the store is down then: not recorded, and no harm done
    return "gated work done"


@server.tool(task="always")
async def quick() -> str:
    return "quick done"


if __name__ == "__main__":
    wiremcp.run(server)
