"""A server with a lifespan, middleware and a mounted server (tests/test_lifecycle.py).

The lifespan appends ``enter`` and ``exit`` lines to the file named by
``LIFECYCLE_LOG`` (when set), so a test can see that it ran once per process.
"""

from __future__ import annotations

import os
import time
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

from wiremcp import Server
from wiremcp.server import Context, Invocation, Next


def _mark(line: str) -> None:
    path = os.environ.get("LIFECYCLE_LOG")
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


@asynccontextmanager
async def lifespan(server: Server) -> AsyncIterator[dict[str, Any]]:
    _mark("enter")
    try:
        yield {"db": "connected", "pid": os.getpid()}
    finally:
        _mark("exit")


@asynccontextmanager
async def weather_lifespan(server: Server) -> AsyncIterator[str]:
    _mark("weather enter")
    yield "weather-state"
    _mark("weather exit")


server = Server("lifecycle", version="1.0.0", lifespan=lifespan, shutdown_grace=1.0)
seen: list[str] = []


@server.middleware
async def count(call: Invocation, call_next: Next) -> dict[str, Any]:
    seen.append(call.method)
    return await call_next(call)


@server.middleware
async def refuse_blocked(call: Invocation, call_next: Next) -> dict[str, Any]:
    if call.method == "tools/call" and call.params.get("name") == "blocked":
        from wiremcp.jsonrpc import JSONRPCError

        raise JSONRPCError("Forbidden by policy", {"tool": "blocked"}, code=-32001)
    return await call_next(call)


@server.tool
def state(ctx: Context) -> dict[str, Any]:
    """What the lifespan yielded."""
    return {"db": ctx.lifespan["db"], "pid": ctx.lifespan["pid"]}


@server.tool
async def headers(ctx: Context) -> dict[str, Any]:
    """The HTTP request's headers the tool sees (None on stdio)."""
    h = ctx.headers
    if h is None:
        return {"headers": None}
    return {"headers": {"x-test": h.get("X-Test"), "has_accept": "accept" in h, "authorization": h.get("Authorization")}}


@server.tool
def blocked() -> str:
    return "never"


@server.tool
def methods_seen() -> list[str]:
    return list(seen)


@server.tool
def slow(seconds: float) -> str:
    time.sleep(seconds)
    return "done"


weather = Server("weather", lifespan=weather_lifespan)


@weather.tool
def forecast(city: str) -> str:
    """Tomorrow's weather."""
    return f"sunny in {city}"


@weather.resource("weather://cities")
def cities() -> str:
    return "Paris, Oslo"


@weather.prompt
def report(city: str) -> str:
    return f"Write the weather report for {city}."


server.mount(weather, namespace="weather")
