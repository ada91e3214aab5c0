"""Dependency injection over real transports (tests/server/test_depends.py).

``DEPENDS_EVENTS`` names a file the lifespan-scoped dependencies write to
("open pool", "close pool", ...), so a test sees when they opened and closed.
"""

from __future__ import annotations

import os
from contextlib import asynccontextmanager
from typing import Annotated, AsyncIterator, Iterator

import wiremcp
from wiremcp.server import Context, ToolError, ToolResult
from wiremcp.server.depends import Depends
from wiremcp.server.transform import Arg

EVENTS = os.environ.get("DEPENDS_EVENTS")


def record(line: str) -> None:
    if EVENTS:
        with open(EVENTS, "a") as f:
            f.write(line + "\n")


server = wiremcp.Server("depends", version="1.0.0")
runs = {"request_id": 0, "settings": 0}


async def pool() -> AsyncIterator[dict[str, str]]:
    record("open pool")
    yield {"name": "pool"}
    record("close pool")


def settings() -> Iterator[str]:  # a sync generator: lifespan-scoped too
    runs["settings"] += 1
    record("open settings")
    yield "settings"
    record("close settings")


@asynccontextmanager
async def client(cfg: Annotated[str, Depends(settings)]) -> AsyncIterator[str]:
    record("open client")
    yield f"client({cfg})"
    record("close client")


def request_id(ctx: Context) -> int:
    runs["request_id"] += 1
    return runs["request_id"]


async def label(rid: Annotated[int, Depends(request_id)], p: Annotated[dict[str, str], Depends(pool)]) -> str:
    return f"{p['name']}#{rid}"


def refuse() -> str:
    raise ToolError("no entry today")


def broken() -> str:
    raise KeyError("secret detail")


@server.tool
async def whoami(
    name: str,
    p: Annotated[dict[str, str], Depends(pool)],
    rid: Annotated[int, Depends(request_id)],
    tag: Annotated[str, Depends(label)],
    c: Annotated[str, Depends(client)],
) -> str:
    """Everything injected, request_id asked for twice (here and by label)."""
    return f"{name} {p['name']} {rid} {tag} {c} runs={runs['request_id']} settings={runs['settings']}"


@server.tool
def threaded(x: int, c: Annotated[str, Depends(client)]) -> str:
    """A plain function in a worker thread, its dependency resolved on the loop."""
    return f"{x} {c}"


@server.tool(inline=True)
def refused(x: int, no: Annotated[str, Depends(refuse)]) -> str:
    return no


@server.tool(inline=True)
def masked(x: int, no: Annotated[str, Depends(broken)]) -> str:
    return no


# A transformed tool whose source has dependencies.
def count_only(result: ToolResult) -> str:
    return result.content[0]["text"].split(" runs=")[1]


server.add_transformed(
    "whoami", name="runs", arguments={"name": Arg(hide=True, default="anon")}, output=count_only
)

# Resources, templates, prompts and completers take them too: not URI variables, not prompt arguments.
@server.resource("depends://pool")
async def pool_resource(p: Annotated[dict[str, str], Depends(pool)], tag: Annotated[str, Depends(label)]) -> str:
    return f"{p['name']} {tag}"


@server.resource("depends://greet/{who}")
def greet_resource(who: str, c: Annotated[str, Depends(client)]) -> str:  # a plain function: in a worker thread
    return f"{who} via {c}"


@server.resource("depends://masked")
def masked_resource(no: Annotated[str, Depends(broken)]) -> str:
    return no


@server.prompt
def brief(topic: str, c: Annotated[str, Depends(client)], ctx: Context) -> str:
    return f"{topic} via {c}"


@server.prompt
async def refused_prompt(no: Annotated[str, Depends(refuse)]) -> str:
    return no


@server.complete(prompt="brief", argument="topic")
def topics(value: str, c: Annotated[str, Depends(client)]) -> list[str]:
    return [f"{value}-{c}"]


# A mounted server's dependencies open with this server's lifespan.
child = wiremcp.Server("child")


async def child_resource() -> AsyncIterator[str]:
    record("open child")
    yield "child-resource"
    record("close child")


@child.tool
async def peek(r: Annotated[str, Depends(child_resource)]) -> str:
    return r


server.mount(child, "kid")
