"""A notes server written with FastMCP (``pip install fastmcp``): the "before" of fastmcp.md.

The wiremcp port is examples/tutorials/port_fastmcp_after.py.
tests/tutorials/test_migrate.py runs both over stdio with the same calls
(this one under FastMCP 4.2.3, the peer of tests/peers.py).
"""

from dataclasses import dataclass

from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError

mcp = FastMCP("notes")
NOTES: dict[str, str] = {}


@dataclass
class Confirm:
    sure: bool


@mcp.tool
def write_note(title: str, body: str) -> str:
    """Write a note."""
    NOTES[title] = body
    return f"saved {title}"


@mcp.tool
def read_note(title: str) -> str:
    """Read a note."""
    if title not in NOTES:
        raise ToolError(f"no note called {title}")
    return NOTES[title]


@mcp.tool
async def delete_all(ctx: Context) -> str:
    """Delete every note, after asking the user."""
    answer = await ctx.elicit("Delete every note?", response_type=Confirm)
    if answer.action != "accept" or not answer.data.sure:
        return "kept them"
    await ctx.info(f"deleting {len(NOTES)} notes")
    NOTES.clear()
    return "deleted"


@mcp.resource("notes://{title}")
def note(title: str) -> str:
    """One note, by title."""
    return NOTES.get(title, "")


if __name__ == "__main__":
    mcp.run()
