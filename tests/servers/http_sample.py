"""A test server for the Streamable HTTP tests (tests/transports/test_http.py).

Served by ``wiremcp run tests/servers/http_sample.py --http``; ``app`` is the
same server as an ASGI app with short keep-alive and read timeouts, for
``python -m uvicorn http_sample:app``.
"""

import asyncio
import sys

import wiremcp
from wiremcp import Context, MissingClientCapability
from wiremcp.jsonrpc import InternalError
from wiremcp.transports.http import MCPApp

server = wiremcp.Server("http-sample", version="1.0.0")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
async def steps(count: int, ctx: Context) -> str:
    """Report progress `count` times (an async tool), then answer."""
    for i in range(count):
        ctx.report_progress(i + 1, count, f"step {i + 1}")
        await asyncio.sleep(0.01)
    return "done"


@server.tool()
def chatty(ctx: Context) -> str:
    """Log at two levels from a synchronous tool; the request's logLevel filters them."""
    sent = [lvl for lvl in ("debug", "warning") if ctx.log(lvl, f"a {lvl} message", "chatty")]
    return ",".join(sent)


@server.tool()
async def slow(seconds: float, label: str = "slow") -> str:
    """Sleep, then answer with the label."""
    await asyncio.sleep(seconds)
    return label


@server.tool()
async def hang(label: str) -> str:
    """Wait until cancelled; report the cancellation on stderr (the tests' side channel)."""
    print(f"hang {label}: started", file=sys.stderr, flush=True)
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        print(f"hang {label}: cancelled", file=sys.stderr, flush=True)
        raise
    return label


@server.tool()
async def late_progress(ctx: Context, wait: float = 0.5) -> str:
    """Stay silent for `wait` seconds (past a short keep-alive interval), then report progress once."""
    await asyncio.sleep(wait)
    ctx.report_progress(1, 1)
    return "late"


@server.tool()
async def flood(count: int, size: int, label: str, ctx: Context) -> str:
    """Report progress `count` times with a `size`-character message; report cancellation on stderr."""
    text = "f" * size
    try:
        for i in range(count):
            ctx.report_progress(i + 1, count, text)
            await asyncio.sleep(0)
    except asyncio.CancelledError:
        print(f"flood {label}: cancelled", file=sys.stderr, flush=True)
        raise
    return "flooded"


@server.tool()
def needs_sampling(ctx: Context) -> str:
    """Fail with -32021 unless the client declared the sampling capability."""
    if "sampling" not in ctx.client_capabilities:
        raise MissingClientCapability({"sampling": {}})
    return "sampled"


@server.tool()
def broken() -> str:
    """Fail with a protocol-level internal error (-32603), not a tool error."""
    raise InternalError("Internal error: the backend is unavailable")


@server.tool(
    input_schema={
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "target": {
                "type": "object",
                "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}},
            },
            "query": {"type": "string"},
        },
        "required": ["region"],
    }
)
def routed(region: str, count: int = 0, verbose: bool = False, target: dict | None = None, query: str = "") -> str:
    """A tool whose parameters are mirrored into Mcp-Param-* headers (x-mcp-header)."""
    zone = (target or {}).get("zone")
    return f"{region}|{count}|{verbose}|{zone}|{query}"


@server.resource("test://café/greeting", mime_type="text/plain")
def greeting() -> str:
    """A resource whose URI is not plain ASCII (its Mcp-Name header travels Base64-encoded)."""
    return "bonjour"


@server.prompt()
def greet(name: str) -> str:
    """A prompt, for Mcp-Name on prompts/get."""
    return f"Say hello to {name}."


app = MCPApp(server, keepalive_interval=0.2, read_timeout=0.5, max_body_size=64 * 1024, max_stream_backlog=256 * 1024)
