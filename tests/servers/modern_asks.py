"""A 2026-07-28-only server whose tools ask for input and report progress (tests/test_proxy.py).

``legacy=False``: a 2025-11-25 client cannot use it directly, only through
``wiremcp proxy``. ``greet`` asks for a name by elicitation (an
``input_required`` round for a modern client); ``count`` reports progress;
``grow`` registers a tool at run time (a list change).
"""

from __future__ import annotations

import wiremcp
from wiremcp import Context

server = wiremcp.Server("modern-asks", version="1.0.0", legacy=False)
calls = {"greet": 0}


@server.tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool
async def greet(ctx: Context) -> str:
    """Ask the user's name, then greet them."""
    answer = await ctx.elicit("What is your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
    if answer["action"] != "accept":
        return f"no name ({answer['action']})"
    return f"Hello, {answer['content']['name']}!"


@server.tool
async def count(ctx: Context, to: int = 3) -> str:
    """Report progress up to ``to``."""
    for i in range(1, to + 1):
        ctx.report_progress(i, to, f"step {i}")
    return f"counted to {to}"


@server.tool
def grow() -> str:
    """Register a new tool (the tool list changes)."""
    if "grown" not in server.tools:
        server.add_tool(lambda: "I grew", name="grown")
    return "grown"


@server.tool
async def wait(seconds: float = 30.0) -> str:
    """Sleep; when cancelled, append ``cancelled`` to the file named by ``MODERN_ASKS_LOG``."""
    import asyncio
    import os

    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        path = os.environ.get("MODERN_ASKS_LOG")
        if path:
            with open(path, "a") as f:
                f.write("cancelled\n")
        raise
    return "waited"
