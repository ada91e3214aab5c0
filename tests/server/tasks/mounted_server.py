"""A parent server that mounts a child with task tools (server/_mount.py), for tests/server/tasks/test_tasks_compose.py.

The parent registers no task tool of its own: its tasks exist only because
the mounted child's tools ask for them. ``WIREMCP_TASK_STORE`` picks the store.
"""

from __future__ import annotations

import asyncio

import wiremcp
from wiremcp import Context

child = wiremcp.Server("jobs", version="1.0.0", task_poll_interval_ms=50)


@child.tool(task="always")
async def build(target: str, ctx: Context) -> str:
    """Always a task."""
    ctx.report_progress(1, 2, f"building {target}")
    await asyncio.sleep(0.05)
    return f"built {target}"


@child.tool(task="auto")
async def approve(ctx: Context) -> str:
    """A task that asks (input_required through the parent's tasks/update)."""
    answer = await ctx.elicit("Ship it?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}, key="ok")
    return f"approved={answer.get('content', {}).get('ok')}"


@child.tool()
def plain() -> str:
    """Never a task."""
    return "plain"


server = wiremcp.Server("parent", version="1.0.0")


@server.tool()
def hello() -> str:
    return "hello"


server.mount(child, namespace="jobs")

if __name__ == "__main__":
    wiremcp.run(server)
