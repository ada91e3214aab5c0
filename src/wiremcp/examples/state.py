"""State: per-session and per-request state in `Context`, and the server's key-value store (docs/state.md).

    wiremcp run examples/state.py                      # stdio
    wiremcp run examples/state.py --http               # 2025-11-25 sessions; 2026-07-28 needs Server(auth=...)
    STATE_STORE=sqlite:/tmp/state.sqlite3 wiremcp run examples/state.py

* ``add_to_cart`` keeps a cart per session (``ctx.session_state``): another
  session, or another principal, has its own;
* a middleware stamps each request (``call.state``); the tool reads it as
  ``ctx.request_state``;
* ``count_visit`` counts calls from everyone in ``server.storage``, kept on
  the server's store (memory, SQLite, or Redis under ``WIREMCP_REDIS_URL``).
"""

from __future__ import annotations

import itertools
import os
from typing import Any

import wiremcp
from wiremcp.server import Context, Invocation, Next

server = wiremcp.Server("shop", version="1.0.0", storage=os.environ.get("STATE_STORE") or None)
_numbers = itertools.count(1)


@server.middleware
async def stamp(call: Invocation, call_next: Next) -> dict[str, Any]:
    """Give each request a number, for the handler to read."""
    call.state["request"] = next(_numbers)
    return await call_next(call)


@server.tool
async def add_to_cart(item: str, ctx: Context) -> list[str]:
    """Add an item to this session's cart; the cart so far."""
    cart: list[str] = await ctx.session_state.get("cart", [])
    cart.append(item)
    await ctx.session_state.set("cart", cart)
    return cart


@server.tool
async def cart(ctx: Context) -> list[str]:
    """This session's cart."""
    items: list[str] = await ctx.session_state.get("cart", [])
    return items


@server.tool
async def count_visit(ctx: Context) -> str:
    """Count a visit in the server's store (shared by every session); which request this was."""
    visits = await server.storage.get("visits", 0) + 1
    await server.storage.set("visits", visits)
    return f"visit {visits} (request {ctx.request_state['request']})"


if __name__ == "__main__":
    wiremcp.run(server)
