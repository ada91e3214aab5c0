"""Long-running work with tasks (docs/tutorials/tasks.md): a tool that runs as a task.

    wiremcp run examples/tutorials/tasks.py --http
    wiremcp call --detach http://127.0.0.1:8000/mcp crunch '{"items": 20}'   # prints the task id
    wiremcp task watch http://127.0.0.1:8000/mcp ID

A 2026-07-28 client that declares the tasks extension gets a task id at once
and polls it; any other client gets the result when the work ends.
"""

from __future__ import annotations

import asyncio

import wiremcp

server = wiremcp.Server("cruncher", version="1.0.0")


@server.tool(task="auto")
async def crunch(items: int, ctx: wiremcp.Context, delay: float = 0.05) -> str:
    """Process ``items`` items, one every ``delay`` seconds, reporting progress."""
    total = 0
    for i in range(1, items + 1):
        await asyncio.sleep(delay)
        total += i * i
        ctx.report_progress(i, items, f"item {i} of {items}")
    return f"sum of squares 1..{items} = {total}"


if __name__ == "__main__":
    wiremcp.run(server)
