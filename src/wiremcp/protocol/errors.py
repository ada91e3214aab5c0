"""MCP error codes and the exceptions that carry them (basic/index.mdx, "Error Codes").

JSON-RPC's own codes and exception classes live in `wiremcp.jsonrpc`; these
add the codes MCP defines in its reserved range -32020..-32099::

    JSONRPCError
     ├── InvalidParams (-32602)
     │    └── ResourceNotFound       data.uri names the resource (server/resources.mdx)
     ├── HeaderMismatch (-32020)      an HTTP header disagrees with the body
     ├── MissingClientCapability (-32021)  data.requiredCapabilities
     └── UnsupportedProtocolVersion (-32022)  data.supported, data.requested
"""

from __future__ import annotations

from typing import Any, Iterable

from ..jsonrpc import InvalidParams, JSONRPCError

__all__ = [
    "HEADER_MISMATCH",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "MODERN_ERROR_CODES",
    "HeaderMismatch",
    "MissingClientCapability",
    "UnsupportedProtocolVersion",
    "ResourceNotFound",
]

HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022
#: Codes that identify a modern server during era detection.
MODERN_ERROR_CODES = frozenset({HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION})


class HeaderMismatch(JSONRPCError):
    """An ``Mcp-*`` HTTP header disagrees with the body it came with (-32020; HTTP 400)."""

    code = HEADER_MISMATCH

    def __init__(self, message: str) -> None:
        super().__init__(message)


class MissingClientCapability(JSONRPCError):
    """The request needs client capabilities its ``_meta`` did not declare."""

    code = MISSING_REQUIRED_CLIENT_CAPABILITY

    def __init__(self, required: dict[str, Any], message: str | None = None) -> None:
        names = ", ".join(sorted(required))
        super().__init__(
            message or f"This request needs client capabilities the client did not declare: {names}",
            {"requiredCapabilities": required},
        )
        self.required = required


class UnsupportedProtocolVersion(JSONRPCError):
    """The request names a protocol revision this side does not speak; the error's data lists the supported ones."""

    code = UNSUPPORTED_PROTOCOL_VERSION

    def __init__(self, requested: str, supported: Iterable[str]) -> None:
        supported = list(supported)
        super().__init__(
            f"Unsupported protocol version {requested!r}; this server supports {', '.join(supported)}",
            {"supported": supported, "requested": requested},
        )
        self.requested = requested
        self.supported = supported


class ResourceNotFound(InvalidParams):
    """``resources/read`` of a URI the server does not have (-32602, with the ``uri`` in ``data``)."""
    def __init__(self, uri: str) -> None:
        super().__init__(f"Resource not found: {uri}", {"uri": uri})
        self.uri = uri
