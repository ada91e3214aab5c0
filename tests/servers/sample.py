"""A test server with one tool per behaviour the stdio tests need."""

import asyncio
import sys
from typing import Literal, Optional

import wiremcp
from wiremcp import Context, ToolError

server = wiremcp.Server("sample", version="9.9.9")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def add(a: int, b: int = 1) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def slow(seconds: float, label: str = "slow") -> str:
    """Sleep, then answer with the label."""
    await asyncio.sleep(seconds)
    return label


@server.tool()
def fail(message: str) -> str:
    """Raise a ToolError with the message."""
    raise ToolError(message)


@server.tool()
def crash() -> str:
    """Raise an unexpected exception."""
    raise RuntimeError("boom")


@server.tool()
def shout(text: str) -> str:
    """print() to stdout, which must end up on stderr, not on the wire."""
    print("this must not reach stdout")
    print("stderr marker", file=sys.stderr)
    return text.upper()


@server.tool()
async def steps(count: int, ctx: Context) -> str:
    """Report progress `count` times, then answer."""
    for i in range(count):
        ctx.report_progress(i + 1, count, f"step {i + 1}")
        await asyncio.sleep(0)
    return "done"


@server.tool()
def chatty(level: Literal["debug", "info", "warning", "error"], ctx: Context) -> str:
    """Log one message at every level; the request's logLevel filters them."""
    sent = [lvl for lvl in ("debug", "info", "warning", "error") if ctx.log(lvl, f"a {lvl} message", "chatty")]
    return ",".join(sent)


@server.tool()
def pick(color: Literal["red", "green"], size: Optional[int] = None) -> str:
    """Choose a colour (a Literal) and an optional size."""
    return f"{color}:{size}"


@server.tool()
def whoami(ctx: Context) -> dict:
    """What the server saw in the request's _meta (returned as JSON text)."""
    return {
        "protocolVersion": ctx.protocol_version,
        "clientInfo": ctx.client_info,
        "clientCapabilities": ctx.client_capabilities,
        "trace": ctx.trace_context,
    }
