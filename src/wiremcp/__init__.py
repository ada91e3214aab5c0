"""wiremcp: a strict, fast Model Context Protocol implementation.

    import wiremcp

    server = wiremcp.Server("echo", version="1.0.0")

    @server.tool()
    def echo(text: str) -> str:
        "Return the text unchanged."
        return text

    if __name__ == "__main__":
        wiremcp.run(server)          # stdio

The packages are layers, each importing only those below it, from the sans-I/O
JSON-RPC core (`wiremcp.jsonrpc`) up to the command line (`wiremcp.cli`); the
order and what each holds are in docs/architecture.md, "Layers".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Literal

from .jsonrpc import JSONRPCError
from .protocol import (
    LATEST,
    HeaderMismatch,
    MissingClientCapability,
    ResourceNotFound,
    UnsupportedProtocolVersion,
)
from .server import Server, Tool, ToolError, ToolResult

if TYPE_CHECKING:
    # Seen by type checkers only: at run time these come from `__getattr__` below, on
    # first use, so that a server of tools alone loads neither the client nor the
    # modules of the features it does not use (bench/README.md, "Cold start").
    from .bridge import proxy
    from .client import Client, TaskHandle
    from .group import ClientGroup
    from .server import Context, text
    from .server import Elicit, Elicited, Resolve, Roots, Sample  # input from the client
    from .server import Content, Field, Header  # tool definitions
    from .server import (  # resources, prompts, completion
        Completion,
        assistant,
        audio,
        embedded_resource,
        image,
        resource_link,
        user,
    )

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "LATEST",
    "Server",
    "Context",
    "Tool",
    "ToolError",
    "ToolResult",
    "text",
    "Elicit",
    "Elicited",
    "Sample",
    "Roots",
    "Resolve",
    "Field",
    "Header",
    "Content",
    "run",
    "JSONRPCError",
    "HeaderMismatch",
    "MissingClientCapability",
    "UnsupportedProtocolVersion",
    "ResourceNotFound",
    # resources, prompts, completion
    "Completion",
    "user",
    "assistant",
    "image",
    "audio",
    "embedded_resource",
    "resource_link",
    # the host side (imported on first use: a server never loads it)
    "Client",
    "TaskHandle",
    # a proxy in front of another server, of either era (wiremcp.bridge; imported on first use)
    "proxy",
    # one client over many servers, from a host's mcpServers JSON (wiremcp.group; imported on first use)
    "ClientGroup",
]


if not TYPE_CHECKING:  # hidden from type checkers, so that `wiremcp.Typo` is an error there

    #: Names `wiremcp.server` gives on first use (see its `__getattr__`).
    _FROM_SERVER = frozenset(
        (
            "Context",
            "text",
            "Elicit",
            "Elicited",
            "Resolve",
            "Roots",
            "Sample",
            "Content",
            "Field",
            "Header",
            "Completion",
            "assistant",
            "audio",
            "embedded_resource",
            "image",
            "resource_link",
            "user",
        )
    )

    def __getattr__(name: str) -> object:
        if name in _FROM_SERVER:
            from . import server

            value = getattr(server, name)
            globals()[name] = value
            return value
        if name == "Client":
            from .client import Client

            return Client
        if name == "TaskHandle":
            from .client import TaskHandle

            return TaskHandle
        if name == "proxy":
            from .bridge import proxy

            return proxy
        if name == "ClientGroup":
            from .group import ClientGroup

            return ClientGroup
        raise AttributeError(f"module 'wiremcp' has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})


def run(server: Server, transport: Literal["stdio", "http"] = "stdio", **options: Any) -> None:
    """Serve ``server`` until its input ends (stdio) or until interrupted (HTTP).

    ``transport`` is ``"stdio"`` or ``"http"`` (Streamable HTTP on uvicorn, the
    ``[http]`` extra; options ``host``, ``port``, ``path``, ``allowed_hosts``,
    ``allowed_origins``... as for `wiremcp.transports.http.serve_http`).
    """
    if transport == "http":
        from .transports.http import serve_http  # imported only when asked for

        serve_http(server, **options)
        return
    if transport != "stdio":
        raise ValueError(f"unknown transport {transport!r}; choose 'stdio' or 'http'")
    from .transports.stdio import serve_before_loop

    # A host's first requests (discover, list, inline calls; the legacy handshake) before asyncio is
    # imported; the event loop from the first other message on.
    handoff = serve_before_loop(server, **options)
    if handoff is None:
        return
    import asyncio

    from .transports.stdio import serve_stdio

    # The front's connection goes on serving the stream (with a legacy session it opened).
    first, conn = handoff.first, handoff.conn
    loop_factory = _uvloop_for_pipes()
    if loop_factory is None:
        asyncio.run(serve_stdio(server, first=first, conn=conn, **options))
        return
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        runner.run(serve_stdio(server, first=first, conn=conn, **options))


def _uvloop_for_pipes() -> Callable[[], Any] | None:
    """uvloop's ``new_event_loop`` when it is installed (the ``[http]`` extra) and stdin and
    stdout are both pipes or sockets, as when a client spawns the server: about 2 µs less
    per stdio request. Otherwise None: asyncio's loop, which also serves regular files and
    terminals (libuv aborts on a regular file given as a pipe)."""
    import os
    import stat
    import sys

    try:
        for stream in (sys.stdin, sys.stdout):
            mode = os.fstat(stream.fileno()).st_mode
            if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
                return None
        from uvloop import new_event_loop
    except (ImportError, OSError, ValueError, AttributeError):
        return None
    return new_event_loop
