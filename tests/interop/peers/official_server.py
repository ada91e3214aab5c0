"""An official `mcp` 1.x server (FastMCP, its public API), run by the interop tests under a pinned SDK.

``python official_server.py stdio`` serves on stdin/stdout; ``python official_server.py http PORT
LOG`` serves Streamable HTTP on 127.0.0.1:PORT/mcp and appends one JSON line per HTTP exchange to
LOG: the method, the ``Mcp-Session-Id`` the request carried and the one the response set, and the
status (what the tests check the wiremcp client sent). Runs under the peer's Python, not wiremcp's.
"""

from __future__ import annotations

import json
import sys

from mcp.server.fastmcp import Context, FastMCP

mcp = FastMCP("official-peer")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool()
async def chatty(ctx: Context) -> str:  # type: ignore[type-arg]
    """Log at every level an mcp 1.x server logs at, then answer."""
    await ctx.debug("a debug line")
    await ctx.info("an info line")
    await ctx.warning("a warning line")
    return "done"


def _logged(app, path):  # type: ignore[no-untyped-def]
    """ASGI middleware writing what each HTTP exchange carried to ``path``."""

    async def wrapper(scope, receive, send):  # type: ignore[no-untyped-def]
        if scope["type"] != "http":
            return await app(scope, receive, send)
        sent = dict((k.decode().lower(), v.decode()) for k, v in scope["headers"]).get("mcp-session-id")
        record = {"method": scope["method"], "sent": sent}

        async def spy(message):  # type: ignore[no-untyped-def]
            if message["type"] == "http.response.start":
                headers = dict((k.decode().lower(), v.decode()) for k, v in message.get("headers", []))
                record["status"] = message["status"]
                record["minted"] = headers.get("mcp-session-id")
                with open(path, "a") as log:
                    log.write(json.dumps(record) + "\n")
            await send(message)

        await app(scope, receive, spy)

    return wrapper


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        mcp.run("stdio")
    else:
        import uvicorn

        port, log = int(sys.argv[2]), sys.argv[3]
        uvicorn.run(_logged(mcp.streamable_http_app(), log), host="127.0.0.1", port=port, log_level="warning", lifespan="on")
