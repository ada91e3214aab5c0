"""The server API: register tools on a `Server`; transports serve it."""

from ._context import Context, Emit
from ._server import DEFAULT_LIST_TTL_MS, Server
from ._tools import Tool, ToolError, ToolResult, text

__all__ = ["Server", "Context", "Emit", "Tool", "ToolError", "ToolResult", "text", "DEFAULT_LIST_TTL_MS"]
