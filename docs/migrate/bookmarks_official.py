"""A bookmarks server written with the official SDK (mcp 2.x, ``MCPServer``): the "before" of official-sdk.md.

Not part of wiremcp: it runs in the official SDK's own environment
(bench/.venv-official), and tests/tutorials/test_migrate.py checks that
examples/tutorials/port_official_after.py, the wiremcp port, answers every call the same way.
"""


from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

mcp = MCPServer("bookmarks", version="1.0.0", instructions="Keeps bookmarks for this session.")
BOOKMARKS: dict[str, str] = {}


@mcp.tool()
def add_bookmark(url: str, title: str) -> str:
    """Keep a bookmark."""
    if not url.startswith(("http://", "https://")):
        raise ToolError(f"not a web address: {url}")
    BOOKMARKS[url] = title
    return f"kept {title}"


@mcp.tool()
def count_bookmarks() -> int:
    """How many bookmarks are kept."""
    return len(BOOKMARKS)


@mcp.tool()
async def tidy(ctx: Context) -> str:
    """Drop every bookmark, reporting progress."""
    total = len(BOOKMARKS)
    for done, url in enumerate(list(BOOKMARKS), 1):
        del BOOKMARKS[url]
        await ctx.report_progress(done, total)
    return f"dropped {total}"


@mcp.resource("bookmarks://all", mime_type="text/plain")
def all_bookmarks() -> str:
    """Every bookmark, one per line."""
    return "\n".join(f"{title}: {url}" for url, title in BOOKMARKS.items())


@mcp.prompt()
def summarize(topic: str) -> str:
    """Ask the model to summarize the bookmarks about a topic."""
    return f"Summarize my bookmarks about {topic}."


if __name__ == "__main__":
    mcp.run()
