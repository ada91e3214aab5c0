"""Transports: each binding in its own package, with its server and its client side.

* `wiremcp.transports.stdio`: newline-delimited JSON-RPC on a byte stream;
  ``serve_stdio``/``serve_streams`` (server), ``StdioTransport`` (client: a subprocess).
* `wiremcp.transports.http`: Streamable HTTP; ``MCPApp``/``serve_http`` (server, ASGI on
  uvicorn), ``HTTPTransport`` in `wiremcp.transports.http.client` (client).
* `wiremcp.transports.memory`: a `Client` and a `Server` in one process, joined by bytes.

A transport does I/O and framing only. What each message means is decided by
the public names of the layers below: the server side drives a
`wiremcp.server.transport.ServerConnection` (the era of a request, its one reply,
cancellation, legacy sessions, the server's requests to the client), the
client side implements `wiremcp.client.ClientTransport`. No transport imports
a private module of another layer (tests/test_layers.py).

The stdio names are imported on first use, so that importing a transport
package does not load asyncio before it is needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .stdio import DEFAULT_MAX_IN_FLIGHT, LineServer, serve_stdio, serve_streams

__all__ = ["LineServer", "serve_stdio", "serve_streams", "DEFAULT_MAX_IN_FLIGHT"]


def __getattr__(name: str) -> Any:
    """The stdio names, imported on first use (see `wiremcp.transports.stdio`)."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import stdio

    return getattr(stdio, name)
