"""A Starlette host application that mounts MCPApp and runs its lifespan (tests/test_lifecycle.py)."""

from __future__ import annotations

import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

sys.path.insert(0, str(Path(__file__).parent))
from lifecycle import server  # noqa: E402

from wiremcp.transports.http import MCPApp  # noqa: E402

mcp = MCPApp(server, path="/mcp")


@asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    # The host's own setup around MCPApp's lifespan (docs/server.md, "Lifespan").
    async with mcp.lifespan(app):
        yield


async def health(request: Any) -> PlainTextResponse:
    return PlainTextResponse("ok")


app = Starlette(routes=[Route("/health", health), Mount("/", app=mcp)], lifespan=lifespan)
