"""The notes server of docs/migrate/notes_fastmcp.py (FastMCP), ported to wiremcp (docs/migrate/fastmcp.md).

    wiremcp run examples/tutorials/port_fastmcp_after.py

The changes: the imports and the constructor; ``ctx.elicit(message, Confirm)``
takes the dataclass as its second argument and the answer's ``value`` is a
``Confirm``; ``ctx.info`` is a plain call (sent only when the request asked
for logs). With 2026-07-28 clients the tool runs again from the top once the
answer arrives (MRTR), so the deletion comes after the question.
"""

from __future__ import annotations

from dataclasses import dataclass

import wiremcp
from wiremcp import Context, ToolError

server = wiremcp.Server("notes", version="1.0.0")
NOTES: dict[str, str] = {}


@dataclass
class Confirm:
    sure: bool


@server.tool
def write_note(title: str, body: str) -> str:
    """Write a note."""
    NOTES[title] = body
    return f"saved {title}"


@server.tool
def read_note(title: str) -> str:
    """Read a note."""
    if title not in NOTES:
        raise ToolError(f"no note called {title}")
    return NOTES[title]


@server.tool
async def delete_all(ctx: Context) -> str:
    """Delete every note, after asking the user."""
    answer = await ctx.elicit("Delete every note?", Confirm)
    if answer.action != "accept" or answer.value is None or not answer.value.sure:
        return "kept them"
    ctx.info(f"deleting {len(NOTES)} notes")
    NOTES.clear()
    return "deleted"


@server.resource("notes://{title}")
def note(title: str) -> str:
    """One note, by title."""
    return NOTES.get(title, "")


if __name__ == "__main__":
    wiremcp.run(server)
