"""Dependency injection: tool parameters filled by functions (docs/dependencies.md).

    wiremcp run examples/dependencies.py           # stdio
    wiremcp run examples/dependencies.py --http    # http://127.0.0.1:8000/mcp

``database`` is lifespan-scoped (a generator): opened once when the server
starts serving, closed when it stops. ``caller`` and ``audit`` are
request-scoped: they run for each call, once each however many parameters
ask for them. None of the injected parameters is in the tools' inputSchema.
"""

from __future__ import annotations

import sqlite3
from typing import Annotated, Iterator

import wiremcp
from wiremcp.server import Context
from wiremcp.server.depends import Depends

server = wiremcp.Server("notes-di", version="1.0.0")


def database() -> Iterator[sqlite3.Connection]:
    """One connection for the server's lifetime (a pool would be opened the same way)."""
    db = sqlite3.connect(":memory:", check_same_thread=False)
    db.execute("create table notes (owner text, body text)")
    db.execute("create table audit (owner text, action text)")
    try:
        yield db
    finally:
        db.close()


Database = Annotated[sqlite3.Connection, Depends(database)]


def caller(ctx: Context) -> str:
    """Who is calling: the client's name (behind authorization, the token's subject)."""
    info = ctx.client_info or {}
    return str(info.get("name", "anonymous"))


Caller = Annotated[str, Depends(caller)]


def audit(db: Database, who: Caller) -> int:
    """Records the call; the number of calls recorded so far for this caller."""
    db.execute("insert into audit values (?, 'call')", (who,))
    return int(db.execute("select count(*) from audit where owner = ?", (who,)).fetchone()[0])


@server.tool(inline=True)
def add_note(body: str, db: Database, who: Caller, calls: Annotated[int, Depends(audit)]) -> str:
    """Save a note for the caller."""
    db.execute("insert into notes values (?, ?)", (who, body))
    return f"saved for {who} (call {calls})"


@server.tool(inline=True)
def my_notes(db: Database, who: Caller, calls: Annotated[int, Depends(audit)]) -> list[str]:
    """The caller's notes, oldest first."""
    return [row[0] for row in db.execute("select body from notes where owner = ? order by rowid", (who,))]


if __name__ == "__main__":
    wiremcp.run(server)
