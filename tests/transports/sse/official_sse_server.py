"""A 2024-11-05 HTTP+SSE server written with the official MCP Python SDK (``mcp`` 2.3.0).

Run with bench/.venv-official's interpreter (never imported by wiremcp):

    python official_sse_server.py [--port PORT] [--version 2024-11-05]

``GET /sse`` opens the event stream (its first event names ``/messages/?session_id=…``),
``POST /messages/`` takes the client's messages. ``--version`` pins the protocol
version the server answers ``initialize`` with (the SDK otherwise echoes the
client's, when it knows it). Tools: ``echo``, ``add``, ``slow`` (sleeps), ``cancellations`` (how many
``slow`` calls were cancelled), ``grow``
(registers a new tool and sends ``notifications/tools/list_changed``); a
resource ``memo://notes``; a prompt ``greet``. Prints ``ready PORT`` once listening
(``--port 0``, the default: a free port).
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys

import uvicorn
from mcp.server.mcpserver import Context, MCPServer

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, default=0)
parser.add_argument("--version", default=None)
args = parser.parse_args()

mcp = MCPServer("official-sse", version="2.3.0", log_level="WARNING")


@mcp.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


CANCELLED = [0]


@mcp.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:  # notifications/cancelled
        CANCELLED[0] += 1
        raise
    return "slept"


@mcp.tool()
def cancellations() -> int:
    """How many slow calls were cancelled."""
    return CANCELLED[0]


@mcp.tool()
async def grow(name: str, ctx: Context) -> str:
    """Register a tool NAME that returns its own name, and say the list changed."""

    def made() -> str:
        return name

    mcp.add_tool(made, name=name, description=f"added at run time: {name}")
    await ctx.session.send_tool_list_changed()
    return f"added {name}"


@mcp.resource("memo://notes")
def notes() -> str:
    """Some notes."""
    return "remember the milk"


@mcp.prompt()
def greet(who: str) -> str:
    """Greet someone."""
    return f"Hello, {who}!"


if args.version is not None:
    # An older server: it knows only this handshake version and answers every initialize with it.
    import mcp.server.runner as runner

    runner.HANDSHAKE_PROTOCOL_VERSIONS = (args.version,)  # type: ignore[misc]  # a fixture pinning the SDK
    runner.LATEST_HANDSHAKE_VERSION = args.version  # type: ignore[misc]

app = mcp.sse_app(host="127.0.0.1")

sock = socket.socket()
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.bind(("127.0.0.1", args.port))
sock.listen(128)  # connections wait in the backlog until uvicorn accepts them
config = uvicorn.Config(app, log_level="warning", access_log=False)
server = uvicorn.Server(config)
print("ready", sock.getsockname()[1], flush=True)
sys.exit(asyncio.run(server.serve(sockets=[sock])))
