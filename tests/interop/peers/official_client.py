"""An official `mcp` 1.x client (its public API), run by the interop tests under a pinned SDK.

``python official_client.py KIND TARGET TOOL [ARGS-JSON]``: KIND is ``stdio`` (TARGET: the server's
argv as a JSON list; the environment is passed on), ``http`` (Streamable HTTP; TARGET: the URL) or
``sse`` (the 2024-11-05 HTTP+SSE transport; TARGET: the ``/sse`` URL). It initializes, lists the
tools, calls TOOL, and prints one JSON object: the negotiated ``protocolVersion``, the tool names,
the call's text and ``isError``, and the ``notifications/message`` its logging callback received.
Runs under the peer's Python, not wiremcp's: official mcp 1.x, or the 2.x of bench/.venv-official.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def _transport(kind: str, target: str) -> Any:
    if kind == "stdio":
        argv = json.loads(target)
        return stdio_client(StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ)))
    if kind == "http":
        from mcp.client.streamable_http import streamablehttp_client

        return streamablehttp_client(target)
    from mcp.client.sse import sse_client

    return sse_client(target)


async def main(kind: str, target: str, tool: str, arguments: dict[str, Any]) -> None:
    logs: list[dict[str, Any]] = []

    async def on_log(params: Any) -> None:
        logs.append({"level": params.level, "data": params.data})

    async with _transport(kind, target) as streams:
        async with ClientSession(streams[0], streams[1], logging_callback=on_log) as session:
            init = await session.initialize()
            tools = await session.list_tools()
            result = await session.call_tool(tool, arguments)
            await asyncio.sleep(0.2)  # a notification sent just before the reply reaches the callback
    text = "".join(getattr(c, "text", "") for c in result.content)
    print(json.dumps({
        "protocolVersion": _field(init, "protocolVersion", "protocol_version"),
        "tools": sorted(t.name for t in tools.tools),
        "text": text,
        "isError": _field(result, "isError", "is_error"),
        "logs": logs,
    }))


def _field(obj: Any, camel: str, snake: str) -> Any:
    """A result field under the 1.x name (camelCase) or the 2.x one (snake_case)."""
    return getattr(obj, camel) if hasattr(obj, camel) else getattr(obj, snake)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}))
