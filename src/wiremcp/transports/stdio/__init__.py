"""The stdio binding (basic/transports/stdio.mdx): newline-delimited JSON-RPC on a byte stream.

Server side: `serve_stdio` (this process's stdin and stdout) and `serve_streams` (any
asyncio stream pair), both built on `LineServer`, which is fed bytes and writes reply
lines, around the server's `ServerConnection`. Client side: `StdioTransport` (in `.client`), a server launched as a subprocess.

`serve_before_loop` answers stdin's first requests that are answered at once
(``server/discover``, ``tools/list``, calls of inline tools; the legacy
handshake) before the event loop starts (`wiremcp.run` calls it first), and
hands its connection to `serve_stdio` (``conn=``). The names are imported on first use (a
module ``__getattr__``), so that it can reply before asyncio is loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._lines import DEFAULT_MAX_IN_FLIGHT, LineServer
    from ._front import serve_before_loop
    from .server import READ_CHUNK, serve_stdio, serve_streams

__all__ = ["LineServer", "serve_stdio", "serve_streams", "serve_before_loop", "DEFAULT_MAX_IN_FLIGHT", "READ_CHUNK"]

_WHERE = {
    "LineServer": "_lines",
    "DEFAULT_MAX_IN_FLIGHT": "_lines",
    "serve_stdio": "server",
    "serve_streams": "server",
    "READ_CHUNK": "server",
    "serve_before_loop": "_front",
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{where}"), name)
