"""A server written the way FastMCP users write them, running on wiremcp with no surprises.

    wiremcp run examples/fastmcp_style.py               # stdio
    wiremcp run examples/fastmcp_style.py --http        # Streamable HTTP

* bare decorators: ``@server.tool``, ``@server.prompt``;
* plain ``def`` tools that block (a database query, a file read, a sleep) run
  in worker threads, so one slow call never delays the others;
* ``ToolError`` messages reach the model; any other exception is masked
  (set ``WIREMCP_MASK_ERRORS=0`` while developing to see them);
* typed elicitation: the form comes from a dataclass and the answer comes back
  as one; ``Elicit`` parameters are gathered before the body, which runs once;
* a lifespan: the database is set up once per process before the first
  request, on stdio and HTTP alike, and what it yields is ``ctx.lifespan``.
"""

from __future__ import annotations

import dataclasses
import os
from contextlib import asynccontextmanager
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Annotated, AsyncIterator, Literal

import wiremcp
from wiremcp import Context, Elicit, ToolError

DB = Path(os.environ.get("NOTES_DB") or Path(tempfile.gettempdir()) / "wiremcp-notes.sqlite3")


@asynccontextmanager
async def lifespan(server: wiremcp.Server) -> AsyncIterator[dict[str, object]]:
    """Once per process: create the table before the first request; what it yields is ``ctx.lifespan``."""
    with sqlite3.connect(DB, timeout=5) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, title TEXT, body TEXT, tag TEXT)")
    yield {"db": DB, "started": time.time()}
    # After the last reply (and before the worker threads stop): close pools, flush caches here.


server = wiremcp.Server("notes", version="1.0.0", instructions="A small notebook kept in SQLite.", lifespan=lifespan)


def _db() -> sqlite3.Connection:
    """One connection per call: each runs in its own worker thread (sqlite3 connections are per thread)."""
    conn = sqlite3.connect(DB, timeout=5)
    conn.execute("CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, title TEXT, body TEXT, tag TEXT)")
    return conn


@server.tool
def add_note(title: str, body: str, tag: str = "misc") -> str:
    """Save a note (a blocking database write, run in a worker thread)."""
    if not title.strip():
        raise ToolError("A note needs a title.")
    with _db() as conn:
        cursor = conn.execute("INSERT INTO notes (title, body, tag) VALUES (?, ?, ?)", (title, body, tag))
    return f"saved note {cursor.lastrowid}"


@server.tool
def search_notes(text: str, limit: int = 10) -> list[dict[str, object]]:
    """Find notes whose title or body contains the text."""
    with _db() as conn:
        rows = conn.execute(
            "SELECT id, title, tag FROM notes WHERE title LIKE ?1 OR body LIKE ?1 ORDER BY id LIMIT ?2",
            (f"%{text}%", limit),
        ).fetchall()
    return [{"id": i, "title": t, "tag": g} for i, t, g in rows]


@server.tool
def slow_report(seconds: float = 1.0) -> str:
    """Pretend to build a report (time.sleep blocks this tool's thread, not the server)."""
    time.sleep(min(seconds, 5.0))
    return f"report ready after {seconds:g} s"


@server.tool
def uptime(ctx: Context) -> str:
    """How long this server process has run (from what the lifespan yielded)."""
    return f"up for {time.time() - float(ctx.lifespan['started']):.0f} s, notes in {ctx.lifespan['db']}"


@dataclasses.dataclass
class Reminder:
    """When and how to remind you."""

    when: str
    channel: Literal["email", "sms"] = "email"
    urgent: bool = False


@server.tool
async def remind(note_id: int, ctx: Context) -> str:
    """Ask the user how to be reminded (typed elicitation), then schedule it."""
    answer = await ctx.elicit(f"How should I remind you about note {note_id}?", Reminder)
    if answer.action != "accept" or answer.value is None:
        return f"No reminder set ({answer.action})."
    reminder = answer.value
    # With 2026-07-28 clients this handler re-runs from the top for each question:
    # side effects (like scheduling) go after the last ctx.elicit, as here.
    return f"Reminder for note {note_id} by {reminder.channel} at {reminder.when}{' (urgent)' if reminder.urgent else ''}."


@server.tool
def delete_all(confirm: Annotated[bool, Elicit("Really delete every note?")]) -> str:
    """Declared input: asked before the body runs, so the deletion happens exactly once."""
    if not confirm:
        return "Nothing deleted."
    with _db() as conn:
        count = conn.execute("DELETE FROM notes").rowcount
    return f"deleted {count} note(s)"


@server.resource("notes://{note_id}")
def note(note_id: int) -> str | None:
    """One note's body (None: no such note, answered -32602)."""
    with _db() as conn:
        row = conn.execute("SELECT body FROM notes WHERE id = ?", (note_id,)).fetchone()
    return None if row is None else str(row[0])


@server.prompt
def summarise(tag: str) -> str:
    """Ask the model to summarise the notes with a tag."""
    return f"Summarise my notes tagged {tag!r}; read them with search_notes first."


if __name__ == "__main__":
    wiremcp.run(server)
