"""The server the scale-out tests run as several worker processes: each tool says which process ran it."""

import dataclasses
import os

import wiremcp

server = wiremcp.Server("scale-worker", version="1.0.0")


@dataclasses.dataclass
class Person:
    name: str


@server.tool(inline=True)
def whoami() -> str:
    """The id of the process that answered."""
    return str(os.getpid())


@server.tool(inline=True)
def touch(uri: str) -> str:
    """Announce that ``uri`` changed (notifications/resources/updated); returns the process id."""
    server.notify_resource_updated(uri)
    return str(os.getpid())


@server.tool(inline=True)
def retool() -> str:
    """Announce that the tool list changed (notifications/tools/list_changed); returns the process id."""
    server.notify_tools_changed()
    return str(os.getpid())


@server.tool
async def greet(ctx: wiremcp.Context) -> str:
    """Ask for a name (elicitation) and say which process asked and which one answered."""
    answer = await ctx.elicit(f"asked by {os.getpid()}: who are you?", Person)
    if answer.action != "accept":
        return "declined"
    return f"hello {answer.value.name}, answered by {os.getpid()}"


@server.tool
async def steps(n: int, ctx: wiremcp.Context) -> str:
    """Report progress ``n`` times (each saying which process runs it), then wait until cancelled."""
    import asyncio

    for i in range(n):
        ctx.report_progress(i + 1, n, f"step {i + 1} on {os.getpid()}")
    await asyncio.Event().wait()
    return "never"


@server.resource("file:///watched")
def watched() -> str:
    """A resource a legacy session can subscribe to (``touch`` announces its changes)."""
    return "watched"
