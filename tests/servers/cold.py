"""A server for the cold-start tests: inline plain tools (answered before the event loop) and async ones."""

import sys

import wiremcp

server = wiremcp.Server("cold", version="1.0.0")


@server.tool(inline=True)
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool(inline=True)
def loop_loaded() -> str:
    """Whether asyncio has been imported in this process yet."""
    return "yes" if "asyncio" in sys.modules else "no"


@server.tool()
async def slow(seconds: float, label: str = "slow") -> str:
    """Sleep, then answer (asyncio imported here: the file itself must not load it)."""
    import asyncio

    await asyncio.sleep(seconds)
    return label


@server.tool()
def threaded(text: str) -> str:
    """A plain def: it runs on the worker pool."""
    return text.upper()


@server.tool()
async def chatty(ctx: wiremcp.Context) -> str:
    """Server-to-client traffic of a legacy session: a log message, progress, a roots request, a list change."""
    ctx.info("working")
    ctx.report_progress(1, 2)
    roots = await ctx.list_roots()
    server.notify_tools_changed()
    return ",".join(root["uri"] for root in roots)
