"""The server of "MCP on the wire" (docs/wire.md): one of each message kind.

    wiremcp call --wire examples/tutorials/wire_tour.py add '{"a": 2, "b": 3}'

- ``add``: a request and its result;
- ``count``: progress notifications and a log message on the way to the result;
- ``divide``: a tool error (``isError: true``) the model reads;
- ``ask_name``: a multi round-trip request (``input_required``, then the retry);
- ``slow_square``: a task (the tasks extension): created, polled, completed;
- ``note://today``: a resource a client can subscribe to; ``touch`` updates it.
"""

from __future__ import annotations

import asyncio

import wiremcp

server = wiremcp.Server("wire-tour", version="1.0.0", instructions="One of each message kind, for docs/wire.md.")
_note = ["nothing yet"]


@server.tool(inline=True)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
async def count(to: int, ctx: wiremcp.Context) -> str:
    """Count to ``to``, reporting progress at each step."""
    for i in range(1, to + 1):
        ctx.report_progress(i, to, f"step {i}")
        await asyncio.sleep(0)
    ctx.info(f"counted to {to}")
    return f"counted to {to}"


@server.tool(inline=True)
def divide(a: float, b: float) -> float:
    """Divide ``a`` by ``b``."""
    if b == 0:
        raise wiremcp.ToolError("cannot divide by zero; pass a non-zero b")
    return a / b


@server.tool
async def ask_name(ctx: wiremcp.Context) -> str:
    """Ask the user for their name, then greet them."""
    answer = await ctx.elicit(
        "What is your name?",
        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    )
    if answer["action"] != "accept":  # "decline" or "cancel"
        return "No name given."
    return f"Hello, {answer['content']['name']}!"


@server.tool(task="always")
async def slow_square(n: int) -> int:
    """Square ``n``, slowly: always a task for clients that take part in tasks."""
    await asyncio.sleep(0.2)
    return n * n


@server.resource("note://today", name="today", mime_type="text/plain", description="Today's note")
def today() -> str:
    return _note[0]


@server.tool(inline=True)
def touch(text: str) -> str:
    """Replace today's note; subscribers of note://today are told."""
    _note[0] = text
    server.notify_resource_updated("note://today")
    return "updated"


if __name__ == "__main__":
    wiremcp.run(server)
