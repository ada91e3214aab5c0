"""The server the web inspector tests inspect: plain tools, an elicitation, and hostile text.

Every string a server sends must reach the page as text: the ``hostile`` tool's
description, its result and the ``notes`` resource carry markup that would run
script if the page ever parsed it as HTML (each would set ``window.__pwned``).
"""

from __future__ import annotations

import dataclasses

import wiremcp

server = wiremcp.Server("web-test", version="2.0.0", instructions="A server for the inspector's tests.")

HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script><b>bold</b>'


@server.tool(inline=True)
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool(inline=True)
def add(a: int, b: int, negate: bool = False) -> int:
    """Add two integers."""
    return -(a + b) if negate else a + b


@server.tool(inline=True, description="Returns markup: " + HOSTILE)
def hostile() -> str:
    return HOSTILE


@dataclasses.dataclass
class Person:
    name: str
    age: int


@server.tool
async def greet(ctx: wiremcp.Context) -> str:
    """Ask who is there, then greet them."""
    answer = await ctx.elicit("Who are you?", Person)
    if answer.action != "accept":
        return f"No answer ({answer.action})."
    return f"Hello, {answer.value.name} ({answer.value.age})!"


@server.resource("note://hostile", name="notes", mime_type="text/plain")
def notes() -> str:
    return HOSTILE


@server.prompt
def review(topic: str) -> str:
    """Ask for a review of a topic."""
    return f"Please review {topic}."


if __name__ == "__main__":
    wiremcp.run(server)
