"""A server with task tools of every kind, for tests/server/tasks (served over stdio and HTTP).

``TASK_TTL_MS`` sets the tasks' TTL; ``WIREMCP_TASK_STORE`` the store
(``sqlite:PATH`` for the restart tests).
"""

from __future__ import annotations

import asyncio
import os
from typing import Annotated, TypedDict

import wiremcp
from wiremcp import Context, Elicit

ttl = os.environ.get("TASK_TTL_MS")
server = wiremcp.Server("task-server", version="1.0.0", task_ttl_ms=int(ttl) if ttl else None, task_poll_interval_ms=50)

CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
NAME = {"type": "object", "properties": {"name": {"type": "string"}}}


class Who(TypedDict):
    name: str


@server.tool()
def plain(x: str = "") -> str:
    """Never a task."""
    return f"plain {x}"


@server.tool(task="auto")
async def quick(x: str = "") -> str:
    """A task that finishes at once."""
    return f"done {x}"


@server.tool(task=lambda arguments: arguments.get("big", False))
async def maybe(big: bool = False) -> str:
    """A task only when big."""
    return f"maybe big={big}"


@server.tool(task="always")
async def always_job() -> str:
    """Always a task."""
    return "always done"


@server.tool(task="auto")
async def hang(ctx: Context) -> str:
    """Runs until cancelled; reports progress first."""
    ctx.report_progress(1, 10, "started")
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        print("hang: cancelled", file=__import__("sys").stderr, flush=True)
        raise
    return "never"


@server.tool(task="auto")
async def gate(ctx: Context) -> str:
    """Waits for a confirmation (input_required), then finishes."""
    answer = await ctx.elicit("Go on?", CONFIRM, key="confirm")
    return f"confirmed={answer.get('content', {}).get('confirm')} action={answer['action']}"


@server.tool(task="auto")
async def two(ctx: Context) -> str:
    """Two questions at once."""
    answers = await ctx.ask(
        {
            "a": {"method": "elicitation/create", "params": {"mode": "form", "message": "A?", "requestedSchema": NAME}},
            "b": {"method": "elicitation/create", "params": {"mode": "form", "message": "B?", "requestedSchema": NAME}},
        }
    )
    return " & ".join(answers[k]["content"]["name"] for k in ("a", "b"))


@server.tool(task="auto")
async def twice(ctx: Context) -> str:
    """The same key asked twice in a row: the second round gets a fresh key."""
    first = await ctx.elicit("First?", NAME, key="q")
    second = await ctx.elicit("Second?", NAME, key="q")
    return f"{first['content']['name']} then {second['content']['name']}"


@server.tool(task="auto")
async def boom() -> str:
    """Fails with a JSON-RPC error."""
    raise wiremcp.JSONRPCError("the backend is down", {"backend": "db"}, code=-32603)


@server.tool(task="auto")
async def oops() -> str:
    """Ends in a tool execution error."""
    raise wiremcp.ToolError("bad input")


@server.tool(task="always")
async def named(who: Annotated[Who, Elicit("Who are you?")]) -> str:
    """Asks first (multi round-trip on tools/call), then runs as a task."""
    return f"Hello, {who['name']}"


if __name__ == "__main__":
    wiremcp.run(server)
