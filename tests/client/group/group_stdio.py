"""A wiremcp stdio server for the group tests (run: ``python -m wiremcp run group_stdio.py``).

Tools: ``echo``; ``whoami`` (the same name as examples/protected.py's, for
collisions); ``grow NAME`` (registers a tool NAME at run time: tools/list
changes); ``die`` (the process exits at once, mid-call). A resource
``notes://stdio``, a template ``notes://stdio/{id}``, a prompt ``greet``
(the same name as the official SSE server's).
"""

from __future__ import annotations

import os

import wiremcp

server = wiremcp.Server("group-stdio", version="1.0.0")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def whoami() -> str:
    """Who this is."""
    return "the stdio server"


@server.tool()
def grow(name: str) -> str:
    """Register a tool NAME that returns its own name."""

    def made() -> str:
        return name

    server.add_tool(made, name=name, description=f"added at run time: {name}")
    return f"added {name}"


@server.tool()
def die() -> str:
    """Exit the process at once: the call never gets a reply."""
    os._exit(3)


@server.resource("notes://stdio", mime_type="text/plain")
def notes() -> str:
    return "stdio notes"


@server.resource("notes://stdio/{id}", mime_type="text/plain")
def note(id: str) -> str:
    return f"stdio note {id}"


@server.prompt()
def greet(who: str) -> str:
    """Greet someone."""
    return f"Hi {who}, from stdio"
