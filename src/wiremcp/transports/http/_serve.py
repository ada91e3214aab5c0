"""Serving the MCP endpoint on uvicorn (``pip install 'wiremcp[http]'``).

uvicorn is imported only here, and only when `serve_http` runs. It is set up for the lowest server CPU per
request measured on this package's echo benchmark (see pyproject.toml, extra
``http``): uvloop as the event loop and httptools as the HTTP/1.1 parser when
they are installed, h11 and the standard asyncio loop otherwise; no access
log, no ``Server`` header, no WebSocket support.

It is also set up defensively, with every limit uvicorn offers
(`uvicorn_config` builds the configuration; docs/http.md, "Deploying behind a
reverse proxy"):

* ``limit_concurrency``: past `DEFAULT_LIMIT_CONCURRENCY` open connections
  (or running requests), a new request gets 503 instead of more memory and
  file descriptors (SSE streams hold their connection, so this also bounds
  the open ``subscriptions/listen`` and GET streams);
* ``timeout_keep_alive``: an idle keep-alive connection is closed after
  `DEFAULT_TIMEOUT_KEEP_ALIVE` seconds;
* ``backlog``: at most `DEFAULT_BACKLOG` connections wait to be accepted;
* ``max_head_size``: a request head (request line and header fields) longer
  than `DEFAULT_MAX_HEAD_SIZE` bytes is refused, on either parser: uvicorn's
  ``h11_max_incomplete_event_size`` with h11 (400), `_head_limit` with
  httptools (431), then the connection is closed;
* ``trusted_proxies``: the reverse proxies whose ``X-Forwarded-For`` names
  the client (uvicorn's ``proxy_headers`` and ``forwarded_allow_ips``, on only
  when this is given): the address the per-client caps count without a
  token (`_client_key`). Without it the header is ignored, whoever sends it.

The caps read ``WIREMCP_*`` variables when not given (`_env`). uvicorn
enforces no header count (the head's byte budget bounds it) and no timeout
for a slow request head: a reverse proxy in front (nginx, see docs/deploy.md)
does that. The body has its own limits in `MCPApp` (``max_body_size``,
``read_timeout``; a refused body is read and dropped for a while, `_linger`).

A port in use is said in one line (`address_problem`, shared with the
``wiremcp`` commands): `serve_http` exits with it (status 1), not with
uvicorn's ``[Errno 98] Address already in use``.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from typing import Any, Iterable

from ...protocol import LATEST
from ...server import Server
from ._app import MCPApp
from ._env import from_environment
from ._security import DEFAULT_ALLOWED_HOSTS

__all__ = [
    "serve_http",
    "address_problem",
    "uvicorn_config",
    "GRACEFUL_SHUTDOWN_TIMEOUT",
    "DEFAULT_LIMIT_CONCURRENCY",
    "DEFAULT_TIMEOUT_KEEP_ALIVE",
    "DEFAULT_BACKLOG",
    "DEFAULT_MAX_HEAD_SIZE",
]

#: Seconds in-flight requests get to finish on shutdown (SIGINT/SIGTERM)
#: before they are cancelled. Open ``subscriptions/listen`` streams are first
#: ended gracefully (``Server.close_subscriptions``); without a bound, a
#: stream that does not end would hold the process forever.
GRACEFUL_SHUTDOWN_TIMEOUT = 5

#: Open connections (or running requests) before a new request gets 503: below the
#: common 1024 file-descriptor limit, with room for the process's own files.
DEFAULT_LIMIT_CONCURRENCY = 1000
#: Seconds an idle keep-alive connection stays open (uvicorn's default, stated).
DEFAULT_TIMEOUT_KEEP_ALIVE = 5
#: Connections the kernel queues before they are accepted.
DEFAULT_BACKLOG = 1024
#: Bytes of request head (request line and headers) h11 buffers before refusing it: room for
#: the Mcp-Name and Mcp-Param-* headers of large arguments, far below the 16 MiB body limit.
DEFAULT_MAX_HEAD_SIZE = 64 * 1024

_ANY_ADDRESS = frozenset({"", "0.0.0.0", "::"})


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def serve_http(
    server: Server,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    allowed_hosts: Iterable[str] | None = None,
    log_level: str | None = None,
    announce: bool = True,
    timeout_keep_alive: int = DEFAULT_TIMEOUT_KEEP_ALIVE,
    backlog: int = DEFAULT_BACKLOG,
    legacy_sse: bool = False,
    **options: Any,
) -> None:
    """Serve ``server`` at ``http://host:port/path`` until interrupted.

    ``legacy_sse``: also serve the deprecated 2024-11-05 HTTP+SSE transport at ``/sse`` and
    ``/messages`` (`_legacy_sse`; off by default).

    ``port=0`` picks a free port; the URL actually served is printed to
    stderr once the socket is bound. Unless ``allowed_hosts`` is given, the
    bound host (when it is a name or address other than a wildcard) is
    allowed in ``Host`` besides the local defaults. ``limit_concurrency``,
    ``timeout_keep_alive``, ``backlog`` and ``max_head_size`` are uvicorn's
    limits (see the module docs; ``limit_concurrency=None`` lifts it), as is
    ``trusted_proxies`` (addresses or networks). Other ``options`` go to
    `MCPApp` (``allowed_origins``, ``max_body_size``, ``max_listens_per_client``...).
    The caps not given are read from ``WIREMCP_*`` variables (`_env`).
    """
    options = from_environment(options)
    limit_concurrency = options.pop("limit_concurrency", DEFAULT_LIMIT_CONCURRENCY)
    max_head_size = options.pop("max_head_size", DEFAULT_MAX_HEAD_SIZE)
    trusted_proxies = options.pop("trusted_proxies", None)
    if allowed_hosts is None and host not in _ANY_ADDRESS and _bracketed(host).lower() not in DEFAULT_ALLOWED_HOSTS:
        allowed_hosts = (*DEFAULT_ALLOWED_HOSTS, _bracketed(host))
    try:
        import uvicorn
    except ImportError:
        raise RuntimeError(
            "the HTTP transport needs uvicorn: pip install 'wiremcp[http]'"
        ) from None
    app: Any = MCPApp(server, path=path, allowed_hosts=allowed_hosts, **options)
    if legacy_sse:
        from ._legacy_sse import with_legacy_sse

        app = with_legacy_sse(app, server, path, allowed_hosts, options)
    config = uvicorn_config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        limit_concurrency=limit_concurrency,
        timeout_keep_alive=timeout_keep_alive,
        backlog=backlog,
        max_head_size=max_head_size,
        trusted_proxies=trusted_proxies,
    )
    # Past the server's own drain (shutdown_grace, then its requests are cancelled and answered):
    # uvicorn cancelling them first would log each one's CancelledError traceback.
    config.timeout_graceful_shutdown = max(GRACEFUL_SHUTDOWN_TIMEOUT, math.ceil(server.shutdown_grace) + 1)
    close_streams = getattr(server, "close_subscriptions", None)
    close_sse = app.close_sessions if legacy_sse else None  # HTTP+SSE streams end first too

    class _Uvicorn(uvicorn.Server):
        async def shutdown(self, sockets: Any = None) -> None:
            # End open subscriptions/listen streams with their final result first
            # (subscriptions.mdx, Graceful Closure), so that they finish within the grace period.
            if close_streams is not None:
                close_streams()
            if close_sse is not None:
                close_sse()
            await super().shutdown(sockets=sockets)

    problem = address_problem(host, port)
    if problem is not None:  # one line, as `wiremcp run --http` says it, not uvicorn's "[Errno 98]"
        raise SystemExit(f"wiremcp: {problem}")
    sock = config.bind_socket()
    sock.listen(config.backlog)  # accept connections from the moment the URL is announced
    if announce:
        _announce(server, host, sock.getsockname()[1], path, legacy_sse)
    _Uvicorn(config).run(sockets=[sock])


def address_problem(host: str, port: int, option: str = "the port argument") -> str | None:
    """Why ``host:port`` cannot be bound (as uvicorn binds it), or None when it can.

    A port in use is one sentence naming ``option``, the setting that picks another port
    (``--port`` on the command line): the same for every command and for `serve_http`."""
    if port == 0:
        return None
    import errno
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        return f"cannot bind {host}:{port}: {exc.strerror}"
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
            if exc.errno == errno.EADDRINUSE:
                return f"{shown} is already in use; stop what runs there, or pick another port with {option} (0 picks a free one)"
            return f"cannot bind {shown}: {exc.strerror}"
    return None


def uvicorn_config(
    app: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    log_level: str | None = None,
    limit_concurrency: int | None = DEFAULT_LIMIT_CONCURRENCY,
    timeout_keep_alive: int = DEFAULT_TIMEOUT_KEEP_ALIVE,
    backlog: int = DEFAULT_BACKLOG,
    max_head_size: int = DEFAULT_MAX_HEAD_SIZE,
    trusted_proxies: Iterable[str] | None = None,
) -> Any:
    """The ``uvicorn.Config`` `serve_http` runs ``app`` with: tuned, and with the limits of the module docs."""
    import uvicorn

    return uvicorn.Config(
        app,
        host=host,
        port=port,
        loop="uvloop" if importlib.util.find_spec("uvloop") else "asyncio",
        http=_parser(),
        ws="none",
        lifespan="on",
        interface="asgi3",
        access_log=False,
        log_config=None,  # log through the root logger the caller set up
        log_level=log_level,
        server_header=False,
        # X-Forwarded-For from the trusted proxies only; without any, the middleware is skipped.
        proxy_headers=trusted_proxies is not None,
        forwarded_allow_ips=list(trusted_proxies) if trusted_proxies is not None else [],
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_TIMEOUT,
        limit_concurrency=limit_concurrency,
        timeout_keep_alive=timeout_keep_alive,
        backlog=backlog,
        h11_max_incomplete_event_size=max_head_size,
    )


def _parser() -> str:
    """httptools with the head budget (`_head_limit`) when it is installed, else h11 (bounded by uvicorn)."""
    if importlib.util.find_spec("httptools") is None:
        return "h11"
    from ._head_limit import IMPORT_PATH

    return IMPORT_PATH


def _announce(server: Server, host: str, port: int, path: str, legacy_sse: bool = False) -> None:
    also = f"; HTTP+SSE (2024-11-05) at http://{_bracketed(host)}:{port}/sse" if legacy_sse else ""
    print(
        f"wiremcp: serving {server.name!r} (MCP {LATEST}, Streamable HTTP) at "
        f"http://{_bracketed(host)}:{port}{path}{also}",
        file=sys.stderr,
        flush=True,
    )

