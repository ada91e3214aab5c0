"""Tags and visibility: a notes server whose admin tools appear only in admin mode.

Run it over stdio or HTTP:

    wiremcp run examples/tags.py
    wiremcp run examples/tags.py --http

* every component carries tags, shown to clients in ``_meta["io.wiremcp/tags"]``;
* ``exclude_tags={"internal"}``: what is tagged ``internal`` is never served;
* ``server.disable(tags={"admin"})`` hides the admin tools, prompt and resource
  at start; the ``admin_mode`` tool switches them on and off at run time, and
  clients are told (``notifications/tools/list_changed`` and the others).
"""

import wiremcp
from wiremcp.server import Context

server = wiremcp.Server("notes", version="1.0.0", exclude_tags={"internal"})
notes: list[str] = ["Buy milk"]


@server.tool(tags={"read"}, inline=True)
def list_notes() -> str:
    """The notes, one per line."""
    return "\n".join(notes) or "(no notes)"


@server.tool(tags={"write"}, inline=True)
def add_note(text: str) -> str:
    """Add a note."""
    notes.append(text)
    return f"{len(notes)} note(s)"


@server.tool(tags={"admin", "write"}, inline=True)
def clear_notes() -> str:
    """Delete every note (admin mode only)."""
    notes.clear()
    return "cleared"


@server.tool(tags={"internal"}, inline=True)
def dump_state() -> str:
    """Never served: excluded by the server's exclude_tags."""
    return repr(notes)


@server.tool
async def admin_mode(on: bool, ctx: Context) -> str:
    """Show (on=true) or hide the admin tools, prompt and resource."""
    if on:
        ctx.server.enable(tags={"admin"})
    else:
        ctx.server.disable(tags={"admin"})
    return f"admin mode {'on' if on else 'off'}"


@server.prompt(tags={"admin"})
def review_notes() -> str:
    """Ask the model to tidy the notes (admin mode only)."""
    return "Merge duplicate notes and delete the finished ones:\n" + "\n".join(notes)


@server.resource("notes://all", tags={"read"}, inline=True)
def all_notes() -> str:
    """Every note."""
    return "\n".join(notes)


@server.resource("notes://audit", tags={"admin"}, inline=True)
def audit() -> str:
    """The audit log (admin mode only)."""
    return f"{len(notes)} note(s) kept"


server.disable(tags={"admin"})  # admin mode is off until a client turns it on

if __name__ == "__main__":
    wiremcp.run(server)
