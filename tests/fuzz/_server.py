"""The server the fuzz targets talk to: typed tools, a resource template, a prompt.

Every tool returns normally for arguments that match its schema, so a -32603
reply can only mean the server failed on an input it should have refused.
"""

from __future__ import annotations

import asyncio
import dataclasses
import enum
from typing import Annotated, Any, Literal, Optional, TypedDict

import wiremcp
from wiremcp import Context, Field


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Span(TypedDict):
    start: int
    end: int


@dataclasses.dataclass
class Point:
    x: float
    y: float
    label: str = ""


def build() -> wiremcp.Server:
    server = wiremcp.Server("fuzz", version="0")

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.tool()
    def add(a: int, b: int = 1) -> int:
        return a + b

    @server.tool()
    def pick(color: Literal["red", "green"], size: Optional[int] = None) -> str:
        return f"{color}:{size}"

    @server.tool()
    def scale(factor: Annotated[float, Field(ge=0, le=10)], flag: bool = False) -> float:
        return factor * 2 if flag else factor

    @server.tool()
    def tags(items: list[str], counts: dict[str, int] | None = None, colors: list[Color] | None = None) -> int:
        return len(items) + len(counts or {}) + len(colors or [])

    @server.tool()
    def point(p: Point, span: Span | None = None, pair: tuple[int, str] | None = None) -> str:
        return f"{p.x},{p.y},{p.label},{span},{pair}"

    @server.tool()
    async def slow(label: str = "slow") -> str:
        await asyncio.sleep(0)
        return label

    @server.tool()
    async def steps(count: Annotated[int, Field(ge=0, le=5)], ctx: Context) -> str:
        for i in range(count):
            ctx.report_progress(i + 1, count)
            await asyncio.sleep(0)
        return "done"

    @server.resource("note://{name}", name="note", mime_type="text/plain")
    def note(name: str) -> str:
        return f"note {name}"

    @server.resource("file:///logs/{+path}{?lines}", name="log", mime_type="text/plain")
    def log(path: str, lines: str = "10") -> str:
        return f"{path}:{lines}"

    @server.prompt()
    def greet(who: str) -> str:
        return f"Hello {who}"

    return server

