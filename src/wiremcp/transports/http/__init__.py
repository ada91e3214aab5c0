"""Streamable HTTP for MCP 2026-07-28, and 2025-11-25 sessions on the same endpoint, as an ASGI app.

    from wiremcp.transports.http import asgi_app
    app = asgi_app(server)                 # mount it, or: uvicorn module:app

    from wiremcp.transports.http import serve_http
    serve_http(server, host="127.0.0.1", port=8000)   # uvicorn, tuned and limited

`MCPApp` depends on nothing beyond the standard library and orjson (raw
ASGI 3), so it mounts into Starlette, FastAPI or any ASGI server; only
`serve_http` needs uvicorn (the ``[http]`` extra). Nothing here is imported
by the stdio path. The rules each part keeps are in its module docstring:
``_app`` (statuses, JSON vs SSE replies, cancellation on disconnect, the era
of each request), ``_sessions`` (legacy sessions: Mcp-Session-Id, the GET
stream, resumable streams, DELETE, expiry), ``_headers`` (MCP-Protocol-Version,
Mcp-Method, Mcp-Name, Mcp-Param-*), ``_security`` (Host/Origin, Content-Type,
Accept), ``_serve`` (uvicorn's settings and limits), ``_env`` (the caps'
``WIREMCP_*`` variables), ``_client_key`` (whom a per-client cap counts).

What a request means (its era, its one reply, cancellation, a legacy
session's state and the server's requests to the client) is decided by the
server's public transport contract (`wiremcp.server.transport.ServerConnection`,
`Call`, `request_era`); this package does the HTTP around it.
"""

from ._app import (
    DEFAULT_KEEPALIVE_INTERVAL,
    DEFAULT_READ_TIMEOUT,
    DEFAULT_MAX_STREAM_BACKLOG,
    STATUS_BY_CODE,
    MCPApp,
    asgi_app,
)
from ._env import HTTP_ENV, from_environment
from ._headers import decode_header_value, encode_header_value
from ._legacy_sse import LegacySSEApp
from ._security import DEFAULT_ALLOWED_HOSTS, DEFAULT_ALLOWED_ORIGINS, HostGuard
from ._serve import (
    DEFAULT_BACKLOG,
    DEFAULT_LIMIT_CONCURRENCY,
    DEFAULT_MAX_HEAD_SIZE,
    DEFAULT_TIMEOUT_KEEP_ALIVE,
    GRACEFUL_SHUTDOWN_TIMEOUT,
    address_problem,
    serve_http,
    uvicorn_config,
)

__all__ = [
    "MCPApp",
    "LegacySSEApp",
    "asgi_app",
    "serve_http",
    "address_problem",
    "STATUS_BY_CODE",
    "DEFAULT_MAX_STREAM_BACKLOG",
    "DEFAULT_ALLOWED_HOSTS",
    "DEFAULT_ALLOWED_ORIGINS",
    "HostGuard",
    "DEFAULT_READ_TIMEOUT",
    "DEFAULT_KEEPALIVE_INTERVAL",
    "GRACEFUL_SHUTDOWN_TIMEOUT",
    "uvicorn_config",
    "DEFAULT_LIMIT_CONCURRENCY",
    "DEFAULT_TIMEOUT_KEEP_ALIVE",
    "DEFAULT_BACKLOG",
    "DEFAULT_MAX_HEAD_SIZE",
    "encode_header_value",
    "HTTP_ENV",
    "from_environment",
    "decode_header_value",
]
