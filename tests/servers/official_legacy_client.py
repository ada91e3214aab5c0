"""The official ``mcp`` SDK's client in legacy (2025-11-25, ``initialize``) mode; run with bench/.venv-official.

    python official_legacy_client.py stdio COMMAND ARGS...
    python official_legacy_client.py http URL

It lists the tools, calls ``echo``, ``greet`` (answering the elicitation
request with the name Ada) and ``count`` (collecting progress), and prints
one JSON object with what it saw (tests/test_proxy.py).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client


async def elicit(context: Any, params: Any) -> Any:
    return types.ElicitResult(action="accept", content={"name": "Ada"})


async def exercise(read: Any, write: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    progress: list[Any] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append([value, total, message])

    async with ClientSession(read, write, elicitation_callback=elicit) as session:
        init = await session.initialize()
        out["protocolVersion"] = init.protocol_version
        out["tools"] = sorted(t.name for t in (await session.list_tools()).tools)
        out["echo"] = (await session.call_tool("echo", {"text": "hi"})).content[0].text
        out["greet"] = (await session.call_tool("greet", {})).content[0].text
        out["count"] = (await session.call_tool("count", {"to": 3}, progress_callback=on_progress)).content[0].text
        out["progress"] = progress
    return out


async def main() -> None:
    mode = sys.argv[1]
    if mode == "stdio":
        params = StdioServerParameters(command=sys.argv[2], args=sys.argv[3:])
        async with stdio_client(params) as (read, write):
            out = await exercise(read, write)
    else:
        async with streamable_http_client(sys.argv[2]) as streams:
            out = await exercise(streams[0], streams[1])
    print(json.dumps(out))


anyio.run(main)
