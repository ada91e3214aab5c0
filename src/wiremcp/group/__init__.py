"""``wiremcp.ClientGroup``: one client over many MCP servers, configured as hosts configure them.

    async with wiremcp.ClientGroup.from_config("claude_desktop_config.json") as group:
        for tool in await group.list_tools():          # "server__tool" names, every server's
            print(tool["name"])
        result = await group.call_tool("echo__echo", {"text": "hi"})
        print(group.status)                            # each server: ready, failed (why), attempts

A layer of its own, above the transports (it builds each server's
transport: stdio, Streamable HTTP, HTTP+SSE) and below the CLI; it uses only
the public names of `wiremcp.client` and the transports' client modules.
The rules are in ``_group.py`` (names, routing, list changes, failure and
reconnection) and ``_config.py`` (the ``mcpServers`` JSON).
"""

from __future__ import annotations

from ._config import ConfigError, ServerConfig, TransportKind, load_config
from ._group import ClientGroup, ServerStatus, ServerUnavailable, State

__all__ = [
    "ClientGroup",
    "ServerConfig",
    "ServerStatus",
    "ServerUnavailable",
    "State",
    "ConfigError",
    "TransportKind",
    "load_config",
]
