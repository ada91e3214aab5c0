"""The FastMCP shop of fastmcp_shop.py, ported to wiremcp feature by feature (docs/migrate/fastmcp.md).

    wiremcp run tests/servers/fastmcp_side/wiremcp_shop.py [--http]

tests/interop/test_fastmcp_side_by_side.py gives it and the original the same
calls. Each FastMCP spelling and its wiremcp form:

* ``@mcp.tool(tags=...)`` -> ``@server.tool(tags=...)``; ``mcp.disable(tags=...)`` -> ``server.disable(tags=...)``;
* ``user: str = Depends(current_user)`` -> ``user: Annotated[str, Depends(current_user)]``;
* ``await ctx.set_state(k, v)`` / ``get_state(k)`` -> ``ctx.session_state`` (per session) and
  ``ctx.request_state`` (this request, shared with middleware as ``call.state``);
* a ``Middleware`` subclass's ``on_call_tool`` -> a ``@server.middleware`` function that looks at
  ``call.method``; ``TimingMiddleware`` -> ``Timing``;
* ``Tool.from_tool(search, transform_args={"query": ArgTransform(name="q")})`` ->
  ``server.add_transformed("search", arguments={"query": Arg(rename="q")})``.
"""

from __future__ import annotations

from typing import Annotated, Any

import wiremcp
from wiremcp.server import Context, Invocation, Next, ToolError
from wiremcp.server.depends import Depends
from wiremcp.server.middleware import Timing
from wiremcp.server.transform import Arg

PRICES = {"tea": 3.5, "cake": 4.0, "jam": 2.25}

server = wiremcp.Server("shop", version="1.0.0", middleware=[Timing()])


@server.middleware
async def stamp(call: Invocation, call_next: Next) -> dict[str, Any]:
    """Puts the tool's name in the request's state, for the tool to read."""
    if call.method == "tools/call":
        call.state["stamp"] = f"stamped {call.params.get('name')}"
    return await call_next(call)


def current_user() -> str:
    return "ada"


@server.tool(tags={"catalog"})
def price(item: str) -> float:
    """The price of an item."""
    if item not in PRICES:
        raise ToolError(f"no such item: {item}")
    return PRICES[item]


@server.tool(tags={"catalog"})
def search(query: str, limit: int = 10) -> list[str]:
    """Items whose name contains the query."""
    return sorted(name for name in PRICES if query in name)[:limit]


@server.tool(tags={"admin"})
def wipe() -> str:
    """Delete the catalog."""
    return "wiped"


@server.tool
def restock(item: str) -> str:
    """Order more of an item (the warehouse is down: an unexpected exception)."""
    raise RuntimeError("warehouse at 10.0.0.7 is offline")


@server.tool
def greet(greeting: str, user: Annotated[str, Depends(current_user)]) -> str:
    """Greet the current user."""
    return f"{greeting}, {user}"


@server.tool
async def stamped(ctx: Context) -> str:
    """What the middleware put in the request's state."""
    return str(ctx.request_state.get("stamp"))


@server.tool
async def visit(ctx: Context) -> int:
    """Count this session's visits in its state."""
    visits: int = await ctx.session_state.get("visits", 0) + 1
    await ctx.session_state.set("visits", visits)
    return visits


server.add_transformed(
    "search",
    name="find",
    description="Find items (at most two).",
    arguments={
        "query": Arg(rename="q", description="Part of an item's name."),
        "limit": Arg(hide=True, default=2),
    },
)
server.disable(tags={"admin"})


@server.resource("shop://hours")
def hours() -> str:
    """Opening hours."""
    return "9 to 5"


@server.resource("items://{name}")
def item(name: str) -> str:
    """One item, by name."""
    return f"{name}: {PRICES.get(name, 0.0)}"


@server.resource("shop://owner")
def owner(user: Annotated[str, Depends(current_user)]) -> str:
    """Who runs the shop (a dependency)."""
    return f"run by {user}"


@server.prompt
def thank(item: str, user: Annotated[str, Depends(current_user)]) -> str:
    """A thank-you note (a dependency)."""
    return f"{user} thanks you for buying {item}."


@server.prompt
def pitch(item: str) -> str:
    """A sales pitch for an item."""
    return f"Write a pitch for {item}."


if __name__ == "__main__":
    wiremcp.run(server)
