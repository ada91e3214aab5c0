"""The smallest useful MCP server: one tool that echoes its text.

Run it over stdio:

    wiremcp run examples/echo.py

or as a script (``python examples/echo.py``).
"""

import wiremcp

server = wiremcp.Server("echo", version="1.0.0", instructions="Echoes text back; useful to test a connection.")


# A plain `def` tool runs in a worker thread, so blocking I/O never delays other
# requests; inline=True keeps a microsecond-scale pure function on the event loop.
@server.tool(inline=True)
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


if __name__ == "__main__":
    wiremcp.run(server)
