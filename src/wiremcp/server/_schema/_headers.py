"""``x-mcp-header`` annotations in a tool's input schema, checked at registration.

The rules live in `wiremcp.protocol.headers` (shared with the HTTP transport
and the client: server/tools.mdx, "x-mcp-header"; streamable-http.mdx,
"Custom Headers from Tool Parameters"); here they become a `ValueError` that
names the tool's schema.
"""

from __future__ import annotations

from typing import Any

from ...protocol.headers import InvalidHeaderAnnotation, header_annotations

__all__ = ["check_headers"]


def check_headers(schema: dict[str, Any], where: str = "inputSchema") -> dict[str, tuple[str, ...]]:
    """Check every ``x-mcp-header`` in a tool's input schema; ``{header: property path}``.

    Raises `ValueError` naming the problem.
    """
    try:
        params = header_annotations(schema)
    except InvalidHeaderAnnotation as exc:
        raise ValueError(f"{where}: {exc}") from None
    return {p.name: p.path for p in params}
