"""A test server for the hardening tests (tests/transports/test_hardening_stdio.py, tests/transports/test_hardening_http.py).

Served over stdio by ``wiremcp run tests/servers/hardening.py``, and over HTTP
by ``python -m uvicorn hardening:app``, whose endpoints have small limits:

* ``/mcp``: the defaults, but a 32 KiB replay buffer (the memory test);
* ``/capped``: 8 sessions at most, 4 per client address, idle ones ending after 1 s once
  90 % are taken; 4 resource subscriptions of URIs of at most 1,024 characters per
  session; 4 open ``subscriptions/listen`` streams per client address;
* ``/strict``: the default Host/Origin lists;
* ``/tight``: another server, which keeps 2 open subscriptions at most.

Tools print to stderr when they start and when they are cancelled (the tests' side channel).
"""

import asyncio
import gc
import sys

import wiremcp
from wiremcp import Context
from wiremcp.transports.http import MCPApp

server = wiremcp.Server("hardening", version="1.0.0")


@server.tool()
async def rogue() -> str:
    """Raise CancelledError without being cancelled (a handler bug): the client still gets one reply."""
    await asyncio.sleep(0)
    raise asyncio.CancelledError()


@server.tool()
async def wait(label: str, ctx: Context) -> str:
    """Wait until cancelled; report the start (and progress, given a token) and the cancellation on stderr."""
    print(f"wait {label}: started", file=sys.stderr, flush=True)
    ctx.report_progress(0, None, f"{label} waits")
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        print(f"wait {label}: cancelled", file=sys.stderr, flush=True)
        raise
    return label


@server.tool()
async def sample_once(ctx: Context) -> str:
    """Ask the client's model once (a request to a legacy client), then answer with its text."""
    result = await ctx.sample("hello", max_tokens=5)
    return str(result["content"]["text"])


@server.tool()
def announce(uri: str, times: int) -> str:
    """Announce ``times`` times that ``uri`` changed: resources/updated to every session subscribed to it."""
    for _ in range(times):
        server.notify_resource_updated(uri)
    return "announced"


@server.tool()
async def flood(count: int, ctx: Context, pad: int = 40) -> str:
    """Report progress ``count`` times (each message about 100 + pad bytes), then answer."""
    text = "x" * pad
    for i in range(count):
        ctx.report_progress(i + 1, count, text)
    await asyncio.sleep(0)
    return "flooded"


@server.tool(inline=True)  # on the loop: it counts the loop's tasks
def stats() -> dict:
    """Live legacy sessions and asyncio tasks in this process."""
    gc.collect()
    return {
        "sessions": sum(app.session_count for app in _apps.values()),
        "tasks": len(asyncio.all_tasks()),
    }


tight = wiremcp.Server("tight", max_subscriptions=2)


@tight.tool()
def nothing() -> str:
    """A tool, so that the server has something to list."""
    return ""


_apps = {
    "/mcp": MCPApp(server, path="/mcp", replay_buffer=32 * 1024),
    "/capped": MCPApp(
        server, path="/capped", max_sessions=8, max_sessions_per_client=4, pressure_idle_timeout=1.0,
        max_session_subscriptions=4, max_subscription_uri=1024, max_listens_per_client=4,
    ),
    "/strict": MCPApp(server, path="/strict"),
    "/tight": MCPApp(tight, path="/tight"),
}


async def app(scope, receive, send):
    """Route to the endpoints; lifespan events go to the first (they are all alike)."""
    if scope["type"] == "lifespan":
        await _apps["/mcp"](scope, receive, send)
        return
    target = _apps.get(scope.get("path", ""))
    if target is None:
        await send({"type": "http.response.start", "status": 404, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})
        return
    await target(scope, receive, send)
