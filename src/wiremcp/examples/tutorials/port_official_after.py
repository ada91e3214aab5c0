"""The bookmarks server of docs/migrate/bookmarks_official.py (the official SDK), ported to wiremcp (docs/migrate/official-sdk.md).

    wiremcp run examples/tutorials/port_official_after.py

The changes: the import and the constructor; ``@server.tool`` without
parentheses; ``ctx.report_progress`` is a plain call (it queues the
notification, nothing to await); the rest is unchanged.
"""

from __future__ import annotations

import wiremcp
from wiremcp import Context, ToolError

server = wiremcp.Server("bookmarks", version="1.0.0", instructions="Keeps bookmarks for this session.")
BOOKMARKS: dict[str, str] = {}


@server.tool
def add_bookmark(url: str, title: str) -> str:
    """Keep a bookmark."""
    if not url.startswith(("http://", "https://")):
        raise ToolError(f"not a web address: {url}")
    BOOKMARKS[url] = title
    return f"kept {title}"


@server.tool
def count_bookmarks() -> int:
    """How many bookmarks are kept."""
    return len(BOOKMARKS)


@server.tool
async def tidy(ctx: Context) -> str:
    """Drop every bookmark, reporting progress."""
    total = len(BOOKMARKS)
    for done, url in enumerate(list(BOOKMARKS), 1):
        del BOOKMARKS[url]
        ctx.report_progress(done, total)
    return f"dropped {total}"


@server.resource("bookmarks://all", mime_type="text/plain")
def all_bookmarks() -> str:
    """Every bookmark, one per line."""
    return "\n".join(f"{title}: {url}" for url, title in BOOKMARKS.items())


@server.prompt
def summarize(topic: str) -> str:
    """Ask the model to summarize the bookmarks about a topic."""
    return f"Summarize my bookmarks about {topic}."


if __name__ == "__main__":
    wiremcp.run(server)
