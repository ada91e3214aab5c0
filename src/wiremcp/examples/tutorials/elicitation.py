"""Asking the user (docs/tutorials/elicitation.md): a booking tool that asks for what it lacks.

    wiremcp call examples/tutorials/elicitation.py book_table restaurant=Noma
"""

from __future__ import annotations

import dataclasses
from typing import Annotated

import wiremcp


@dataclasses.dataclass
class Party:
    """Who is coming."""

    name: str
    guests: int


@dataclasses.dataclass
class Confirm:
    ok: bool


server = wiremcp.Server("bookings", version="1.0.0")
BOOKED: list[str] = []


@server.tool
def book_table(restaurant: str, party: Annotated[Party, wiremcp.Elicit("Who is the table for?")]) -> str:
    """Book a table; the party is asked for before the body runs (exactly once)."""
    BOOKED.append(f"{restaurant}: {party.name} x{party.guests}")
    return f"Booked {restaurant} for {party.name}, {party.guests} guests."


@server.tool
async def cancel_all(ctx: wiremcp.Context) -> str:
    """Cancel every booking after the user confirms.

    With 2026-07-28 clients the handler runs again from the top when the
    answer arrives, so the cancellation comes after the question.
    """
    answer = await ctx.elicit(f"Cancel all {len(BOOKED)} bookings?", Confirm)
    if answer.action != "accept" or answer.value is None or not answer.value.ok:
        return "Nothing cancelled."
    count = len(BOOKED)
    BOOKED.clear()
    return f"Cancelled {count} bookings."


if __name__ == "__main__":
    wiremcp.run(server)
