"""A test server for legacy (2025-11-25) sessions on Streamable HTTP (tests/transports/test_http_legacy.py).

Served by ``wiremcp run tests/servers/legacy_http.py --http`` with the default
limits; ``app`` routes four endpoints with small limits for
``python -m uvicorn legacy_http:app``:

* ``/expiring``: sessions end after 0.3 s unused; keep-alive every 0.2 s;
* ``/capped``: two live sessions at most;
* ``/modern``: a server with ``legacy=False`` (2026-07-28 only);
* ``/tiny``: a 2 KiB replay buffer.

The tools print to stderr when they are cancelled (the tests' side channel).
"""

import asyncio
import sys

import wiremcp
from wiremcp.server._legacy import ClientRequestFailed
from wiremcp import Context
from wiremcp.transports.http import MCPApp

server = wiremcp.Server("legacy-http", version="2.0.0")

NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
async def ask_name(ctx: Context) -> str:
    """Ask the user's name (elicitation), then greet them."""
    try:
        answer = await ctx.elicit("What is your name?", NAME_FORM)
    except ClientRequestFailed as exc:
        return f"refused: {exc.message}"
    if answer["action"] != "accept":
        return f"no name ({answer['action']})"
    return f"Hello, {answer['content']['name']}!"


@server.tool()
async def steps(count: int, ctx: Context, pause: float = 0.05) -> str:
    """Report progress `count` times, `pause` seconds apart, logging each step; then answer."""
    for i in range(count):
        ctx.report_progress(i + 1, count, f"step {i + 1}")
        ctx.info(f"step {i + 1}", logger="steps")
        await asyncio.sleep(pause)
    return f"{count} steps"


@server.tool()
async def reconnect(ctx: Context, pause: float = 0.3) -> str:
    """Log, close the connection of this call's stream, then answer on the resumed stream."""
    ctx.info("before the close")
    closed = ctx.close_sse_stream(retry_ms=50)
    await asyncio.sleep(pause)
    ctx.info("after the close")
    return f"closed={closed}"


@server.tool()
async def roots_after_close(ctx: Context) -> str:
    """Close this call's connection, then ask for the client's roots (they go on the GET stream)."""
    ctx.close_sse_stream(retry_ms=50)
    roots = await ctx.list_roots()
    return f"{len(roots)} roots"


@server.tool()
async def hang(label: str) -> str:
    """Wait until cancelled; report the cancellation on stderr."""
    print(f"hang {label}: started", file=sys.stderr, flush=True)
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        print(f"hang {label}: cancelled", file=sys.stderr, flush=True)
        raise
    return label


@server.tool()
def change_tools() -> str:
    """Add and remove a tool: two list changes at once (a stream still holding the first unsent takes one copy)."""
    server.add_tool(lambda: "temporary", name="temporary", description="Exists for a moment.")
    server.remove_tool("temporary")
    return "changed"


@server.tool()
def touch(uri: str) -> str:
    """Announce that a resource changed (resources/updated to subscribed sessions)."""
    server.notify_resource_updated(uri)
    return "touched"


@server.resource("file:///notes.txt", name="notes", mime_type="text/plain")
def notes() -> str:
    return "some notes"


modern_only = wiremcp.Server("modern-only", legacy=False)


@modern_only.tool()
def ping_me() -> str:
    """A tool on the modern-only server."""
    return "pong"


_apps = {
    "/expiring": MCPApp(server, path="/expiring", session_idle_timeout=0.3, keepalive_interval=0.2),
    "/capped": MCPApp(server, path="/capped", max_sessions=2),
    "/modern": MCPApp(modern_only, path="/modern"),
    "/tiny": MCPApp(server, path="/tiny", replay_buffer=2048),
}


async def app(scope, receive, send):
    """Route to the endpoints; lifespan events go to the first (they are all alike)."""
    if scope["type"] == "lifespan":
        await _apps["/expiring"](scope, receive, send)
        return
    target = _apps.get(scope.get("path", ""))
    if target is None:
        await send({"type": "http.response.start", "status": 404, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})
        return
    await target(scope, receive, send)
