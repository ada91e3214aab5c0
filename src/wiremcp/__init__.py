"""wiremcp: a strict, fast Model Context Protocol implementation.

    import wiremcp

    server = wiremcp.Server("echo", version="1.0.0")

    @server.tool()
    def echo(text: str) -> str:
        "Return the text unchanged."
        return text

    if __name__ == "__main__":
        wiremcp.run(server)          # stdio

Layers, each importing only those below it: `wiremcp.jsonrpc` (sans-I/O
JSON-RPC 2.0) → `wiremcp.protocol` (MCP revisions, _meta, error codes) →
`wiremcp.server` → `wiremcp.transports` → `wiremcp.cli`.
"""

from __future__ import annotations

from typing import Any

from .jsonrpc import JSONRPCError
from .protocol import (
    LATEST,
    HeaderMismatch,
    MissingClientCapability,
    ResourceNotFound,
    UnsupportedProtocolVersion,
)
from .server import Context, Server, Tool, ToolError, ToolResult, text

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "LATEST",
    "Server",
    "Context",
    "Tool",
    "ToolError",
    "ToolResult",
    "text",
    "run",
    "JSONRPCError",
    "HeaderMismatch",
    "MissingClientCapability",
    "UnsupportedProtocolVersion",
    "ResourceNotFound",
]


def run(server: Server, transport: str = "stdio", **options: Any) -> None:
    """Serve ``server`` until its input ends. ``transport`` is ``"stdio"``."""
    import asyncio

    if transport != "stdio":
        raise ValueError(f"unknown transport {transport!r}; this version serves 'stdio'")
    from .transports.stdio import serve_stdio

    asyncio.run(serve_stdio(server, **options))
