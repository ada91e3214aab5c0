"""A server with legacy (2025-11-25) support turned off."""

import wiremcp

server = wiremcp.Server("modern-only", version="1.0.0", legacy=False)


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text
