"""A test server for issue 16's features: threaded sync tools, bare decorators, masking, inputs.

Synchronisation, not timing: ``block`` waits on a `threading.Event` that only
``release`` sets, so a test can prove another request is answered while
``block`` still runs. The gate has a safety timeout so a broken server does
not hang the suite forever.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import Annotated, Literal

import wiremcp
from wiremcp import Context, Elicit, Resolve, ToolError

server = wiremcp.Server("features", version="1.0.0")

gate = threading.Event()
#: How many times each tool body ran (the declarative-input tools promise exactly once).
runs: dict[str, int] = {}


@server.tool
def block() -> str:
    """Blocks its worker thread until `release` is called (like time.sleep(2), but deterministic)."""
    gate.wait(30)
    if not gate.is_set():
        return "timed out"
    time.sleep(0)  # a blocking call, as a driver would make
    return "released"


@server.tool
def release() -> str:
    gate.set()
    return "gate open"


@server.tool
def reset() -> str:
    gate.clear()
    runs.clear()
    return "reset"


@server.tool
def echo(text: str) -> str:
    return text


@server.tool(inline=True)
def inline_thread() -> str:
    return threading.current_thread().name


@server.tool
def worker_thread() -> str:
    return threading.current_thread().name


@server.tool
def crash() -> str:
    raise RuntimeError("db connect failed: postgres://admin:hunter2@db.internal/prod")


@server.tool
def refuse() -> str:
    raise ToolError("The date must be in the future.")


@server.resource("features://secret")
def secret() -> str:
    raise RuntimeError("open /etc/hunter2: permission denied")


@server.prompt
def refusing_prompt() -> str:
    raise ToolError("This prompt is switched off.")


@dataclasses.dataclass
class Person:
    """Who the user is."""

    name: str
    age: int
    plan: Literal["free", "pro"] = "free"


@server.tool
async def profile(ctx: Context) -> str:
    """Typed elicitation: the answer comes back as a Person, or as a decline/cancel."""
    answer = await ctx.elicit("Who are you?", Person)
    if answer.action != "accept":
        return f"no profile ({answer.action})"
    person = answer.value
    assert isinstance(person, Person)
    return f"{person.name} is {person.age} on {person.plan}"


@server.tool
def signup(
    email_domain: str,
    name: Annotated[str, Elicit("What is your name?")],
    person: Annotated[Person, Elicit("Tell us about you")],
) -> str:
    """Declared inputs: both asked before the body, which runs once (and counts its runs)."""
    runs["signup"] = runs.get("signup", 0) + 1
    return f"{name} <{name.lower()}@{email_domain}>, {person.age}, run {runs['signup']}"


async def favourite_colour(ctx: Context) -> str:
    """A resolver that depends on an earlier answer: asked in a second round."""
    first = await ctx.elicit("Do you like colours?", bool)
    if not first.accepted or not first.value:
        return "grey"
    colour = await ctx.elicit("Which one?", str)
    return colour.value if colour.accepted and colour.value else "grey"


@server.tool
def paint(colour: Annotated[str, Resolve(favourite_colour)]) -> str:
    runs["paint"] = runs.get("paint", 0) + 1
    return f"painted {colour}, run {runs['paint']}"


@server.tool
def count(name: str) -> str:
    return str(runs.get(name, 0))


@server.tool
async def side_effects(ctx: Context) -> str:
    """The imperative form: the body re-runs from the top on each 2026-07-28 round."""
    runs["side_effects"] = runs.get("side_effects", 0) + 1
    first = await ctx.elicit("First?", str)
    second = await ctx.elicit("Second?", str)
    return f"{first.value} {second.value}, run {runs['side_effects']}"


if __name__ == "__main__":
    wiremcp.run(server)
