"""A server written with another SDK, for the wiremcp client and CLI to use: fastmcp 4.x or the official ``mcp`` 1.x.

Run with the peer's python (tests/peers.py): ``PYTHON foreign_server.py`` serves
stdio, ``PYTHON foreign_server.py --http PORT`` Streamable HTTP on 127.0.0.1 at
``/mcp``. It imports fastmcp when that is installed, else ``mcp.server.fastmcp``
(the FastMCP of the official 1.x SDK); both take the same decorators. What it
offers (the columns of the matrix): ``add`` (a call), ``fail`` (a tool error),
``slow`` (progress 1, 2, 3 of 3), the resource ``data://greeting``, the prompt
``greet``.

No ``from __future__ import annotations``: mcp 1.12's FastMCP finds the
``Context`` parameter by its annotation object, not by a string.
"""

import asyncio
import sys

try:
    from fastmcp import Context, FastMCP
    from fastmcp.exceptions import ToolError

    FLAVOUR = "fastmcp"
except ImportError:
    from mcp.server.fastmcp import Context, FastMCP  # type: ignore[no-redef]
    from mcp.server.fastmcp.exceptions import ToolError  # type: ignore[no-redef]

    FLAVOUR = "mcp"

HTTP = sys.argv[1:2] == ["--http"]
PORT = int(sys.argv[2]) if HTTP else 0
server = FastMCP("foreign") if FLAVOUR == "fastmcp" else FastMCP("foreign", host="127.0.0.1", port=PORT)  # type: ignore[call-arg]


@server.tool()
def add(a: int, b: int) -> str:
    """Adds two numbers."""
    return f"sum={a + b}"


@server.tool()
def fail() -> str:
    """Always a tool error."""
    raise ToolError("this tool always fails")


@server.tool()
async def slow(ctx: Context) -> str:  # type: ignore[type-arg]
    """Takes a moment, reporting progress 1, 2, 3 of 3."""
    for step in (1, 2, 3):
        await ctx.report_progress(step, 3)
        await asyncio.sleep(0.05)
    return "slow done"


@server.resource("data://greeting")
def greeting() -> str:
    """A fixed text."""
    return "hello from a foreign server"


@server.prompt()
def greet(name: str) -> str:
    """Greets someone."""
    return f"Please greet {name}."


if __name__ == "__main__":
    if not HTTP:
        server.run()
    elif FLAVOUR == "fastmcp":
        server.run(transport="http", host="127.0.0.1", port=PORT, show_banner=False)  # type: ignore[call-arg]
    else:
        server.run(transport="streamable-http")
