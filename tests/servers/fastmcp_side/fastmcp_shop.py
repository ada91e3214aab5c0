"""A shop server written with FastMCP 4.2.3, using what issue 27 ports: the "before" of fastmcp_side/wiremcp_shop.py.

Runs under the fastmcp peer's interpreter (tests/peers.py), never imported by
wiremcp: ``python fastmcp_shop.py`` serves stdio, ``python fastmcp_shop.py
--http PORT`` Streamable HTTP at ``http://127.0.0.1:PORT/mcp``.
tests/interop/test_fastmcp_side_by_side.py drives it and its wiremcp port with
the same calls. Spelled as FastMCP 4.2.3 spells each feature (read from its
source): tags on ``@mcp.tool``, ``mcp.disable(tags=...)``, ``Depends`` as a
parameter default (of a tool, a resource and a prompt), ``ctx.set_state``/``get_state``, a ``Middleware`` subclass
and ``TimingMiddleware``, ``Tool.from_tool`` with ``ArgTransform``, resources,
a resource template and a prompt.

No ``from __future__ import annotations``: FastMCP reads the annotations as objects.
"""

import sys

from fastmcp import Context, FastMCP
from fastmcp.dependencies import Depends
from fastmcp.exceptions import ToolError
from fastmcp.server.middleware import Middleware, MiddlewareContext
from fastmcp.server.middleware.timing import TimingMiddleware
from fastmcp.tools import Tool
from fastmcp.tools.tool_transform import ArgTransform

PRICES = {"tea": 3.5, "cake": 4.0, "jam": 2.25}


class Stamp(Middleware):
    """Puts the tool's name in the request's state, for the tool to read."""

    async def on_call_tool(self, context: MiddlewareContext, call_next):  # type: ignore[no-untyped-def]
        if context.fastmcp_context is not None:
            await context.fastmcp_context.set_state("stamp", f"stamped {context.message.name}")
        return await call_next(context)


mcp = FastMCP("shop", middleware=[TimingMiddleware(), Stamp()])


def current_user() -> str:
    return "ada"


@mcp.tool(tags={"catalog"})
def price(item: str) -> float:
    """The price of an item."""
    if item not in PRICES:
        raise ToolError(f"no such item: {item}")
    return PRICES[item]


@mcp.tool(tags={"catalog"})
def search(query: str, limit: int = 10) -> list[str]:
    """Items whose name contains the query."""
    return sorted(name for name in PRICES if query in name)[:limit]


@mcp.tool(tags={"admin"})
def wipe() -> str:
    """Delete the catalog."""
    return "wiped"


@mcp.tool
def restock(item: str) -> str:
    """Order more of an item (the warehouse is down: an unexpected exception)."""
    raise RuntimeError("warehouse at 10.0.0.7 is offline")


@mcp.tool
def greet(greeting: str, user: str = Depends(current_user)) -> str:
    """Greet the current user."""
    return f"{greeting}, {user}"


@mcp.tool
async def stamped(ctx: Context) -> str:
    """What the middleware put in the request's state."""
    return str(await ctx.get_state("stamp"))


@mcp.tool
async def visit(ctx: Context) -> int:
    """Count this session's visits in its state."""
    visits = (await ctx.get_state("visits") or 0) + 1
    await ctx.set_state("visits", visits)
    return visits


find = Tool.from_tool(
    search,
    name="find",
    description="Find items (at most two).",
    transform_args={
        "query": ArgTransform(name="q", description="Part of an item's name."),
        "limit": ArgTransform(hide=True, default=2),
    },
)
mcp.add_tool(find)
mcp.disable(tags={"admin"})


@mcp.resource("shop://hours")
def hours() -> str:
    """Opening hours."""
    return "9 to 5"


@mcp.resource("items://{name}")
def item(name: str) -> str:
    """One item, by name."""
    return f"{name}: {PRICES.get(name, 0.0)}"


@mcp.resource("shop://owner")
def owner(user: str = Depends(current_user)) -> str:
    """Who runs the shop (a dependency)."""
    return f"run by {user}"


@mcp.prompt
def thank(item: str, user: str = Depends(current_user)) -> str:
    """A thank-you note (a dependency)."""
    return f"{user} thanks you for buying {item}."


@mcp.prompt
def pitch(item: str) -> str:
    """A sales pitch for an item."""
    return f"Write a pitch for {item}."


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        mcp.run(transport="http", host="127.0.0.1", port=int(sys.argv[2]), path="/mcp", show_banner=False)
    else:
        mcp.run(show_banner=False)
